"""tf.estimator.LoggingTensorHook (removed with tf.estimator in TF 2.16; the same class lives on as
tf.compat.v1.train.LoggingTensorHook): logs the values of given tensors every N iterations / at end."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.training import monitored_session

v1 = tf.compat.v1
Hook = v1.train.LoggingTensorHook


def _run(session, hook, train, steps):
    hook.after_create_session(session, None)
    hooked = monitored_session._HookedSession(session, [hook])
    for _ in range(steps):
        hooked.run(train)
    hook.end(session)


@pytest.mark.parametrize(
    "every_n,steps,logged", [(1, 3, [1, 2, 3]), (2, 5, [1, 3, 5]), (10, 4, [1])], ids=str
)
def test_logs_every_n_iter(device, timed, tf_graph, tf_session, every_n, steps, logged):
    records = []
    with tf_graph.as_default():
        counter = v1.get_variable("counter", initializer=tf.constant(0, tf.int64))
        train = v1.assign_add(counter, 1)
        with timed.region() as region:
            hook = Hook(
                {"c": counter.value()}, every_n_iter=every_n, formatter=lambda v: records.append(v) or ""
            )
            region.result = None
        hook.begin()
        tf_session.run(v1.global_variables_initializer())
        _run(tf_session, hook, train, steps)
    # before_run fetches the value in the same run as the train op: it sees the step's start value
    assert [int(r["c"]) for r in records] == [n - 1 for n in logged]


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32], ids=lambda d: d.name
)
def test_logged_values_match(device, timed, tf_graph, tf_session, dtype):
    records = []
    data = np.arange(6).reshape(2, 3)
    with tf_graph.as_default():
        x = tf.constant(data, dtype)
        y = x * tf.constant(2, dtype)
        with timed.region() as region:
            hook = Hook({"x": x, "y": y}, every_n_iter=1, formatter=lambda v: records.append(v) or "")
            region.result = None
        hook.begin()
        _run(tf_session, hook, tf.no_op(), 2)
    assert len(records) == 2 and set(records[0]) == {"x", "y"}
    assert records[0]["y"].dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(records[1]["y"].astype(np.float64), data * 2)


def test_at_end_and_tensor_names(device, timed, tf_graph, tf_session):
    records = []
    with tf_graph.as_default():
        tf.reduce_sum(tf.ones((512, 1024)), name="big_sum")
        with timed.region() as region:
            hook = Hook(["big_sum:0"], at_end=True, formatter=lambda v: records.append(v) or "")
            region.result = None
        hook.begin()
        _run(tf_session, hook, tf.no_op(), 3)
    assert len(records) == 1 and records[0]["big_sum:0"] == 512 * 1024


def test_default_formatter_writes_log(device, timed, tf_graph, tf_session, caplog):
    with tf_graph.as_default():
        c = tf.constant(41.5, name="answer")
        with timed.region() as region:
            hook = Hook({"answer": c}, every_n_iter=1)
            region.result = None
        hook.begin()
        with caplog.at_level("INFO"):
            _run(tf_session, hook, tf.no_op(), 1)
    assert "answer = 41.5" in caplog.text


def test_argument_checks(device, timed):
    with pytest.raises(ValueError), timed.region():
        Hook({"a": tf.constant(1)})  # neither every_n_iter, every_n_secs nor at_end
    with pytest.raises(ValueError):
        Hook({"a": tf.constant(1)}, every_n_iter=0)
    with pytest.raises(ValueError):
        Hook({"a": tf.constant(1)}, every_n_iter=1, every_n_secs=1)
