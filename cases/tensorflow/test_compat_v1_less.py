"""tf.compat.v1.less: elementwise x < y against NumPy's less: broadcasting, NaN, signed zeros, subnormals."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int8, tf.int32, tf.int64, tf.uint8]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_less_values_by_dtype(device, timed, dtype):
    rng = np.random.default_rng(0)
    # Small integers are exact in every dtype, and ties (equal values) are frequent.
    a, b = rng.integers(0, 8, (5, 7)), rng.integers(0, 8, (5, 7))
    out = timed(tf.compat.v1.less, tf.constant(a, dtype), tf.constant(b, dtype))
    assert out.dtype == tf.bool and tuple(out.shape) == (5, 7)
    np.testing.assert_array_equal(out.numpy(), np.less(a, b))


@pytest.mark.parametrize(
    ("xs", "ys"),
    [
        ((0,), (0,)),
        ((3, 0), (1,)),
        ((1, 3, 2), (3, 1)),
        ((2, 1, 5), (2, 3, 1)),
        ((1,), (513,)),
        ((512, 512), (512,)),
    ],
    ids=str,
)
def test_less_shapes_and_broadcast(device, timed, xs, ys):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(xs).astype(np.float32)
    b = rng.standard_normal(ys).astype(np.float32)
    out = timed(tf.compat.v1.less, tf.constant(a), tf.constant(b))
    expected = np.less(a, b)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16], ids=lambda d: d.name)
def test_less_special_values(device, timed, dtype):
    np_dtype = dtype.as_numpy_dtype
    values = np.array([-np.inf, -1.0, -0.0, 0.0, 1.0, np.inf, np.nan], np_dtype)
    a, b = np.meshgrid(values, values, indexing="ij")  # every ordered pair
    out = timed(tf.compat.v1.less, tf.constant(a), tf.constant(b))
    # IEEE: NaN compares false with everything, -0.0 < 0.0 is false.
    np.testing.assert_array_equal(out.numpy(), np.less(a, b))


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16], ids=lambda d: d.name)
def test_less_subnormals(device, timed, dtype):
    np_dtype = dtype.as_numpy_dtype
    tiny = np.finfo(np_dtype).smallest_subnormal
    a = np.array([0.0, tiny, -tiny, tiny, 0.0], np_dtype)
    b = np.array([tiny, 2 * tiny, 0.0, 0.0, -tiny], np_dtype)
    x, y = tf.constant(a), tf.constant(b)
    # The inputs hold the subnormals (so a failure below is the comparison's, not the constant's).
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal(y.numpy(), b)
    out = timed(tf.compat.v1.less, x, y)
    # IEEE comparison of subnormals: [T, T, T, F, F]; a flush-to-zero kernel sees 0 < 0 and says F.
    np.testing.assert_array_equal(out.numpy(), np.less(a, b))


def test_less_python_scalar_and_name(device, timed):
    x = tf.constant([1.0, 2.0, 3.0])
    out = timed(tf.compat.v1.less, x, 2.5, name="lt")
    np.testing.assert_array_equal(out.numpy(), [True, True, False])


def test_less_refuses_mismatched_shapes(device, timed):
    x = tf.constant(np.zeros((2, 5), np.float32))
    y = tf.constant(np.zeros((5, 2), np.float32))
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.compat.v1.less, x, y)


def test_less_refuses_complex(device, timed):
    z = tf.constant([1 + 1j, 2 - 1j], tf.complex64)
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError, tf.errors.NotFoundError)):
        timed(tf.compat.v1.less, z, z)
