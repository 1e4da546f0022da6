"""tf.estimator.CheckpointSaverHook (removed with tf.estimator in TF 2.16; the same class lives on as
tf.compat.v1.train.CheckpointSaverHook): saves checkpoints every N steps/secs, at start and at end."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.training import monitored_session

v1 = tf.compat.v1
Hook = v1.train.CheckpointSaverHook


def _model(dtype=tf.float32):
    step = v1.train.get_or_create_global_step()
    w = v1.get_variable("w", initializer=tf.zeros((4,), dtype))
    train = tf.group(v1.assign_add(step, 1), v1.assign_add(w, tf.ones((4,), dtype)))
    return step, w, train


def _drive(session, hook, train, steps):
    """What a MonitoredSession does around the hook, on the harness session."""
    session.run(v1.global_variables_initializer())
    hook.after_create_session(session, None)
    hooked = monitored_session._HookedSession(session, [hook])
    for _ in range(steps):
        hooked.run(train)
    hook.end(session)


def _saved_steps(directory):
    state = tf.train.get_checkpoint_state(str(directory))
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


@pytest.mark.parametrize(
    "save_steps,steps,expected", [(1, 3, [0, 1, 2, 3]), (2, 5, [0, 2, 4, 5]), (10, 4, [0, 4])], ids=str
)
def test_saves_every_n_steps(device, timed, tf_graph, tf_session, tmp_path, save_steps, steps, expected):
    with tf_graph.as_default():
        _, _, train = _model()
        saver = v1.train.Saver(max_to_keep=100)
        with timed.region() as region:
            hook = Hook(str(tmp_path), save_steps=save_steps, saver=saver)
            region.result = None
        hook.begin()
        _drive(tf_session, hook, train, steps)
    assert _saved_steps(tmp_path) == expected
    assert tf.train.load_variable(str(tmp_path), "global_step") == steps
    assert (tmp_path / "graph.pbtxt").exists()


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16], ids=lambda d: d.name)
def test_checkpoint_holds_variable_values(device, timed, tf_graph, tf_session, tmp_path, dtype):
    with tf_graph.as_default():
        _, _w, train = _model(dtype)
        big = v1.get_variable("big", initializer=tf.fill((512, 512), tf.constant(1.5, dtype)))
        with timed.region() as region:
            hook = Hook(str(tmp_path), save_steps=3, saver=v1.train.Saver())
            region.result = None
        hook.begin()
        _drive(tf_session, hook, train, 3)
    saved = tf.train.load_variable(str(tmp_path), "w")
    assert saved.dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(saved.astype(np.float64), [3.0] * 4)
    np.testing.assert_array_equal(tf.train.load_variable(str(tmp_path), "big").astype(np.float64), 1.5)
    assert big is not None


def test_listener_callbacks(device, timed, tf_graph, tf_session, tmp_path):
    calls = []

    class Listener(v1.train.CheckpointSaverListener):
        def begin(self):
            calls.append("begin")

        def before_save(self, session, global_step_value):
            calls.append(("before", int(global_step_value)))

        def after_save(self, session, global_step_value):
            calls.append(("after", int(global_step_value)))

        def end(self, session, global_step_value):
            calls.append(("end", int(global_step_value)))

    with tf_graph.as_default():
        _, _, train = _model()
        with timed.region() as region:
            hook = Hook(str(tmp_path), save_steps=2, saver=v1.train.Saver(), listeners=[Listener()])
            region.result = None
        hook.begin()
        _drive(tf_session, hook, train, 2)
    assert calls == ["begin", ("before", 0), ("after", 0), ("before", 2), ("after", 2), ("end", 2)]


def test_save_secs_and_argument_checks(device, timed, tf_graph, tf_session, tmp_path):
    with tf_graph.as_default():
        _, _, train = _model()
        with timed.region() as region:
            hook = Hook(str(tmp_path), save_secs=3600, saver=v1.train.Saver())
            region.result = None
        hook.begin()
        _drive(tf_session, hook, train, 5)
    assert _saved_steps(tmp_path) == [0, 5]  # at creation and at end only
    with pytest.raises(ValueError):
        Hook(str(tmp_path), save_secs=10, save_steps=10)
    with pytest.raises(ValueError):
        Hook(str(tmp_path))


def test_begin_requires_global_step(device, timed, tf_graph, tmp_path):
    with tf_graph.as_default():
        v1.get_variable("x", initializer=1.0)
        with timed.region() as region:
            hook = Hook(str(tmp_path), save_steps=1, saver=v1.train.Saver())
            region.result = None
        with pytest.raises(RuntimeError, match=r"[Gg]lobal step"):
            hook.begin()
