"""tf.compat.v1.nn.fused_batch_norm: normalized output and batch/running statistics against NumPy."""

import numpy as np
import pytest
import tensorflow as tf

EPS = 0.001


def _np(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy()


def _inputs(shape: tuple, channels: int, seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 2.0 + 0.5
    return x, rng.uniform(0.5, 1.5, channels), rng.standard_normal(channels)


def _train_reference(x: np.ndarray, scale: np.ndarray, offset: np.ndarray, axes: tuple) -> tuple:
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    shape = [1] * x.ndim
    shape[next(i for i in range(x.ndim) if i not in axes)] = -1
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPS) * scale.reshape(shape) + offset.reshape(
        shape
    )
    n = x.size // mean.size
    # The returned batch variance carries Bessel's correction; y uses the biased one.
    return y, mean, var * n / max(n - 1, 1)


TOL = {tf.float16: 2e-2, tf.bfloat16: 8e-2, tf.float32: 1e-4}


@pytest.mark.parametrize("dtype", [tf.float32, tf.float16, tf.bfloat16], ids=lambda d: d.name)
def test_fused_batch_norm_training(device, timed, dtype):
    x, scale, offset = _inputs((4, 5, 6, 3), 3, 0)
    xt = tf.cast(tf.constant(x), dtype)
    y, mean, var = timed(
        tf.compat.v1.nn.fused_batch_norm, xt, tf.constant(scale, tf.float32), tf.constant(offset, tf.float32)
    )
    assert y.dtype == dtype and tuple(y.shape) == x.shape
    assert mean.dtype == tf.float32 and tuple(mean.shape) == (3,)
    ey, emean, evar = _train_reference(_np(xt), scale, offset, (0, 1, 2))
    np.testing.assert_allclose(_np(y), ey, rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(mean.numpy(), emean, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(var.numpy(), evar, rtol=1e-4)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float16], ids=lambda d: d.name)
def test_fused_batch_norm_inference(device, timed, dtype):
    x, scale, offset = _inputs((3, 4, 4, 5), 5, 1)
    rng = np.random.default_rng(2)
    pmean, pvar = rng.standard_normal(5), rng.uniform(0.5, 3.0, 5)
    xt = tf.cast(tf.constant(x), dtype)
    args = [tf.constant(a, tf.float32) for a in (scale, offset, pmean, pvar)]
    y, mean, var = timed(tf.compat.v1.nn.fused_batch_norm, xt, *args, is_training=False)
    expected = (_np(xt) - pmean) / np.sqrt(pvar + EPS) * scale + offset
    np.testing.assert_allclose(_np(y), expected, rtol=TOL[dtype], atol=TOL[dtype])
    # In inference the given statistics come back unchanged.
    np.testing.assert_allclose(mean.numpy(), pmean.astype(np.float32))
    np.testing.assert_allclose(var.numpy(), pvar.astype(np.float32))


@pytest.mark.parametrize("fmt", ["NCHW", "NDHWC", "NCDHW"])
def test_fused_batch_norm_layouts(device, timed, fmt):
    shape = {"NCHW": (2, 3, 5, 4), "NDHWC": (2, 3, 4, 5, 3), "NCDHW": (2, 3, 3, 4, 5)}[fmt]
    channel_axis = fmt.index("C")
    x, scale, offset = _inputs(shape, 3, 3)
    x = x.astype(np.float32)
    axes = tuple(i for i in range(x.ndim) if i != channel_axis)
    y, mean, var = timed(
        tf.compat.v1.nn.fused_batch_norm,
        tf.constant(x),
        tf.constant(scale, tf.float32),
        tf.constant(offset, tf.float32),
        data_format=fmt,
    )
    ey, emean, evar = _train_reference(x.astype(np.float64), scale, offset, axes)
    np.testing.assert_allclose(y.numpy(), ey, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean.numpy(), emean, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(var.numpy(), evar, rtol=1e-4)


def test_fused_batch_norm_exponential_average(device, timed):
    x, scale, offset = _inputs((8, 3, 3, 4), 4, 4)
    x = x.astype(np.float32)
    rmean, rvar = np.full(4, 2.0, np.float32), np.full(4, 5.0, np.float32)
    y, mean, var = timed(
        tf.compat.v1.nn.fused_batch_norm,
        tf.constant(x),
        tf.constant(scale, tf.float32),
        tf.constant(offset, tf.float32),
        tf.constant(rmean),
        tf.constant(rvar),
        exponential_avg_factor=0.3,
    )
    ey, emean, evar = _train_reference(x.astype(np.float64), scale, offset, (0, 1, 2))
    np.testing.assert_allclose(y.numpy(), ey, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean.numpy(), 0.7 * rmean + 0.3 * emean, rtol=1e-5)
    np.testing.assert_allclose(var.numpy(), 0.7 * rvar + 0.3 * evar, rtol=1e-5)


@pytest.mark.parametrize("shape", [(1, 1, 1, 2), (3, 5, 7, 3), (16, 32, 32, 16)], ids=["1x1", "odd", "1MB"])
def test_fused_batch_norm_shapes(device, timed, shape):
    """(16, 32, 32, 16) float32 is 1 MB. A single element per channel has zero variance: y = offset."""
    x, scale, offset = _inputs(shape, shape[-1], 5)
    x = x.astype(np.float32)
    y, mean, _ = timed(
        tf.compat.v1.nn.fused_batch_norm,
        tf.constant(x),
        tf.constant(scale, tf.float32),
        tf.constant(offset, tf.float32),
    )
    ey, emean, _ = _train_reference(x.astype(np.float64), scale, offset, (0, 1, 2))
    np.testing.assert_allclose(y.numpy(), ey, rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(mean.numpy(), emean, rtol=1e-4, atol=1e-5)


def test_fused_batch_norm_empty_batch(device, timed):
    x = np.zeros((0, 3, 4, 2), np.float32)
    y, mean, var = timed(tf.compat.v1.nn.fused_batch_norm, tf.constant(x), tf.ones([2]), tf.zeros([2]))
    assert tuple(y.shape) == (0, 3, 4, 2) and tuple(mean.shape) == (2,) and tuple(var.shape) == (2,)


def test_fused_batch_norm_gradients(device, timed):
    # sum(y) = N * offset per channel whatever x and scale are: d/dx = 0, d/dscale = 0, d/doffset = N.
    x, scale, offset = _inputs((2, 3, 4, 3), 3, 6)
    xt, st, ot = tf.constant(x, tf.float32), tf.constant(scale, tf.float32), tf.constant(offset, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch([xt, st, ot])
        y, _, _ = timed(tf.compat.v1.nn.fused_batch_norm, xt, st, ot)
        loss = tf.reduce_sum(y)
    gx, gs, go = tape.gradient(loss, [xt, st, ot])
    np.testing.assert_allclose(gx.numpy(), 0.0, atol=1e-5)
    np.testing.assert_allclose(gs.numpy(), 0.0, atol=1e-4)
    np.testing.assert_allclose(go.numpy(), [24.0, 24.0, 24.0])


@pytest.mark.parametrize("case", ["float64", "rank3"])
def test_fused_batch_norm_refusals(device, timed, case):
    # x must be half, bfloat16 or float32 (the op's types) and 4-D or 5-D (the docstring).
    if case == "float64":
        x, s = tf.zeros([2, 2, 2, 2], tf.float64), tf.ones([2], tf.float64)
    else:
        x, s = tf.zeros([2, 2, 2]), tf.ones([2])
    with pytest.raises((ValueError, TypeError, tf.errors.InvalidArgumentError)):
        timed(tf.compat.v1.nn.fused_batch_norm, x, s, tf.zeros_like(s))
