"""tf.compat.v1.global_variables_initializer: an op that runs every global variable's initializer."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1
DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (512, 1024)], ids=str)
def test_initializes_all_variables(device, timed, tf_graph, tf_session, dtype, shape):
    rng = np.random.default_rng(0)
    data = (rng.integers(0, 2 if dtype == tf.bool else 9, shape)).astype(dtype.as_numpy_dtype)
    with tf_graph.as_default():
        a = v1.get_variable("a", initializer=tf.constant(data))
        b = v1.Variable(tf.ones(shape, dtype), name="b")
        with timed.region() as region:
            init = v1.global_variables_initializer()
            region.result = tf_session.run(init)
    assert init.type == "NoOp" and region.result is None
    got_a, got_b = tf_session.run([a, b])
    np.testing.assert_array_equal(got_a, data)
    np.testing.assert_array_equal(got_b, np.ones(shape, dtype.as_numpy_dtype))


def test_uninitialized_read_fails_then_succeeds(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        w = v1.get_variable("w", shape=(4, 3), initializer=v1.constant_initializer(2.5))
        total = tf.reduce_sum(w)
        with pytest.raises(tf.errors.FailedPreconditionError):
            tf_session.run(total)
        with timed.region() as region:
            region.result = tf_session.run(v1.global_variables_initializer())
    assert tf_session.run(total) == 30.0
    assert tf_session.run(v1.report_uninitialized_variables()).size == 0


def test_rerun_resets_values_and_skips_local(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        g = v1.get_variable("g", initializer=tf.constant([1.0, 2.0], tf.float64))
        local = v1.get_variable("l", initializer=tf.constant(5.0), collections=[v1.GraphKeys.LOCAL_VARIABLES])
        bump = v1.assign_add(g, [10.0, 10.0])
        init = v1.global_variables_initializer()
        tf_session.run(init)
        tf_session.run(bump)
        with timed.region() as region:
            region.result = tf_session.run(v1.global_variables_initializer())
    np.testing.assert_array_equal(tf_session.run(g), [1.0, 2.0])
    with pytest.raises(tf.errors.FailedPreconditionError):
        tf_session.run(local)


def test_no_variables_is_noop(device, timed, tf_graph, tf_session):
    with tf_graph.as_default(), timed.region() as region:
        init = v1.global_variables_initializer()
        region.result = tf_session.run(init)
    assert init.name == "init" and region.result is None


def test_random_initializer_redraws(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        r = v1.get_variable("r", shape=(100000,), initializer=v1.random_normal_initializer(seed=1))
        init = v1.global_variables_initializer()
        with timed.region() as region:
            region.result = tf_session.run(init)
        first = tf_session.run(r)
        tf_session.run(init)
        second = tf_session.run(r)
    assert abs(first.mean()) < 0.02 and abs(first.std() - 1.0) < 0.02
    assert first.shape == (100000,) and not np.array_equal(first, second)
