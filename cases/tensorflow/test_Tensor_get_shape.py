"""tf.Tensor.get_shape: the static TensorShape of eager and graph tensors (partial shapes, set_shape)."""

import numpy as np
import pytest
import tensorflow as tf


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.bool], ids=lambda d: d.name
)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 0, 5), (2, 3, 4, 5), (512, 1024)], ids=str)
def test_get_shape_eager(device, timed, dtype, shape):
    t = tf.zeros(shape, dtype)
    with timed.region() as region:
        region.result = got = t.get_shape()
    assert isinstance(got, tf.TensorShape) and got.is_fully_defined()
    assert got.as_list() == list(shape) and got.rank == len(shape) and got == t.shape
    assert got.num_elements() == int(np.prod(shape))


@pytest.mark.parametrize("shape", [None, (None,), (None, 3), (2, None, None)], ids=str)
def test_get_shape_graph_partial(device, timed, tf_graph, shape):
    with tf_graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=shape)
        with timed.region() as region:
            region.result = got = x.get_shape()
    if shape is None:
        assert got.rank is None and got.dims is None
    else:
        assert got.as_list() == list(shape) and not got.is_fully_defined()


def test_get_shape_after_set_shape_and_ops(device, timed, tf_graph):
    with tf_graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(None, None))
        x.set_shape((4, None))
        y = tf.matmul(x, tf.zeros((6, 5)))
        with timed.region() as region:
            region.result = got = (x.get_shape(), y.get_shape())
    assert got[0].as_list() == [4, None] and got[1].as_list() == [4, 5]
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
    with timed.region() as region:
        region.result = got = tf.ones((2, 3)).get_shape()
    assert got.as_list() == [2, 3]
