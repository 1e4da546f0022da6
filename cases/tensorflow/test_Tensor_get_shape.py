"""tf.Tensor.get_shape: the static TensorShape of a tensor inside the timed function (eager tensors in
eager mode, traced tensors under tf.function(jit_compile=True) in compiled mode; graph placeholders
with partial shapes, set_shape), used there to build the function's output."""

import numpy as np
import pytest
import tensorflow as tf


def _shape_recorder(seen):
    """A function of a tensor that records its get_shape() and builds its output from it."""

    def f(t):
        shape = t.get_shape()
        seen.append(shape)
        return tf.fill(shape.as_list(), tf.constant(1, tf.int32))

    return f


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.bool], ids=lambda d: d.name
)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 0, 5), (2, 3, 4, 5), (512, 1024)], ids=str)
def test_get_shape_eager(device, timed, dtype, shape):
    t = tf.zeros(shape, dtype)
    seen = []
    out = timed(_shape_recorder(seen), t)
    got = seen[-1]
    assert isinstance(got, tf.TensorShape) and got.is_fully_defined()
    assert got.as_list() == list(shape) and got.rank == len(shape) and got == t.shape
    assert got.num_elements() == int(np.prod(shape))
    np.testing.assert_array_equal(out.numpy(), np.ones(shape, np.int32))


@pytest.mark.parametrize("shape", [None, (None,), (None, 3), (2, None, None)], ids=str)
def test_get_shape_graph_partial(device, timed, tf_graph, tf_session, shape):
    seen = []

    def f(x):
        seen.append(x.get_shape())
        return tf.reduce_sum(x)

    concrete = (2, 3, 4) if shape is None else tuple(5 if d is None else d for d in shape)
    data = np.arange(int(np.prod(concrete)), dtype=np.float32).reshape(concrete)
    with tf_graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=shape)
        total = timed.once(f, x)
    got = seen[-1]
    if shape is None:
        assert got.rank is None and got.dims is None
    else:
        assert got.as_list() == list(shape) and not got.is_fully_defined()
    assert tf_session.run(total, {x: data}) == pytest.approx(float(data.sum()))


def test_get_shape_after_set_shape_and_ops(device, timed, tf_graph, tf_session):
    seen = []

    def f(x):
        y = tf.matmul(x, tf.zeros((6, 5)))
        seen.append((x.get_shape(), y.get_shape()))
        return y

    with tf_graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(None, None))
        x.set_shape((4, None))
        y = timed.once(f, x)
    got = seen[-1]
    assert got[0].as_list() == [4, None] and got[1].as_list() == [4, 5]
    assert y.get_shape().as_list() == [4, 5]
    np.testing.assert_array_equal(tf_session.run(y, {x: np.ones((4, 6), np.float32)}), np.zeros((4, 5)))
    with tf_graph.as_default(), pytest.raises(ValueError):
        x.set_shape((3, 6))


def test_get_shape_in_function_trace(device, timed):
    shapes = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        shapes.append(x.get_shape())
        return tf.reduce_sum(x)

    f(tf.ones((2, 3)))
    assert shapes[0].as_list() == [None, 3]
    seen = []
    out = timed(_shape_recorder(seen), tf.ones((2, 3)))
    assert seen[-1].as_list() == [2, 3]
    np.testing.assert_array_equal(out.numpy(), np.ones((2, 3), np.int32))
