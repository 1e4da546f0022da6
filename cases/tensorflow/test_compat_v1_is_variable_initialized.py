"""tf.compat.v1.is_variable_initialized: a boolean op telling whether a variable holds a value yet."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1
DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("resource", [True, False], ids=["resource", "ref"])
def test_before_and_after_init(device, timed, tf_graph, tf_session, dtype, resource):
    with tf_graph.as_default():
        var = v1.get_variable("v", initializer=tf.zeros((3,), dtype), use_resource=resource)
        flag = v1.is_variable_initialized(var)
        init = var.initializer
    assert flag.dtype == tf.bool and flag.shape == ()
    with timed.region() as region:
        region.result = before = tf_session.run(flag)
    tf_session.run(init)
    after = tf_session.run(flag)
    assert before is np.False_ or before == False  # noqa: E712
    assert after == True  # noqa: E712


@pytest.mark.parametrize("shape", [(0,), (7, 5), (512, 1024)], ids=str)
def test_shapes(device, timed, tf_graph, tf_session, shape):
    with tf_graph.as_default():
        var = v1.get_variable("v", shape=shape, initializer=v1.ones_initializer())
        with timed.region() as region:
            flag = v1.is_variable_initialized(var)
            region.result = before = tf_session.run(flag)
        tf_session.run(v1.global_variables_initializer())
    assert not before and tf_session.run(flag)
    np.testing.assert_array_equal(tf_session.run(var), np.ones(shape, np.float32))


def test_only_the_initialized_one(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        a = v1.get_variable("a", initializer=1.0)
        b = v1.get_variable("b", initializer=2.0)
        flags = [v1.is_variable_initialized(a), v1.is_variable_initialized(b)]
    tf_session.run(a.initializer)
    with timed.region() as region:
        region.result = got = tf_session.run(flags)
    assert list(got) == [True, False]


def test_eager_variable(device, timed):
    var = tf.Variable([1.0, 2.0])
    flag = timed(v1.is_variable_initialized, var)
    assert bool(flag.numpy()) is True
