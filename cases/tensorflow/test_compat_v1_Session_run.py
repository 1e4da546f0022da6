"""tf.compat.v1.Session.run: evaluates fetches (any nested structure) with feeds in a graph session."""

import collections

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1
DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool, tf.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0, 3), (7,), (512, 1024)], ids=str)
def test_run_fetches_values(device, timed, tf_graph, tf_session, dtype, shape):
    data = (np.arange(int(np.prod(shape))).reshape(shape) % 3).astype(dtype.as_numpy_dtype)
    with tf_graph.as_default():
        x = v1.placeholder(dtype, shape=shape)
        y = tf.identity(x) if dtype == tf.bool else x + x
    expected = data if dtype == tf.bool else (data.astype(np.float64) * 2).astype(dtype.as_numpy_dtype)
    with timed.region() as region:
        region.result = out = tf_session.run(y, feed_dict={x: data})
    assert (
        isinstance(out, (np.ndarray, np.generic)) and out.dtype == dtype.as_numpy_dtype and out.shape == shape
    )
    np.testing.assert_array_equal(out, expected)


def test_run_nested_fetch_structures(device, timed, tf_graph, tf_session):
    pair = collections.namedtuple("pair", ["a", "b"])
    with tf_graph.as_default():
        a = tf.constant([1.0, 2.0])
        b = tf.constant(3, tf.int64)
        noop = tf.no_op()
    with timed.region() as region:
        region.result = out = tf_session.run({"p": pair(a, b), "l": [a, (b, noop)], "name": "Const:0"})
    assert isinstance(out["p"], pair) and out["p"].b == 3
    np.testing.assert_array_equal(out["p"].a, [1.0, 2.0])
    assert out["l"][1][0] == 3 and out["l"][1][1] is None
    np.testing.assert_array_equal(out["name"], [1.0, 2.0])


def test_run_updates_variable_state(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        v = v1.get_variable("v", initializer=tf.constant(np.zeros(4)))
        step = v1.assign_add(v, np.arange(4.0))
        tf_session.run(v1.global_variables_initializer())
    for _ in range(2):
        tf_session.run(step)
    with timed.region() as region:
        region.result = out = tf_session.run(step)
    np.testing.assert_array_equal(out, 3 * np.arange(4.0))


def test_run_options_and_metadata(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        y = tf.reduce_sum(tf.range(1000.0))
    options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
    metadata = v1.RunMetadata()
    with timed.region() as region:
        region.result = out = tf_session.run(y, options=options, run_metadata=metadata)
    assert out == pytest.approx(499500.0)
    assert len(metadata.step_stats.dev_stats) >= 1


def test_run_errors(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        x = v1.placeholder(tf.float32, shape=(2,))
        y = x * 2.0
        other = tf.Graph()
        with other.as_default():
            foreign = tf.constant(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError), timed.region():
        tf_session.run(y)
    with pytest.raises(ValueError):
        tf_session.run(y, {x: np.zeros(3, np.float32)})
    with pytest.raises((ValueError, TypeError)):
        tf_session.run(foreign)
