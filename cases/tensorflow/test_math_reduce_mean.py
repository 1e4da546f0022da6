"""tf.math.reduce_mean: means over axes against numpy.mean, integer division semantics, keepdims, gradient."""

import numpy as np
import pytest
import tensorflow as tf

TOL = {tf.float32: 1e-5, tf.float64: 1e-12, tf.float16: 2e-3, tf.bfloat16: 2e-2, tf.complex64: 1e-5}


def _data(shape, dtype):
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape)
    if dtype.is_complex:
        data = data + 1j * rng.standard_normal(shape)
    x = tf.cast(tf.constant(data), dtype)
    return x, tf.cast(x, tf.complex128 if dtype.is_complex else tf.float64).numpy()


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize(
    "shape,axis",
    [((9,), None), ((5, 7), 0), ((3, 4, 5), (1, 2)), ((2, 3, 4), -1), ((1024, 1024), 1)],
    ids=["all", "axis0", "two-axes", "negative", "large"],
)
def test_reduce_mean_matches_numpy(device, timed, dtype, shape, axis):
    x, reference = _data(shape, dtype)
    out = timed(tf.math.reduce_mean, x, axis=axis)
    assert out.dtype == dtype
    expected = np.mean(reference, axis=axis)
    assert tuple(out.shape) == np.shape(expected)
    tol = TOL[dtype]
    got = tf.cast(out, tf.complex128 if dtype.is_complex else tf.float64).numpy()
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_reduce_mean_integer_truncates(device, timed):
    x = tf.constant([[1, 2], [3, 6]], tf.int32)
    out = timed(tf.math.reduce_mean, x, axis=1)
    assert out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), [1, 4])  # 1.5 -> 1, 4.5 -> 4


def test_reduce_mean_keepdims(device, timed):
    x, reference = _data((4, 5, 6), tf.float32)
    out = timed(tf.math.reduce_mean, x, axis=[0, 2], keepdims=True)
    assert tuple(out.shape) == (1, 5, 1)
    np.testing.assert_allclose(out.numpy(), reference.mean(axis=(0, 2), keepdims=True), rtol=1e-5)


def test_reduce_mean_empty_is_nan(device, timed):
    out = timed(tf.math.reduce_mean, tf.zeros((0, 3), tf.float32), axis=0)
    assert tuple(out.shape) == (3,) and np.all(np.isnan(out.numpy()))
    out = timed(tf.math.reduce_mean, tf.zeros((0, 3), tf.float32), axis=1)
    assert tuple(out.shape) == (0,)


def test_reduce_mean_half_precision_large_sum(device, timed):
    """A float16 mean of 16384 values of 8.0 (NumPy: 8.0): the sum, 131072, overflows float16
    (max 65504) if the kernel accumulates in float16 rather than float32."""
    out = timed(tf.math.reduce_mean, tf.fill((16384,), tf.constant(8.0, tf.float16)))
    assert out.dtype == tf.float16 and float(out) == 8.0


def test_reduce_mean_gradient(device, timed):
    x, _ = _data((3, 4), tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = timed(tf.math.reduce_mean, x, axis=0)
        loss = tf.reduce_sum(y * tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64))
    grad = tape.gradient(loss, x)
    np.testing.assert_allclose(grad.numpy(), np.tile([1.0, 2.0, 3.0, 4.0], (3, 1)) / 3.0, rtol=1e-15)
