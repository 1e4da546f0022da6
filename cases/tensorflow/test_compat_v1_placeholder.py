"""tf.compat.v1.placeholder: a graph input of a given dtype and (partial) shape, fed at Session.run."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_placeholder_feeds_value(device, timed, tf_graph, tf_session, dtype):
    data = (np.arange(6).reshape(2, 3) % 4).astype(dtype.as_numpy_dtype)
    with tf_graph.as_default():
        with timed.region() as region:
            region.result = x = tf.compat.v1.placeholder(dtype, shape=(2, 3), name="input")
        assert x.dtype == dtype and x.shape.as_list() == [2, 3] and x.op.type == "Placeholder"
        assert x.name == "input:0"
        doubled = tf.identity(x)
    out = tf_session.run(doubled, {x: data})
    assert out.dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(out, data)


@pytest.mark.parametrize("shape", [None, (None,), (None, 4), (0, 3), (512, 1024)], ids=str)
def test_placeholder_shapes(device, timed, tf_graph, tf_session, shape):
    concrete = tuple(512 if d is None else d for d in shape) if shape is not None else (3, 2, 2)
    if shape == (None,):
        concrete = (5,)
    data = np.random.default_rng(0).standard_normal(concrete).astype(np.float32)
    with tf_graph.as_default():
        with timed.region() as region:
            region.result = x = tf.compat.v1.placeholder(tf.float32, shape=shape)
        if shape is None:
            assert x.shape.rank is None
        else:
            assert x.shape.as_list() == list(shape)
        y = x * 2.0 + 1.0
    np.testing.assert_allclose(tf_session.run(y, {x: data}), data * 2.0 + 1.0, rtol=1e-6)


def test_placeholder_unfed_raises(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        with timed.region() as region:
            region.result = x = tf.compat.v1.placeholder(tf.float32, shape=(2,))
        y = x + 1.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="placeholder"):
        tf_session.run(y)


def test_placeholder_wrong_feed_shape_raises(device, timed, tf_graph, tf_session):
    with tf_graph.as_default(), timed.region() as region:
        region.result = x = tf.compat.v1.placeholder(tf.float32, shape=(None, 3))
    with pytest.raises(ValueError):
        tf_session.run(x, {x: np.zeros((2, 4), np.float32)})


def test_placeholder_with_default(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        with timed.region() as region:
            region.result = x = tf.compat.v1.placeholder_with_default(tf.constant([1.0, 2.0]), shape=(None,))
        y = x * 3.0
    np.testing.assert_array_equal(tf_session.run(y), [3.0, 6.0])
    np.testing.assert_array_equal(tf_session.run(y, {x: [5.0]}), [15.0])


def test_placeholder_rejected_in_eager(device, timed):
    with pytest.raises(RuntimeError, match="eager"), timed.region():
        tf.compat.v1.placeholder(tf.float32)
