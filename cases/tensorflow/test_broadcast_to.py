"""tf.broadcast_to: against numpy.broadcast_to per dtype and pair of shapes (scalar, row, column,
new leading axes, size 1 to 0, up to 1 MB), a shape tensor, incompatible shapes refused, and the
gradient summing over the broadcast axes."""

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
PAIRS = [
    ((), (3, 4)),
    ((1, 4), (3, 4)),
    ((3, 1), (3, 4)),
    ((4,), (2, 3, 4)),
    ((1, 5), (0, 5)),
    ((3, 4), (3, 4)),
    ((1, 512), (512, 512)),
]


def source_of(dtype, shape):
    values = (np.arange(int(np.prod(shape))) % 7).reshape(shape)
    return tf.constant(values.astype(bool) if dtype == tf.bool else values, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}_to_{p[1]}")
def test_broadcast_is_numpys(device, timed, dtype, pair):
    shape, target = pair
    x = source_of(dtype, shape)
    out = timed(tf.broadcast_to, x, target)
    assert out.dtype == dtype and tuple(out.shape) == target
    cast = (lambda t: tf.cast(t, tf.float32)) if dtype == tf.bfloat16 else (lambda t: t)
    np.testing.assert_array_equal(cast(out).numpy(), np.broadcast_to(cast(x).numpy(), target))


def test_a_shape_given_as_a_tensor(device, timed):
    x = tf.constant([1.0, 2.0, 3.0])
    target = tf.constant([2, 3], tf.int64)
    out = timed(tf.broadcast_to, x, target)
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to([1.0, 2.0, 3.0], (2, 3)))


def test_incompatible_shapes_are_refused(device):
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        tf.broadcast_to(tf.ones([3, 2]), [3, 4])


def test_the_gradient_sums_over_the_broadcast_axes(device, timed):
    x = tf.constant([[1.0], [2.0], [3.0]])

    def gradient(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = tf.broadcast_to(v, [3, 5]) * tf.range(5, dtype=tf.float32)
        return tape.gradient(y, v)

    out = timed(gradient, x)
    np.testing.assert_array_equal(out.numpy(), np.full((3, 1), 10.0, np.float32))
