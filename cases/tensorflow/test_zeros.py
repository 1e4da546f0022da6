"""tf.zeros: a zero tensor of a given shape and dtype."""

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
@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (7,), (3, 5, 7), (512, 1024)], ids=str)
def test_zeros_matches_numpy(device, timed, dtype, shape):
    out = timed(tf.zeros, shape, dtype=dtype)
    assert out.dtype == dtype and tuple(out.shape) == shape
    np.testing.assert_array_equal(out.numpy(), np.zeros(shape, dtype=dtype.as_numpy_dtype))


def test_zeros_tensor_shape_argument(device, timed):
    shape = tf.constant([4, 6], tf.int64)
    out = timed(tf.zeros, shape, dtype=tf.float32)
    assert out.shape == (4, 6)
    assert not np.signbit(out.numpy()).any() and not out.numpy().any()


def test_zeros_string(device, timed):
    out = timed(tf.zeros, (2, 3), dtype=tf.string)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), b"", dtype=object))


def test_zeros_negative_shape_raises(device, timed):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        timed(tf.zeros, (2, -3), dtype=tf.float32)
