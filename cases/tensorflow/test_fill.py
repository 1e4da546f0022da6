"""tf.fill: a tensor of a given shape filled with one scalar, dtype taken from the value."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool, tf.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("dims", [(), (0,), (3, 0, 2), (7,), (3, 5, 7), (512, 1024)], ids=str)
def test_fill_matches_numpy(device, timed, dtype, dims):
    value = np.array(True if dtype == tf.bool else 3, dtype=dtype.as_numpy_dtype)
    out = timed(tf.fill, tf.constant(dims, tf.int32, shape=(len(dims),)), tf.constant(value))
    assert out.dtype == dtype and tuple(out.shape) == dims
    np.testing.assert_array_equal(out.numpy(), np.full(dims, value, dtype=dtype.as_numpy_dtype))


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan, -0.0, 1e-45], ids=str)
def test_fill_special_values(device, timed, value):
    # The scalar comes from a NumPy array: tf.constant of a Python float may be served from
    # TensorFlow's eager scalar cache, which matches by == and so hands back a cached +0.0 for -0.0
    # once any earlier code made a 0.0 in this process.
    scalar = tf.constant(np.array(value, np.float32))
    assert np.signbit(scalar.numpy()) == np.signbit(np.float32(value))
    out = timed(tf.fill, tf.constant([4, 3]), scalar).numpy()
    np.testing.assert_array_equal(out, np.full((4, 3), value, np.float32))
    np.testing.assert_array_equal(np.signbit(out), np.signbit(np.full((4, 3), value, np.float32)))


def test_fill_string(device, timed):
    out = timed(tf.fill, tf.constant([2, 2]), tf.constant("ab"))
    assert out.dtype == tf.string
    np.testing.assert_array_equal(out.numpy(), np.full((2, 2), b"ab", dtype=object))


def test_fill_rejects_non_scalar_and_negative(device, timed):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.fill, tf.constant([2, 2]), tf.constant([1.0, 2.0]))
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.fill, tf.constant([2, -1]), tf.constant(1.0))


def test_fill_gradient_sums(device, timed):
    value = tf.Variable(2.0, dtype=tf.float64)
    with tf.GradientTape() as tape:
        out = timed(tf.fill, tf.constant([3, 4]), value)
        loss = tf.reduce_sum(out * tf.constant(np.arange(12.0).reshape(3, 4)))
    assert tape.gradient(loss, value).numpy() == pytest.approx(66.0)
