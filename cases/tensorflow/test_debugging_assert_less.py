"""tf.debugging.assert_less: passes iff x < y elementwise (with broadcasting), else raises."""

import numpy as np
import pytest
import tensorflow as tf


def _checked(x, y, **kwargs):
    """assert_less as documented for tf.function: a control dependency of what follows. Eagerly the
    check runs (and raises) at once; compiled, the assertion op must be honoured inside the graph."""
    with tf.control_dependencies([tf.debugging.assert_less(x, y, **kwargs)]):
        return tf.identity(x)


DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_assert_less_passes(device, timed, dtype):
    x = tf.constant([[1, 2, 3], [-4, 0, 5]], dtype)
    y = tf.constant([[2, 3, 4], [-3, 1, 6]], dtype)
    out = timed(_checked, x, y)
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), tf.cast(x, tf.float64).numpy())
    assert tf.debugging.assert_less(x, y) is None  # eagerly a passing check returns None


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_assert_less_raises_on_equal_or_greater(device, timed, dtype):
    x = tf.constant([1, 5, 3], dtype)
    y = tf.constant([2, 5, 4], dtype)  # the middle element is equal: not strictly less
    with pytest.raises(tf.errors.InvalidArgumentError, match="custom message"):
        timed(_checked, x, y, message="custom message")


def test_assert_less_broadcasts(device, timed):
    x = tf.constant([[0.0], [1.0], [2.0]])
    np.testing.assert_array_equal(timed(_checked, x, tf.constant([3.0, 2.5])).numpy(), x.numpy())
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(_checked, x, tf.constant([3.0, 1.5]))


def test_assert_less_empty_passes(device, timed):
    assert tuple(timed(_checked, tf.zeros((0,)), tf.zeros((0,))).shape) == (0,)


def test_assert_less_nan_fails(device, timed):
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(_checked, tf.constant([np.nan, 0.0]), tf.constant([1.0, 1.0]))


def test_assert_less_large(device, timed):
    """512x1024 float32 (2 MB) with the violation in the very last element."""
    x = np.random.default_rng(0).uniform(0, 1, (512, 1024)).astype(np.float32)
    y = x + 1.0
    np.testing.assert_array_equal(timed(_checked, tf.constant(x), tf.constant(y)).numpy(), x)
    y[-1, -1] = x[-1, -1]
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(_checked, tf.constant(x), tf.constant(y))


def test_assert_less_incompatible_shapes_raise(device, timed):
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(_checked, tf.zeros((2,)), tf.ones((3,)))
