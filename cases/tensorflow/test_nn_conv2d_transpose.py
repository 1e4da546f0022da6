"""tf.nn.conv2d_transpose: the adjoint of conv2d, checked against a NumPy scatter reference and
<conv2d(x), y> == <x, conv2d_transpose(y)>."""

import numpy as np
import pytest
import tensorflow as tf

TOL = {tf.float32: 1e-4, tf.float64: 1e-10, tf.float16: 2e-2, tf.bfloat16: 6e-2}


def _transpose_reference(y, w, out_hw, strides, padding):
    """Scatter every input pixel through the filter (NHWC, filter [kh, kw, out_c, in_c])."""
    n, h, wd, _ = y.shape
    kh, kw, cout, _ = w.shape
    oh, ow = out_hw
    if padding == "SAME":
        pad_h = max((h - 1) * strides[0] + kh - oh, 0)
        pad_w = max((wd - 1) * strides[1] + kw - ow, 0)
        top, left = pad_h // 2, pad_w // 2
    else:
        top = left = 0
    full = np.zeros((n, (h - 1) * strides[0] + kh + oh, (wd - 1) * strides[1] + kw + ow, cout))
    for i in range(h):
        for j in range(wd):
            contribution = np.einsum("nc,abdc->nabd", y[:, i, j, :], w)
            full[:, i * strides[0] : i * strides[0] + kh, j * strides[1] : j * strides[1] + kw, :] += (
                contribution
            )
    return full[:, top : top + oh, left : left + ow, :]


def _inputs(yshape, wshape, dtype):
    rng = np.random.default_rng(0)
    y = tf.cast(tf.constant(rng.standard_normal(yshape)), dtype)
    w = tf.cast(tf.constant(rng.standard_normal(wshape) / np.sqrt(np.prod(wshape))), dtype)
    return y, w, tf.cast(y, tf.float64).numpy(), tf.cast(w, tf.float64).numpy()


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize(
    "strides,padding,out_hw",
    [
        ((1, 1), "VALID", (7, 8)),
        ((2, 2), "SAME", (10, 12)),
        ((2, 3), "VALID", (11, 19)),
        ((1, 1), "SAME", (5, 6)),
    ],
    ids=["s1-valid", "s2-same", "s23-valid", "s1-same"],
)
def test_conv2d_transpose_matches_reference(device, timed, dtype, strides, padding, out_hw):
    y, w, yr, wr = _inputs((2, 5, 6, 3), (3, 3, 4, 3), dtype)
    out = timed(tf.nn.conv2d_transpose, y, w, output_shape=[2, *out_hw, 4], strides=strides, padding=padding)
    assert out.dtype == dtype and tuple(out.shape) == (2, *out_hw, 4)
    expected = _transpose_reference(yr, wr, out_hw, strides, padding)
    tol = TOL[dtype]
    np.testing.assert_allclose(tf.cast(out, tf.float64).numpy(), expected, rtol=tol, atol=tol * 5)


def test_conv2d_transpose_is_adjoint_of_conv2d(device, timed):
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((1, 9, 9, 2)))
    w = tf.constant(rng.standard_normal((3, 3, 2, 5)))
    y = tf.constant(rng.standard_normal((1, 5, 5, 5)))
    forward = tf.nn.conv2d(x, w, strides=2, padding="SAME")
    back = timed(tf.nn.conv2d_transpose, y, w, output_shape=[1, 9, 9, 2], strides=2, padding="SAME")
    np.testing.assert_allclose(
        tf.reduce_sum(forward * y).numpy(), tf.reduce_sum(x * back).numpy(), rtol=1e-10
    )


def test_conv2d_transpose_dilation(device, timed):
    """Equivalent to a transposed convolution with a zero-stuffed filter."""
    y, w, yr, wr = _inputs((1, 4, 4, 2), (2, 2, 3, 2), tf.float64)
    out = timed(
        tf.nn.conv2d_transpose, y, w, output_shape=[1, 6, 6, 3], strides=1, padding="VALID", dilations=2
    )
    dilated = np.zeros((3, 3, 3, 2))
    dilated[::2, ::2] = wr
    np.testing.assert_allclose(
        out.numpy(), _transpose_reference(yr, dilated, (6, 6), (1, 1), "VALID"), rtol=1e-10
    )


def test_conv2d_transpose_large(device, timed):
    """Upsampling 8x64x64x16 float32 (2 MB) by 2 with a 4x4 kernel."""
    y, w, yr, wr = _inputs((8, 64, 64, 16), (4, 4, 8, 16), tf.float32)
    out = timed(tf.nn.conv2d_transpose, y, w, output_shape=[8, 128, 128, 8], strides=2, padding="SAME")
    assert tuple(out.shape) == (8, 128, 128, 8)
    expected = _transpose_reference(yr[:1], wr, (128, 128), (2, 2), "SAME")
    np.testing.assert_allclose(out.numpy()[:1], expected, rtol=1e-3, atol=1e-4)


def test_conv2d_transpose_empty_batch(device, timed):
    y, w, _, _ = _inputs((0, 3, 3, 2), (2, 2, 4, 2), tf.float32)
    out = timed(tf.nn.conv2d_transpose, y, w, output_shape=[0, 4, 4, 4], strides=1, padding="VALID")
    assert tuple(out.shape) == (0, 4, 4, 4)


def test_conv2d_transpose_bad_output_shape_raises(device, timed):
    y, w, _, _ = _inputs((1, 3, 3, 2), (2, 2, 4, 2), tf.float32)
    # The oneDNN CPU kernel reports this as AbortedError, the Eigen one as InvalidArgumentError.
    with pytest.raises((ValueError, tf.errors.OpError)):
        timed(tf.nn.conv2d_transpose, y, w, output_shape=[1, 9, 9, 4], strides=1, padding="VALID")
