"""tf.Variable: construction from values and callables, dtype/shape/trainable, assignment, reading
on the device and gradients through it."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool, tf.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (3, 4), (512, 1024)], ids=str)
def test_variable_from_callable(device, timed, dtype, shape):
    data = np.arange(int(np.prod(shape))).reshape(shape) % 3
    y = tf.cast(tf.constant(data), dtype)
    with timed.region() as region:
        region.result = v = tf.Variable(lambda: y, name="a")
    assert v.dtype == dtype and tuple(v.shape) == shape
    assert v.name.startswith("a") and v.trainable
    assert device.lower().replace("/device:", "") in v.device.lower()
    got = v.numpy() if dtype in (tf.bool, tf.complex64) else tf.cast(v, tf.float64).numpy()
    np.testing.assert_array_equal(got, data.astype(bool) if dtype == tf.bool else data)


def test_variable_options(device, timed):
    with timed.region() as region:
        region.result = v = tf.Variable(
            [1, 2, 3], dtype=tf.float64, trainable=False, shape=tf.TensorShape(None)
        )
    assert v.dtype == tf.float64 and not v.trainable and v.shape.rank is None
    v.assign([4.0, 5.0])  # an unknown shape accepts any shape
    np.testing.assert_array_equal(v.numpy(), [4.0, 5.0])


def _assign_ops(v):
    v.assign_add(np.ones((2, 3)))
    v.assign_sub(np.full((2, 3), 0.5))
    v[0, 1].assign(-7.0)
    return v.read_value()


def test_variable_assign_ops(device, timed):
    v = tf.Variable(np.arange(6.0).reshape(2, 3))
    got = timed.once(_assign_ops, v)  # the assignments (side effects: no warm-up)
    expected = np.arange(6.0).reshape(2, 3) + 0.5
    expected[0, 1] = -7.0
    np.testing.assert_array_equal(got.numpy(), expected)
    np.testing.assert_array_equal(v.numpy(), expected)
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        v.assign(np.zeros((3, 2)))


def _cube_sum_gradient(v):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v * v)
    return tape.gradient(loss, v)


def test_variable_gradient(device, timed):
    v = tf.Variable([1.0, -2.0, 3.0], dtype=tf.float64)
    grad = timed(_cube_sum_gradient, v)  # the gradient through the variable's reads
    np.testing.assert_array_equal(grad.numpy(), 3.0 * np.array([1.0, 4.0, 9.0]))


def test_variable_from_random_tensor_and_validation(device, timed):
    init = tf.random.stateless_normal((64, 32), seed=(1, 2), dtype=tf.float32)
    with timed.region() as region:
        region.result = v = tf.Variable(init)
    np.testing.assert_array_equal(v.numpy(), init.numpy())
    with pytest.raises((ValueError, TypeError)):
        tf.Variable(None)
    with pytest.raises((ValueError, TypeError)):
        tf.Variable([1.5], dtype=tf.int32)
