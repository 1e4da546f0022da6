"""tf.compat.v1.global_variables_initializer: an op that runs every global variable's initializer.

The timed function builds the initializer and reads the variables after it (in compiled mode a
tf.function(jit_compile=True) called in the graph); its output is run with the session."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1
DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool]


def _init_then_read(variables, seen):
    """A function: the values of `variables`, read after running global_variables_initializer."""

    def f():
        init = v1.global_variables_initializer()
        seen.append(init)
        with tf.control_dependencies([init]):
            return [v.read_value() for v in variables]

    return f


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (512, 1024)], ids=str)
def test_initializes_all_variables(device, timed, tf_graph, tf_session, dtype, shape):
    rng = np.random.default_rng(0)
    data = (rng.integers(0, 2 if dtype == tf.bool else 9, shape)).astype(dtype.as_numpy_dtype)
    seen = []
    with tf_graph.as_default():
        a = v1.get_variable("a", initializer=tf.constant(data))
        b = v1.Variable(tf.ones(shape, dtype), name="b")
        out = timed.once(_init_then_read([a, b], seen))
    assert seen[-1].type == "NoOp"
    got_a, got_b = tf_session.run(out)
    np.testing.assert_array_equal(got_a, data)
    np.testing.assert_array_equal(got_b, np.ones(shape, dtype.as_numpy_dtype))
    np.testing.assert_array_equal(tf_session.run(a), data)


def test_uninitialized_read_fails_then_succeeds(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        w = v1.get_variable("w", shape=(4, 3), initializer=v1.constant_initializer(2.5))
        total = tf.reduce_sum(w)
        with pytest.raises(tf.errors.FailedPreconditionError):
            tf_session.run(total)
        out = timed.once(_init_then_read([w], []))
        np.testing.assert_array_equal(tf_session.run(out)[0], np.full((4, 3), 2.5))
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
        out = timed.once(_init_then_read([g], []))
        np.testing.assert_array_equal(tf_session.run(out)[0], [1.0, 2.0])
    np.testing.assert_array_equal(tf_session.run(g), [1.0, 2.0])
    with pytest.raises(tf.errors.FailedPreconditionError):
        tf_session.run(local)


def test_no_variables_is_noop(device, timed, tf_graph, tf_session):
    seen = []

    def f():
        init = v1.global_variables_initializer()
        seen.append(init)
        with tf.control_dependencies([init]):
            return tf.constant(1)

    with tf_graph.as_default():
        out = timed.once(f)
    assert seen[-1].name == "init" and seen[-1].type == "NoOp"
    assert tf_session.run(out) == 1


def test_random_initializer_redraws(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        r = v1.get_variable("r", shape=(100000,), initializer=v1.random_normal_initializer(seed=1))
        out = timed.once(_init_then_read([r], []))
        (first,) = tf_session.run(out)
        (second,) = tf_session.run(out)
    assert abs(first.mean()) < 0.02 and abs(first.std() - 1.0) < 0.02
    assert first.shape == (100000,) and not np.array_equal(first, second)
