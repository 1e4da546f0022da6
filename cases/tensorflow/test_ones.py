"""tf.ones: tensors of ones against numpy.ones per dtype and shape, the shape as a list, a tuple
or a tensor computed on the device, the default dtype float32, and a negative size refused."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [
    tf.float32,
    tf.float64,
    tf.float16,
    tf.bfloat16,
    tf.int32,
    tf.int64,
    tf.uint8,
    tf.bool,
    tf.complex64,
]
SHAPES = [[], [0], [7], [5, 3], [0, 4], [512, 512]]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_ones_per_dtype_and_shape(device, timed, dtype, shape):
    out = timed(tf.ones, shape, dtype)
    assert out.dtype == dtype and out.shape.as_list() == shape
    got = out.numpy() if dtype != tf.bfloat16 else tf.cast(out, tf.float32).numpy()
    np.testing.assert_array_equal(got, np.ones(shape, got.dtype))


def test_the_default_dtype_is_float32(device, timed):
    out = timed(tf.ones, (2, 3))
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 3), np.float32))


def test_a_shape_computed_on_the_device(device, timed):
    like = tf.zeros([4, 6, 2])
    out = timed(lambda x: tf.ones(tf.shape(x), tf.int32), like)
    assert out.shape.as_list() == [4, 6, 2] and out.dtype == tf.int32
    np.testing.assert_array_equal(out.numpy(), np.ones((4, 6, 2), np.int32))


def test_a_negative_dimension_is_refused(device):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        tf.ones([2, -1])
