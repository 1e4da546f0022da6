"""tf.nn.depthwise_conv2d: per-channel 2-D convolution against a direct NumPy loop over the filter taps."""

import numpy as np
import pytest
import tensorflow as tf


def _reference(x: np.ndarray, w: np.ndarray, stride: int, padding: str, dilation: int = 1) -> np.ndarray:
    """NHWC input, [kh, kw, C, M] filter: out[..., c * M + m] = sum over taps of x[..., c] * w[.., c, m]."""
    n, h, wd, c = x.shape
    kh, kw, _, m = w.shape
    ekh, ekw = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    if padding == "SAME":
        oh, ow = -(-h // stride), -(-wd // stride)
        ph, pw = max((oh - 1) * stride + ekh - h, 0), max((ow - 1) * stride + ekw - wd, 0)
        x = np.pad(x, ((0, 0), (ph // 2, ph - ph // 2), (pw // 2, pw - pw // 2), (0, 0)))
    else:
        oh, ow = (h - ekh) // stride + 1, (wd - ekw) // stride + 1
    out = np.zeros((n, oh, ow, c, m), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = x[
                :,
                i * dilation : i * dilation + (oh - 1) * stride + 1 : stride,
                j * dilation : j * dilation + (ow - 1) * stride + 1 : stride,
                :,
            ]
            out += patch[..., None].astype(np.float64) * w[i, j].astype(np.float64)
    return out.reshape(n, oh, ow, c * m)


def _data(shape: tuple, fshape: tuple, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.standard_normal(fshape)


def _np(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy()


TOL = {tf.float16: 2e-2, tf.bfloat16: 1e-1, tf.float32: 1e-5, tf.float64: 1e-12}


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16], ids=lambda d: d.name)
def test_depthwise_conv2d_dtypes(device, timed, dtype):
    x, w = _data((2, 7, 9, 3), (3, 3, 3, 2), 0)
    xt, wt = tf.cast(tf.constant(x), dtype), tf.cast(tf.constant(w), dtype)
    out = timed(tf.nn.depthwise_conv2d, xt, wt, strides=[1, 1, 1, 1], padding="SAME")
    assert out.dtype == dtype and tuple(out.shape) == (2, 7, 9, 6)
    # Reference on the rounded inputs: only the accumulation's rounding counts.
    expected = _reference(_np(xt), _np(wt), 1, "SAME")
    np.testing.assert_allclose(_np(out), expected, rtol=TOL[dtype], atol=TOL[dtype] * 4)


@pytest.mark.parametrize(
    ("stride", "padding", "dilation", "mult"),
    [(1, "VALID", 1, 1), (2, "SAME", 1, 1), (2, "VALID", 1, 3), (1, "SAME", 2, 1), (1, "VALID", 2, 2)],
    ids=["valid", "stride2_same", "stride2_valid_mult3", "dilated_same", "dilated_valid_mult2"],
)
def test_depthwise_conv2d_options(device, timed, stride, padding, dilation, mult):
    x, w = _data((1, 11, 8, 4), (3, 2, 4, mult), 1)
    out = timed(
        tf.nn.depthwise_conv2d,
        tf.constant(x),
        tf.constant(w),
        strides=[1, stride, stride, 1],
        padding=padding,
        dilations=[dilation, dilation],
    )
    expected = _reference(x, w, stride, padding, dilation)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    ("shape", "fshape"),
    [
        ((0, 5, 5, 2), (3, 3, 2, 1)),
        ((1, 1, 1, 1), (1, 1, 1, 1)),
        ((3, 13, 17, 5), (5, 3, 5, 1)),
        ((4, 64, 64, 16), (3, 3, 16, 1)),
    ],
    ids=["empty_batch", "1x1", "odd", "1MB"],
)
def test_depthwise_conv2d_shapes(device, timed, shape, fshape):
    """(4, 64, 64, 16) float32 input is 1 MB."""
    x, w = _data(shape, fshape, 2)
    x, w = x.astype(np.float32), w.astype(np.float32)
    out = timed(tf.nn.depthwise_conv2d, tf.constant(x), tf.constant(w), strides=[1, 1, 1, 1], padding="SAME")
    expected = _reference(x, w, 1, "SAME")
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("special", ["nan", "inf"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_depthwise_conv2d_channels_independent(device, timed, dtype, special):
    # Channel multiplier 1: output channel c depends on input channel c only, so a NaN or an inf
    # placed in input channel 0 must leave channels 1 and 2 finite and equal to the reference.
    x, w = _data((1, 6, 6, 3), (3, 3, 3, 1), 3)
    x, w = x.astype(dtype), w.astype(dtype)
    x[0, 2, 3, 0] = np.nan if special == "nan" else np.inf
    out = timed(tf.nn.depthwise_conv2d, tf.constant(x), tf.constant(w), strides=[1, 1, 1, 1], padding="SAME")
    got = out.numpy()
    expected = _reference(x[..., 1:], w[:, :, 1:], 1, "SAME")
    assert np.all(np.isfinite(got[..., 1:]))
    tol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got[..., 1:], expected, rtol=tol, atol=tol)
    assert not np.isfinite(got[0, 2, 3, 0])


def test_depthwise_conv2d_nchw(device, timed):
    # data_format NCHW: same values as NHWC with the axes moved.
    x, w = _data((2, 3, 6, 5), (3, 3, 3, 2), 4)  # N, C, H, W
    out = timed(
        tf.nn.depthwise_conv2d,
        tf.constant(x),
        tf.constant(w),
        strides=[1, 1, 1, 1],
        padding="SAME",
        data_format="NCHW",
    )
    expected = _reference(x.transpose(0, 2, 3, 1), w, 1, "SAME").transpose(0, 3, 1, 2)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-10)


def test_depthwise_conv2d_gradient(device, timed):
    x, w = _data((1, 5, 5, 2), (3, 3, 2, 1), 5)
    xt, wt = tf.constant(x), tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = tf.reduce_sum(timed(tf.nn.depthwise_conv2d, xt, wt, strides=[1, 1, 1, 1], padding="VALID"))
    # d(sum out)/dx[i, j, c] = sum of the filter taps that reach (i, j): a full correlation with ones.
    expected = np.zeros((1, 5, 5, 2))
    for i in range(3):
        for j in range(3):
            expected[0, i : i + 3, j : j + 3, :] += w[i, j, :, 0]
    np.testing.assert_allclose(tape.gradient(loss, xt).numpy(), expected, rtol=1e-12)


def test_depthwise_conv2d_refuses_channel_mismatch(device, timed):
    x, w = _data((1, 5, 5, 3), (3, 3, 2, 1), 6)
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.nn.depthwise_conv2d, tf.constant(x), tf.constant(w), strides=[1, 1, 1, 1], padding="SAME")
