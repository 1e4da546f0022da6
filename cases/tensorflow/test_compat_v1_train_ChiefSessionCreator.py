"""tf.compat.v1.train.ChiefSessionCreator: sessions with variables initialized or restored, by value."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1
DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64]


def _config() -> v1.ConfigProto:
    return v1.ConfigProto(allow_soft_placement=False)  # keep the harness's pinning


def _create(timed, **kwargs) -> v1.Session:
    with timed.region() as region:
        region.result = session = v1.train.ChiefSessionCreator(config=_config(), **kwargs).create_session()
    return session


def _save_checkpoint(device: str, path: str, values: dict[str, np.ndarray]) -> str:
    """Writes `values` as variables of those names from a separate graph, pinned like the test's."""
    graph = tf.Graph()
    with graph.as_default(), graph.device(device):
        variables = [v1.get_variable(name, initializer=tf.constant(value)) for name, value in values.items()]
        saver = v1.train.Saver(variables)
        with v1.Session(graph=graph, config=_config()) as session:
            session.run(v1.global_variables_initializer())
            return saver.save(session, path)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_chief_session_initializes_variables(device, timed, tf_graph, dtype):
    data = (np.arange(12).reshape(3, 4) % 7 - 3).astype(dtype.as_numpy_dtype)
    v = v1.get_variable("v", initializer=tf.constant(data, dtype))
    w = v1.get_variable("w", initializer=tf.constant(np.float32(2.5)))
    session = _create(timed)
    try:
        got_v, got_w = session.run([v, w])
        assert got_v.dtype == dtype.as_numpy_dtype and got_v.shape == (3, 4)
        np.testing.assert_array_equal(got_v.astype(np.float64), data.astype(np.float64))
        assert got_w == 2.5
        assert tf_graph.finalized  # the default Scaffold finalizes the graph
    finally:
        session.close()


@pytest.mark.parametrize("shape", [(), (0, 3), (7, 5), (512, 512)], ids=str)
def test_chief_session_variable_shapes(device, timed, tf_graph, shape):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    v = v1.get_variable("v", initializer=tf.constant(data))
    doubled = v * 2.0
    session = _create(timed)
    try:
        np.testing.assert_array_equal(session.run(v), data)
        np.testing.assert_array_equal(session.run(doubled), data * 2)
    finally:
        session.close()


@pytest.mark.parametrize("how", ["checkpoint_dir", "checkpoint_filename_with_path"])
def test_chief_session_restores_checkpoint(device, timed, tf_graph, tmp_path, how):
    """Restored values (signed zero and inf included) win over the initializers."""
    saved = {"a": np.array([[1.5, -0.0], [np.inf, -2.0]], np.float32), "b": np.arange(5, dtype=np.int64)}
    path = _save_checkpoint(device, str(tmp_path / "model.ckpt"), saved)
    a = v1.get_variable("a", initializer=tf.zeros((2, 2)))
    b = v1.get_variable("b", initializer=tf.constant(np.full(5, 9, np.int64)))
    location = {"checkpoint_dir": str(tmp_path)} if how == "checkpoint_dir" else {how: path}
    session = _create(timed, **location)
    try:
        got_a, got_b = session.run([a, b])
        np.testing.assert_array_equal(got_a, saved["a"])
        assert np.signbit(got_a[0, 1])
        np.testing.assert_array_equal(got_b, saved["b"])
    finally:
        session.close()


def test_chief_session_empty_checkpoint_dir_initializes(device, timed, tf_graph, tmp_path):
    v = v1.get_variable("v", initializer=tf.constant([1.0, 2.0]))
    session = _create(timed, checkpoint_dir=str(tmp_path))
    try:
        np.testing.assert_array_equal(session.run(v), [1.0, 2.0])
    finally:
        session.close()


def test_chief_session_scaffold_hooks(device, timed, tf_graph):
    """init_feed_dict feeds the init op; init_fn runs after it; local variables get local_init_op."""
    fed = v1.placeholder(tf.float64, shape=(3,))
    v = v1.get_variable("v", initializer=fed, validate_shape=False)
    local = v1.Variable(np.float32(4.0), collections=[v1.GraphKeys.LOCAL_VARIABLES], name="local")
    bump = v1.assign_add(v, tf.constant([10.0, 10.0, 10.0], tf.float64))
    calls = []

    def init_fn(scaffold, session):
        calls.append(scaffold)
        session.run(bump)

    scaffold = v1.train.Scaffold(init_feed_dict={fed: np.array([1.0, 2.0, 3.0])}, init_fn=init_fn)
    session = _create(timed, scaffold=scaffold)
    try:
        assert calls == [scaffold]
        np.testing.assert_array_equal(session.run(v), [11.0, 12.0, 13.0])
        assert session.run(local) == 4.0
    finally:
        session.close()


def test_chief_session_refuses_unready_model(device, timed, tf_graph):
    """An init_op that leaves a variable uninitialized: the model is not ready (RuntimeError)."""
    v1.get_variable("v", initializer=tf.constant([1.0]))
    with pytest.raises(RuntimeError, match="not initialized"):
        _create(timed, scaffold=v1.train.Scaffold(init_op=tf.no_op()))


def test_chief_session_refuses_missing_checkpoint_file(device, timed, tf_graph, tmp_path):
    v1.get_variable("v", initializer=tf.constant([1.0]))
    with pytest.raises((ValueError, tf.errors.NotFoundError)):
        _create(timed, checkpoint_filename_with_path=str(tmp_path / "absent.ckpt"))
