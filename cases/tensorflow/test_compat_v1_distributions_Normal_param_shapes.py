"""Normal.param_shapes (tf.compat.v1.distributions): the loc/scale shapes that give a sample shape;
a Normal built with them samples that shape."""

import numpy as np
import pytest
import tensorflow as tf

Normal = tf.compat.v1.distributions.Normal


@pytest.mark.parametrize("sample_shape", [[], [5], [2, 3], [0, 4], [1024, 1024]], ids=str)
def test_param_shapes_python_list(device, timed, sample_shape):
    shapes = timed(Normal.param_shapes, sample_shape)
    assert set(shapes) == {"loc", "scale"}
    for value in shapes.values():
        assert isinstance(value, tf.Tensor) and value.dtype == tf.int32
        np.testing.assert_array_equal(value.numpy(), np.asarray(sample_shape, np.int32))


def test_param_shapes_tensor_argument(device, timed):
    shapes = timed(Normal.param_shapes, tf.constant([3, 7], tf.int32))
    np.testing.assert_array_equal(shapes["loc"].numpy(), [3, 7])
    np.testing.assert_array_equal(shapes["scale"].numpy(), [3, 7])
    with pytest.raises(ValueError):  # the shape is converted to int32; an int64 tensor is refused
        Normal.param_shapes(tf.constant([3, 7], tf.int64))


def test_param_static_shapes(device, timed):
    # Not routed: param_static_shapes returns Python TensorShapes (no tensor), which a compiled
    # function cannot return.
    with timed.region() as region:
        region.result = static = Normal.param_static_shapes([4, 2])
    assert static["loc"] == tf.TensorShape([4, 2]) and static["scale"] == tf.TensorShape([4, 2])


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16], ids=lambda d: d.name)
def test_param_shapes_build_a_distribution(device, timed, dtype):
    sample_shape = [6, 5]
    shapes = timed(Normal.param_shapes, sample_shape)
    dist = Normal(loc=tf.zeros(shapes["loc"], dtype), scale=tf.ones(shapes["scale"], dtype))
    sample = dist.sample(seed=3)
    assert sample.dtype == dtype and tuple(sample.shape) == tuple(sample_shape)
    assert dist.batch_shape == tf.TensorShape(sample_shape)


def test_param_shapes_graph_mode(device, timed, tf_graph, tf_session):
    # Not routed: the call under test is a Session.run of a TF1 graph.
    with tf_graph.as_default():
        shape = tf.compat.v1.placeholder(tf.int32, shape=(None,))
        shapes = Normal.param_shapes(shape)
        with timed.region() as region:
            region.result = tf_session.run(shapes, {shape: [2, 9, 4]})
    np.testing.assert_array_equal(region.result["loc"], [2, 9, 4])
    np.testing.assert_array_equal(region.result["scale"], [2, 9, 4])
