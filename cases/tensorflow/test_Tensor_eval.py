"""tf.Tensor.eval: evaluates a graph tensor in the default session (optionally with a feed_dict)."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_eval_constant_expression(device, timed, tf_graph, tf_session, dtype):
    a_data = np.arange(6).reshape(2, 3)
    b_data = np.arange(6).reshape(2, 3) % 4
    with tf_graph.as_default(), tf_session.as_default():
        c = tf.constant(a_data, dtype) * tf.constant(b_data, dtype) + tf.constant(1, dtype)
        with timed.region() as region:
            region.result = c.eval()
    out = region.result
    assert out.shape == (2, 3) and out.dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(out.astype(np.float64), a_data * b_data + 1)


@pytest.mark.parametrize("shape", [(0, 3), (7,), (512, 1024)], ids=str)
def test_eval_with_feed_dict(device, timed, tf_graph, tf_session, shape):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with tf_graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=shape)
        y = tf.square(x) - 2.0 * x
        with timed.region() as region:
            region.result = y.eval(feed_dict={x: data}, session=tf_session)
    np.testing.assert_allclose(region.result, data * data - 2.0 * data, rtol=1e-6, atol=1e-6)


def test_eval_reads_variable(device, timed, tf_graph, tf_session):
    with tf_graph.as_default(), tf_session.as_default():
        v = tf.compat.v1.get_variable("v", initializer=tf.constant([1.0, 2.0, 3.0], tf.float64))
        tf.compat.v1.global_variables_initializer().run()
        total = tf.reduce_sum(v) * 2.0
        with timed.region() as region:
            region.result = total.eval()
    assert region.result == 12.0


def test_eval_without_session_raises(device, timed, tf_graph):
    with tf_graph.as_default():
        c = tf.constant(1.0)
        with pytest.raises(ValueError, match="session"), timed.region():
            c.eval()


def test_eval_missing_feed_raises(device, timed, tf_graph, tf_session):
    with tf_graph.as_default(), tf_session.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(2,))
        with pytest.raises(tf.errors.InvalidArgumentError), timed.region():
            (x + 1.0).eval()
