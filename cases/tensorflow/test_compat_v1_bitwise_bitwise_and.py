"""tf.compat.v1.bitwise.bitwise_and: elementwise AND of integer tensors against NumPy's bitwise_and."""

import numpy as np
import pytest
import tensorflow as tf

INT_DTYPES = [tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8, tf.uint16, tf.uint32, tf.uint64]


def _random(dtype: tf.DType, shape: tuple, seed: int) -> np.ndarray:
    info = np.iinfo(dtype.as_numpy_dtype)
    rng = np.random.default_rng(seed)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype.as_numpy_dtype, endpoint=True)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: d.name)
def test_bitwise_and_dtypes(device, timed, dtype):
    a, b = _random(dtype, (5, 7), 0), _random(dtype, (5, 7), 1)
    out = timed(tf.compat.v1.bitwise.bitwise_and, tf.constant(a), tf.constant(b))
    assert out.dtype == dtype and tuple(out.shape) == (5, 7)
    np.testing.assert_array_equal(out.numpy(), np.bitwise_and(a, b))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: d.name)
def test_bitwise_and_extremes(device, timed, dtype):
    # min, max, 0, -1 (all ones for signed types) and their pairwise ANDs: sign bits and full masks.
    info = np.iinfo(dtype.as_numpy_dtype)
    vals = np.array([info.min, info.max, 0, info.max if info.min == 0 else -1, 1], dtype.as_numpy_dtype)
    a, b = np.repeat(vals, len(vals)), np.tile(vals, len(vals))
    out = timed(tf.compat.v1.bitwise.bitwise_and, tf.constant(a), tf.constant(b))
    np.testing.assert_array_equal(out.numpy(), np.bitwise_and(a, b))


@pytest.mark.parametrize("shape", [(0,), (3, 0, 2), (1, 1), (17, 31), (512, 512)], ids=str)
def test_bitwise_and_shapes(device, timed, shape):
    """(512, 512) int32 is 1 MB per operand."""
    a, b = _random(tf.int32, shape, 2), _random(tf.int32, shape, 3)
    out = timed(tf.compat.v1.bitwise.bitwise_and, tf.constant(a), tf.constant(b))
    assert tuple(out.shape) == shape
    np.testing.assert_array_equal(out.numpy(), np.bitwise_and(a, b))


@pytest.mark.parametrize(("shape_a", "shape_b"), [((4, 1), (1, 6)), ((3, 5), (5,)), ((2, 3, 4), ())], ids=str)
def test_bitwise_and_broadcasts(device, timed, shape_a, shape_b):
    a, b = _random(tf.uint16, shape_a, 4), _random(tf.uint16, shape_b, 5)
    out = timed(tf.compat.v1.bitwise.bitwise_and, tf.constant(a), tf.constant(b))
    expected = np.bitwise_and(a, b)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


def test_bitwise_and_identities(device, timed):
    # x & x == x, x & 0 == 0, x & ~x == 0.
    x = _random(tf.int64, (64,), 6)
    pairs = tf.constant(np.stack([x, x, x])), tf.constant(np.stack([x, np.zeros_like(x), ~x]))
    out = timed(tf.compat.v1.bitwise.bitwise_and, *pairs).numpy()
    np.testing.assert_array_equal(out[0], x)
    np.testing.assert_array_equal(out[1:], 0)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (np.array([1.0, 2.0], np.float32), np.array([3.0, 1.0], np.float32)),
        (np.array([True, False]), np.array([True, True])),
        (np.array([1, 2], np.int32), np.array([3, 1], np.int64)),
    ],
    ids=["float32", "bool", "int32_with_int64"],
)
def test_bitwise_and_refuses_non_integer_or_mixed(device, timed, a, b):
    # Only the eight integer types are allowed, and both operands must share one.
    with pytest.raises((tf.errors.InvalidArgumentError, TypeError, ValueError)):
        timed(tf.compat.v1.bitwise.bitwise_and, tf.constant(a), tf.constant(b))
