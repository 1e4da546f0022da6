"""tf.numpy_function: wraps a NumPy function as an op; values, dtypes, statefulness and shapes."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.int32, tf.int64]


def _sum_of_products(a, b):
    return (a * b + a).astype(a.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5), (512, 1024)], ids=str)
def test_numpy_function_values(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    a_data = (rng.integers(-5, 5, shape)).astype(dtype.as_numpy_dtype)
    b_data = (rng.integers(-5, 5, shape)).astype(dtype.as_numpy_dtype)
    out = timed(tf.numpy_function, _sum_of_products, [tf.constant(a_data), tf.constant(b_data)], dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), _sum_of_products(a_data, b_data))


def test_numpy_function_receives_ndarrays_and_returns_several(device, timed):
    seen = []

    def split(x):
        seen.append(type(x))
        return x.min(), x.max().astype(np.int64)

    low, high = timed(tf.numpy_function, split, [tf.constant([3, -2, 9], tf.int32)], [tf.int32, tf.int64])
    assert seen and all(t is np.ndarray for t in seen)
    assert low.dtype == tf.int32 and high.dtype == tf.int64
    assert int(low) == -2 and int(high) == 9


def test_numpy_function_output_dtype_checked_in_graph(device, timed):
    """In a graph the declared Tout is enforced (eagerly the ndarray is returned as it is)."""

    @tf.function
    def wrong(x):
        return tf.numpy_function(lambda v: v.astype(np.float64), [x], tf.float32)

    with pytest.raises(tf.errors.InvalidArgumentError, match="is double, but expects float"):
        timed(wrong, tf.constant([1.0], tf.float32))


def test_numpy_function_error_propagates(device, timed):
    def fail(x):
        raise ValueError("boom from numpy")

    # Eagerly the Python exception itself comes back; in a graph it is an InvalidArgumentError.
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="boom from numpy"):
        timed(tf.numpy_function, fail, [tf.constant(1.0)], tf.float32)


def test_numpy_function_string_input(device, timed):
    out = timed(
        tf.numpy_function,
        lambda s: np.char.upper(s.astype(str)).astype(bytes),
        [tf.constant([b"ab", b"c"])],
        tf.string,
    )
    np.testing.assert_array_equal(out.numpy(), [b"AB", b"C"])
