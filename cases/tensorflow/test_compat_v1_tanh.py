"""tf.compat.v1.tanh: elementwise hyperbolic tangent against NumPy's float64 tanh, edge values, gradient."""

import numpy as np
import pytest
import tensorflow as tf

# Relative tolerance per dtype: a few units in the last place of each format.
TOLERANCE = {tf.float32: 1e-6, tf.float64: 1e-14, tf.float16: 2e-3, tf.bfloat16: 1.6e-2}


def to_f64(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy()  # bfloat16 has no NumPy comparison of its own


@pytest.mark.parametrize("dtype", list(TOLERANCE), ids=lambda d: d.name)
def test_tanh_values_by_dtype(device, timed, dtype):
    data = np.random.default_rng(0).uniform(-6.0, 6.0, (7, 13))
    x = tf.constant(data, dtype)
    out = timed(tf.compat.v1.tanh, x)
    assert out.dtype == dtype and tuple(out.shape) == (7, 13)
    # Reference from the input as rounded to the dtype, so only the op's own error counts.
    expected = np.tanh(to_f64(x))
    np.testing.assert_allclose(to_f64(out), expected, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype] * 1e-3)


@pytest.mark.parametrize("shape", [(0,), (3, 0, 5), (1,), (257,), (512, 512)], ids=str)
def test_tanh_shapes(device, timed, shape):
    data = np.random.default_rng(1).standard_normal(shape).astype(np.float32) * 3
    out = timed(tf.compat.v1.tanh, tf.constant(data))
    assert tuple(out.shape) == shape and out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy(), np.tanh(data.astype(np.float64)), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16], ids=lambda d: d.name)
def test_tanh_edge_values(device, timed, dtype):
    np_dtype = dtype.as_numpy_dtype
    data = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 40.0, -40.0], np_dtype)
    out = timed(tf.compat.v1.tanh, tf.constant(data)).numpy()
    np.testing.assert_array_equal(out[[0, 1, 4, 5, 6]], [1.0, -1.0, 0.0, 1.0, -1.0])
    assert np.isnan(out[2])
    assert out[3] == 0.0 and np.signbit(out[3])  # tanh is odd: -0.0 stays -0.0
    assert not np.signbit(out[4])


def test_tanh_odd_and_bounded(device, timed):
    half = np.linspace(0.0, 20.0, 2001)
    data = np.concatenate([-half[:0:-1], half])  # exactly symmetric inputs (linspace is not)
    out = timed(tf.compat.v1.tanh, tf.constant(data)).numpy()
    np.testing.assert_array_equal(out, -out[::-1])  # odd symmetry holds exactly
    assert np.all(np.abs(out) <= 1.0)
    # Not monotone to the ulp near saturation (|x| ~ 17.7 rounds to 1.0 or not), but within 1e-14.
    np.testing.assert_allclose(out, np.tanh(data), rtol=1e-14, atol=0)


@pytest.mark.parametrize("dtype", [tf.complex64, tf.complex128], ids=lambda d: d.name)
def test_tanh_complex(device, timed, dtype):
    data = np.array([0.5 + 0.25j, -1.0 + 2.0j, 3.0 - 0.5j], dtype.as_numpy_dtype)
    out = timed(tf.compat.v1.tanh, tf.constant(data))
    assert out.dtype == dtype
    rtol = 1e-5 if dtype == tf.complex64 else 1e-13
    np.testing.assert_allclose(out.numpy(), np.tanh(data.astype(np.complex128)), rtol=rtol)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
def test_tanh_gradient(device, timed, dtype):
    data = np.array([-3.0, -0.5, 0.0, 0.7, 2.0])
    x = tf.constant(data, dtype)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = timed(tf.compat.v1.tanh, x)
    grad = tape.gradient(y, x)
    rtol = 1e-6 if dtype == tf.float32 else 1e-14
    np.testing.assert_allclose(grad.numpy(), 1.0 - np.tanh(data) ** 2, rtol=rtol, atol=rtol)


def test_tanh_refuses_integers(device, timed):
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError, tf.errors.NotFoundError)):
        timed(tf.compat.v1.tanh, tf.constant([1, 2], tf.int32))
