"""smart_cond (tensorflow.python.framework.smart_cond): calls a branch directly for a static predicate,
builds a tf.cond for a dynamic one."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import smart_cond as smart_cond_lib

smart_cond = smart_cond_lib.smart_cond


@pytest.mark.parametrize(
    "pred",
    [True, False, np.bool_(True), tf.constant(False)],
    ids=["py-true", "py-false", "np-true", "tf-false"],
)
def test_smart_cond_static_predicate_calls_one_branch(device, timed, pred):
    called = []

    def true_fn():
        called.append("true")
        return tf.constant([1.0, 2.0])

    def false_fn():
        called.append("false")
        return tf.constant([3.0, 4.0])

    truth = bool(pred.numpy()) if isinstance(pred, tf.Tensor) else bool(pred)

    def call():
        # A tensor predicate is made in the call as a constant, so that it is static in both modes
        # (a tensor passed into a compiled function would be symbolic there: a real tf.cond).
        return smart_cond(tf.constant(truth) if isinstance(pred, tf.Tensor) else pred, true_fn, false_fn)

    out = timed(call)
    # Only the chosen branch ran (once per eager call with the warm-up; once, at tracing, compiled).
    assert called and set(called) == ({"true"} if truth else {"false"})
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0] if truth else [3.0, 4.0])


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.int32], ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(0,), (5,), (512, 1024)], ids=str)
def test_smart_cond_tensor_predicate_in_function(device, timed, dtype, shape):
    """Inside a tf.function the predicate is symbolic, so smart_cond becomes a tf.cond on the device."""
    x = tf.cast(tf.reshape(tf.range(int(np.prod(shape))) % 9, shape), dtype)

    @tf.function
    def branch(pred, value):
        return smart_cond(pred, lambda: value * 2, lambda: value - 1)

    for flag in (True, False):
        out = timed(branch, tf.constant(flag), x)
        reference = tf.cast(x, tf.float64).numpy()
        expected = reference * 2 if flag else reference - 1
        assert out.dtype == dtype
        np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), expected)


def test_smart_cond_nested_outputs(device, timed):
    first, rest = timed(
        lambda: smart_cond(
            tf.constant(True),
            lambda: (tf.constant(1), {"a": tf.constant([2.0])}),
            lambda: (tf.constant(0), {"a": tf.constant([0.0])}),
        )
    )
    assert int(first) == 1 and rest["a"].numpy().tolist() == [2.0]


def test_smart_cond_graph_mode(device, timed, tf_graph, tf_session):
    # Not routed: the call under test is a Session.run of a TF1 graph.
    with tf_graph.as_default():
        pred = tf.compat.v1.placeholder(tf.bool, shape=())
        out = smart_cond(pred, lambda: tf.constant(10.0), lambda: tf.constant(-10.0))
        with timed.region() as region:
            region.result = (tf_session.run(out, {pred: True}), tf_session.run(out, {pred: False}))
    assert region.result == (10.0, -10.0)


def test_smart_cond_rejects_bad_arguments(device, timed):
    with pytest.raises(TypeError):
        timed(smart_cond, 1.5, lambda: 1, lambda: 2)  # only bools, 0/1 and tensors are predicates
    with pytest.raises(TypeError):
        smart_cond(True, tf.constant(1), lambda: 2)  # branches must be callable
    assert smart_cond(0, lambda: "t", lambda: "f") == "f"
