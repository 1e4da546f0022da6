"""tf.convert_to_tensor: Python, NumPy and tensor inputs to tensors, dtype inference and conversion rules."""

import numpy as np
import pytest
import tensorflow as tf

NP_DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_, np.complex64]


@pytest.mark.parametrize("np_dtype", NP_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (0,), (3, 5), (512, 1024)], ids=str)
def test_convert_numpy_array(device, timed, np_dtype, shape):
    data = (np.arange(int(np.prod(shape))).reshape(shape) % 7).astype(np_dtype)
    out = timed(tf.convert_to_tensor, data)
    assert isinstance(out, tf.Tensor)
    assert out.dtype == tf.as_dtype(np_dtype) and tuple(out.shape) == shape
    np.testing.assert_array_equal(out.numpy(), data)


@pytest.mark.parametrize(
    "value,dtype",
    [
        (3, tf.int32),
        (2.5, tf.float32),
        (True, tf.bool),
        ([[1, 2], [3, 4]], tf.int32),
        ([1.0, 2], tf.float32),
        (b"abc", tf.string),
        (1 + 2j, tf.complex128),
    ],
    ids=str,
)
def test_convert_python_values_infer_dtype(device, timed, value, dtype):
    out = timed(tf.convert_to_tensor, value)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), np.array(value))


@pytest.mark.parametrize("dtype", [tf.float64, tf.float16, tf.bfloat16, tf.int64], ids=lambda d: d.name)
def test_convert_with_requested_dtype(device, timed, dtype):
    out = timed(tf.convert_to_tensor, [1, 2, 3], dtype=dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), [1.0, 2.0, 3.0])


def test_convert_tensor_passthrough_and_dtype_hint(device, timed):
    t = tf.constant([1.0, 2.0], tf.float64)
    same = timed(tf.convert_to_tensor, t)
    np.testing.assert_array_equal(same.numpy(), [1.0, 2.0])
    assert tf.convert_to_tensor(t) is t  # eagerly the very same tensor comes back
    hinted = timed(tf.convert_to_tensor, [1, 2], dtype_hint=tf.float32)
    assert hinted.dtype == tf.float32
    # The hint is soft: a value it cannot take keeps its own dtype.
    assert timed(tf.convert_to_tensor, ["a"], dtype_hint=tf.float32).dtype == tf.string


def test_convert_variable_reads_value(device, timed):
    v = tf.Variable([[1.5, -2.0]], dtype=tf.float32)
    out = timed(tf.convert_to_tensor, v)
    assert isinstance(out, tf.Tensor) and out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [[1.5, -2.0]])


def test_convert_incompatible_raises(device, timed):
    with pytest.raises((TypeError, ValueError)):
        timed(tf.convert_to_tensor, tf.constant([1.0, 2.0]), dtype=tf.int32)
    with pytest.raises((TypeError, ValueError)):
        timed(tf.convert_to_tensor, [1.5, 2.5], dtype=tf.int32)
    with pytest.raises((TypeError, ValueError)):
        timed(tf.convert_to_tensor, [[1, 2], [3]])
