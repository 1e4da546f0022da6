"""tf.compat.v1.train.get_global_step: the graph's global step variable (GLOBAL_STEP collection) or None."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


def test_none_without_global_step(device, timed, tf_graph):
    with tf_graph.as_default(), timed.region() as region:
        region.result = got = v1.train.get_global_step()
    assert got is None


@pytest.mark.parametrize("steps", [0, 1, 5], ids=lambda n: f"steps{n}")
def test_returns_created_step_and_counts(device, timed, tf_graph, tf_session, steps):
    with tf_graph.as_default():
        created = v1.train.create_global_step()
        with timed.region() as region:
            got = v1.train.get_global_step()
            region.result = got.name
        increment = v1.assign_add(got, 1)
        tf_session.run(v1.global_variables_initializer())
    assert got is created and got.dtype.base_dtype == tf.int64 and got.shape == ()
    assert got.name == "global_step:0" and not got.trainable
    for _ in range(steps):
        tf_session.run(increment)
    assert tf_session.run(got) == steps


def test_explicit_graph_argument(device, timed, tf_graph):
    with tf_graph.as_default():
        step = v1.train.get_or_create_global_step()
    with timed.region() as region:
        region.result = got = v1.train.get_global_step(tf_graph).name
    assert got == step.name
    assert v1.train.get_global_step(tf.Graph()) is None


def test_found_by_collection_and_by_name(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        custom = v1.get_variable(
            "my_step",
            initializer=tf.constant(41, tf.int64),
            trainable=False,
            collections=[v1.GraphKeys.GLOBAL_VARIABLES, v1.GraphKeys.GLOBAL_STEP],
        )
        with timed.region() as region:
            got = v1.train.get_global_step()
            region.result = got.name
        tf_session.run(v1.global_variables_initializer())
    assert got is custom and tf_session.run(got) == 41


def test_invalid_global_step_raises(device, timed, tf_graph):
    with tf_graph.as_default():
        v1.add_to_collection(v1.GraphKeys.GLOBAL_STEP, v1.get_variable("f", initializer=np.float32(0.0)))
        with pytest.raises(TypeError), timed.region():
            v1.train.get_global_step()
