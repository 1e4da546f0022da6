"""tf.nn.conv3d: 3-D convolution (NDHWC) against a NumPy reference, strides, padding, dilation, gradient."""

import numpy as np
import pytest
import tensorflow as tf

TOL = {tf.float32: 1e-4, tf.float64: 1e-10, tf.float16: 2e-2, tf.bfloat16: 5e-2}


def _conv3d_reference(x, w, strides, padding, dilations=(1, 1, 1)):
    """Direct NDHWC cross-correlation with SAME/VALID padding computed as TensorFlow defines it."""
    n, d, h, wd, _ = x.shape
    kd, kh, kw, _, cout = w.shape
    eff = [(k - 1) * r + 1 for k, r in zip((kd, kh, kw), dilations)]
    sizes = (d, h, wd)
    if padding == "SAME":
        outs = [-(-s // st) for s, st in zip(sizes, strides)]
        pads = [max((o - 1) * st + e - s, 0) for o, st, e, s in zip(outs, strides, eff, sizes)]
        x = np.pad(x, [(0, 0)] + [(p // 2, p - p // 2) for p in pads] + [(0, 0)])
    else:
        outs = [(s - e) // st + 1 for s, e, st in zip(sizes, eff, strides)]
    out = np.zeros((n, *outs, cout))
    for a in range(kd):
        for b in range(kh):
            for c in range(kw):
                pa, pb, pc = a * dilations[0], b * dilations[1], c * dilations[2]
                patch = x[
                    :,
                    pa : pa + (outs[0] - 1) * strides[0] + 1 : strides[0],
                    pb : pb + (outs[1] - 1) * strides[1] + 1 : strides[1],
                    pc : pc + (outs[2] - 1) * strides[2] + 1 : strides[2],
                    :,
                ]
                out += np.einsum("ndhwc,co->ndhwo", patch, w[a, b, c])
    return out


def _inputs(xshape, wshape, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xshape)
    w = rng.standard_normal(wshape) / np.sqrt(np.prod(wshape[:4]))
    xt, wt = tf.cast(tf.constant(x), dtype), tf.cast(tf.constant(w), dtype)
    return xt, wt, tf.cast(xt, tf.float64).numpy(), tf.cast(wt, tf.float64).numpy()


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_conv3d_matches_reference(device, timed, dtype, padding):
    x, w, xr, wr = _inputs((2, 5, 6, 7, 3), (3, 2, 3, 3, 4), dtype)
    out = timed(tf.nn.conv3d, x, w, strides=[1, 1, 1, 1, 1], padding=padding)
    assert out.dtype == dtype
    expected = _conv3d_reference(xr, wr, (1, 1, 1), padding)
    assert tuple(out.shape) == expected.shape
    tol = TOL[dtype]
    np.testing.assert_allclose(tf.cast(out, tf.float64).numpy(), expected, rtol=tol, atol=tol * 5)


@pytest.mark.parametrize("strides", [(2, 2, 2), (1, 3, 2)], ids=str)
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_conv3d_strides(device, timed, strides, padding):
    x, w, xr, wr = _inputs((1, 7, 8, 9, 2), (2, 3, 3, 2, 5), tf.float32)
    out = timed(tf.nn.conv3d, x, w, strides=[1, *strides, 1], padding=padding)
    expected = _conv3d_reference(xr, wr, strides, padding)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_conv3d_dilations(device, timed):
    x, w, xr, wr = _inputs((1, 9, 9, 9, 2), (2, 2, 2, 2, 3), tf.float32)
    out = timed(tf.nn.conv3d, x, w, strides=[1, 1, 1, 1, 1], padding="VALID", dilations=[1, 2, 2, 2, 1])
    expected = _conv3d_reference(xr, wr, (1, 1, 1), "VALID", (2, 2, 2))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_conv3d_large_pointwise(device, timed):
    """A 1x1x1 filter is a matmul over channels; 2x16x32x32x16 float32 inputs are 2 MB."""
    x, w, xr, wr = _inputs((2, 16, 32, 32, 16), (1, 1, 1, 16, 8), tf.float32)
    out = timed(tf.nn.conv3d, x, w, strides=[1, 1, 1, 1, 1], padding="SAME")
    np.testing.assert_allclose(
        out.numpy(), np.einsum("ndhwc,co->ndhwo", xr, wr[0, 0, 0]), rtol=1e-4, atol=1e-4
    )


def test_conv3d_empty_batch(device, timed):
    x, w, _, _ = _inputs((0, 4, 4, 4, 2), (2, 2, 2, 2, 3), tf.float32)
    out = timed(tf.nn.conv3d, x, w, strides=[1, 1, 1, 1, 1], padding="VALID")
    assert tuple(out.shape) == (0, 3, 3, 3, 3)


def test_conv3d_gradient(device, timed):
    x, w, xr, wr = _inputs((1, 4, 4, 4, 2), (2, 2, 2, 2, 3), tf.float64)
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        y = timed(tf.nn.conv3d, x, w, strides=[1, 1, 1, 1, 1], padding="VALID")
        loss = tf.reduce_sum(y)
    gx, gw = tape.gradient(loss, [x, w])
    # d(sum)/dw[a,b,c,i,o] = sum of the input window at offset (a,b,c) over channel i.
    expected_gw = np.zeros(wr.shape)
    for a in range(2):
        for b in range(2):
            for c in range(2):
                expected_gw[a, b, c] = xr[:, a : a + 3, b : b + 3, c : c + 3, :].sum(axis=(0, 1, 2, 3))[
                    :, None
                ]
    np.testing.assert_allclose(gw.numpy(), expected_gw, rtol=1e-10)
    assert gx.shape == x.shape
