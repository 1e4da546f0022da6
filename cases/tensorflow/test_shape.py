"""tf.shape: the runtime shape as an int32/int64 vector, against NumPy's shape."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.uint8, tf.bool, tf.complex64]
SHAPES = [(), (0,), (0, 3), (3, 5, 7), (1, 1, 1, 1, 2), (512, 512)]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_shape_of_dtypes(device, timed, dtype):
    x = tf.zeros((2, 3, 5), dtype)
    out = timed(tf.shape, x)
    assert out.dtype == tf.int32 and tuple(out.shape) == (3,)
    np.testing.assert_array_equal(out.numpy(), [2, 3, 5])


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("out_type", [tf.int32, tf.int64], ids=lambda d: d.name)
def test_shape_of_shapes(device, timed, shape, out_type):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = timed(tf.shape, tf.constant(data), out_type=out_type)
    assert out.dtype == out_type and tuple(out.shape) == (len(shape),)
    np.testing.assert_array_equal(out.numpy(), np.array(data.shape, np.int64))


def test_shape_ignores_values(device, timed):
    """NaN, inf and signed zeros are data, not shape: only the extents come back."""
    data = np.array([[np.nan, np.inf, -0.0], [-np.inf, 0.0, 1.0]], np.float32)
    np.testing.assert_array_equal(timed(tf.shape, tf.constant(data)).numpy(), [2, 3])


def test_shape_of_sliced_result(device, timed):
    """Inside the routed function the shape follows a computed tensor (a reshape and a strided slice here)."""

    def masked_shape(x: tf.Tensor) -> tf.Tensor:
        return tf.shape(tf.reshape(x, (-1, 4))[1:, ::2])

    out = timed(masked_shape, tf.zeros((6, 10)))
    np.testing.assert_array_equal(out.numpy(), [14, 2])


def test_shape_of_sparse_tensor(device, timed):
    sp = tf.sparse.SparseTensor(indices=[[0, 1], [3, 4]], values=[1.0, 2.0], dense_shape=[7, 9])
    out = timed(tf.shape, sp, out_type=tf.int64)
    np.testing.assert_array_equal(out.numpy(), [7, 9])


@pytest.mark.parametrize("out_type", [tf.float32, tf.int16], ids=lambda d: d.name)
def test_shape_refuses_non_index_out_type(device, timed, out_type):
    """The documented out_type is int32 or int64: other types are refused (the op's attr list)."""
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.shape, tf.zeros((2, 3)), out_type=out_type)
