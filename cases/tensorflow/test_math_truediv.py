"""tf.math.truediv: Python-3 division (integers are cast to float) against numpy.true_divide."""

import numpy as np
import pytest
import tensorflow as tf

FLOAT_TOL = {tf.float32: 1e-6, tf.float64: 1e-14, tf.float16: 1e-3, tf.bfloat16: 1e-2}
INT_RESULT = {
    tf.int8: tf.float32,
    tf.int16: tf.float32,
    tf.int32: tf.float64,
    tf.int64: tf.float64,
    tf.uint8: tf.float32,
}


@pytest.mark.parametrize("dtype", list(FLOAT_TOL), ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5), (512, 1024)], ids=str)
def test_truediv_float(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = rng.uniform(-10, 10, shape).astype(dtype.as_numpy_dtype)
    y = (rng.uniform(0.5, 4, shape) * rng.choice([-1, 1], shape)).astype(dtype.as_numpy_dtype)
    out = timed(tf.math.truediv, tf.constant(x), tf.constant(y))
    assert out.dtype == dtype and tuple(out.shape) == shape
    expected = np.true_divide(x.astype(np.float64), y.astype(np.float64))
    tol = FLOAT_TOL[dtype]
    np.testing.assert_allclose(out.numpy().astype(np.float64), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", list(INT_RESULT), ids=lambda d: d.name)
def test_truediv_integers_give_float(device, timed, dtype):
    x = np.array([7, 0, 9, 100, 1], dtype.as_numpy_dtype)
    y = np.array([2, 5, 3, 7, 3], dtype.as_numpy_dtype)
    out = timed(tf.math.truediv, tf.constant(x), tf.constant(y))
    assert out.dtype == INT_RESULT[dtype]
    np.testing.assert_allclose(out.numpy(), np.true_divide(x, y), rtol=1e-6)


def test_truediv_broadcast_and_special(device, timed):
    x = tf.constant([[1.0, -1.0, 0.0, np.inf]], tf.float32)
    y = tf.constant([[0.0], [2.0], [-np.inf]], tf.float32)
    out = timed(tf.math.truediv, x, y).numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.true_divide(x.numpy(), y.numpy())
    np.testing.assert_array_equal(out, expected)


def test_truediv_mismatched_dtypes_raise(device, timed):
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError)):
        timed(tf.math.truediv, tf.constant([1.0], tf.float32), tf.constant([1.0], tf.float64))


def test_truediv_gradient(device, timed):
    x = tf.Variable([1.0, 4.0, -3.0], dtype=tf.float64)
    y = tf.Variable([2.0, -0.5, 3.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        z = timed(tf.math.truediv, x, y)
    gx, gy = tape.gradient(z, [x, y])
    np.testing.assert_allclose(gx.numpy(), 1.0 / y.numpy())
    np.testing.assert_allclose(gy.numpy(), -x.numpy() / y.numpy() ** 2)
