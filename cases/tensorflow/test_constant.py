"""tf.constant: tensors from Python/NumPy values with dtype inference or conversion, shape
broadcasting of scalars, and errors."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [
    tf.float32,
    tf.float64,
    tf.float16,
    tf.bfloat16,
    tf.int8,
    tf.int32,
    tf.int64,
    tf.uint8,
    tf.bool,
    tf.complex64,
    tf.complex128,
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (3, 4), (2, 0, 5)], ids=str)
def test_constant_from_numpy(device, timed, dtype, shape):
    data = (np.arange(int(np.prod(shape))).reshape(shape) % 5).astype(
        np.float32 if dtype == tf.bfloat16 else dtype.as_numpy_dtype
    )
    out = timed(tf.constant, data, dtype=dtype)
    assert out.dtype == dtype and tuple(out.shape) == shape
    got = tf.cast(out, tf.float32).numpy() if dtype == tf.bfloat16 else out.numpy()
    np.testing.assert_array_equal(got, data)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.int32], ids=lambda d: d.name)
def test_constant_scalar_fills_shape(device, timed, dtype):
    out = timed(tf.constant, 7, dtype=dtype, shape=(3, 2))
    assert tuple(out.shape) == (3, 2) and out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), np.full((3, 2), 7))


def test_constant_reshapes_matching_size(device, timed):
    out = timed(tf.constant, [1, 2, 3, 4, 5, 6], shape=(2, 3))
    np.testing.assert_array_equal(out.numpy(), [[1, 2, 3], [4, 5, 6]])


def test_constant_large(device, timed):
    """A 1024x1024 float32 array (4 MB) is copied exactly."""
    data = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    out = timed(tf.constant, data)
    np.testing.assert_array_equal(out.numpy(), data)


@pytest.mark.parametrize(
    "value,dtype",
    [
        (1, tf.int32),
        (1.0, tf.float32),
        ([True, False], tf.bool),
        ("s", tf.string),
        (np.float64(2.5), tf.float64),
        (np.int64(3), tf.int64),
        (2j, tf.complex128),
    ],
    ids=str,
)
def test_constant_infers_dtype(device, timed, value, dtype):
    out = timed(tf.constant, value)
    assert out.dtype == dtype
    expected = np.array(value.encode()) if isinstance(value, str) else np.array(value)
    np.testing.assert_array_equal(out.numpy(), expected)


def test_constant_edge_values(device, timed):
    out = timed(tf.constant, [np.inf, -np.inf, np.nan, -0.0, 70000.0], dtype=tf.float16).numpy()
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2]) and np.signbit(out[3])
    assert out[4] == np.inf  # beyond float16's range
    assert timed(tf.constant, 2**31 - 1, dtype=tf.int32).numpy() == 2**31 - 1


def test_constant_errors(device, timed):
    with pytest.raises(TypeError):
        timed(tf.constant, 1.5, dtype=tf.int32)
    with pytest.raises(TypeError):
        timed(tf.constant, [1, 2, 3], shape=(2, 2))
    with pytest.raises(ValueError):
        timed(tf.constant, [[1, 2], [3]])
