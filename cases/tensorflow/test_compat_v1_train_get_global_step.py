"""tf.compat.v1.train.get_global_step: the graph's global step variable (GLOBAL_STEP collection) or None.

The timed function looks the step up and scales its input by it, as a learning-rate schedule does (in
compiled mode a tf.function(jit_compile=True) called in the graph, whose trace reads the graph's
collections); the result is run with the session."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


def _scaled_by_step(seen, graph=None):
    """A function of x: x * global_step (x itself where there is no global step)."""

    def f(x):
        step = v1.train.get_global_step(graph)
        seen.append(step)
        return x if step is None else x * tf.cast(step.read_value(), x.dtype)

    return f


def test_none_without_global_step(device, timed, tf_graph, tf_session):
    seen = []
    with tf_graph.as_default():
        out = timed.once(_scaled_by_step(seen), tf.constant(2.5))
    assert seen[-1] is None
    assert tf_session.run(out) == 2.5


@pytest.mark.parametrize("steps", [0, 1, 5], ids=lambda n: f"steps{n}")
def test_returns_created_step_and_counts(device, timed, tf_graph, tf_session, steps):
    seen = []
    with tf_graph.as_default():
        created = v1.train.create_global_step()
        out = timed.once(_scaled_by_step(seen), tf.constant([1.0, -2.0], tf.float64))
        got = seen[-1]
        increment = v1.assign_add(got, 1)
        tf_session.run(v1.global_variables_initializer())
    assert got is created and got.dtype.base_dtype == tf.int64 and got.shape == ()
    assert got.name == "global_step:0" and not got.trainable
    for _ in range(steps):
        tf_session.run(increment)
    assert tf_session.run(got) == steps
    np.testing.assert_array_equal(tf_session.run(out), [steps * 1.0, steps * -2.0])


def test_explicit_graph_argument(device, timed, tf_graph, tf_session):
    seen = []
    with tf_graph.as_default():
        step = v1.train.get_or_create_global_step()
        out = timed.once(_scaled_by_step(seen, tf_graph), tf.constant(3, tf.int64))
        tf_session.run(v1.global_variables_initializer())
        tf_session.run(v1.assign(step, 4))
    assert seen[-1].name == step.name
    assert tf_session.run(out) == 12
    assert v1.train.get_global_step(tf.Graph()) is None


def test_found_by_collection_and_by_name(device, timed, tf_graph, tf_session):
    seen = []
    with tf_graph.as_default():
        custom = v1.get_variable(
            "my_step",
            initializer=tf.constant(41, tf.int64),
            trainable=False,
            collections=[v1.GraphKeys.GLOBAL_VARIABLES, v1.GraphKeys.GLOBAL_STEP],
        )
        out = timed.once(_scaled_by_step(seen), tf.constant(0.5, tf.float32))
        tf_session.run(v1.global_variables_initializer())
    got = seen[-1]
    assert got is custom and tf_session.run(got) == 41
    assert tf_session.run(out) == 20.5


def test_invalid_global_step_raises(device, timed, tf_graph):
    with tf_graph.as_default():
        v1.add_to_collection(v1.GraphKeys.GLOBAL_STEP, v1.get_variable("f", initializer=np.float32(0.0)))
        with pytest.raises(TypeError):
            timed.once(_scaled_by_step([]), tf.constant(1.0))
