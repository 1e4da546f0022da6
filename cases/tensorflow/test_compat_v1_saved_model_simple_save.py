"""tf.compat.v1.saved_model.simple_save: writes a SavedModel of a session's graph with a serving
signature; loading it back restores variables and computes the same outputs."""

import numpy as np
import pytest
import tensorflow as tf


def _load_and_run(export_dir, feeds):
    graph = tf.Graph()
    with tf.compat.v1.Session(graph=graph) as session:
        meta = tf.compat.v1.saved_model.loader.load(
            session, [tf.compat.v1.saved_model.tag_constants.SERVING], export_dir
        )
        signature = meta.signature_def["serving_default"]
        fetch = {k: v.name for k, v in signature.outputs.items()}
        feed = {signature.inputs[k].name: v for k, v in feeds.items()}
        return signature, session.run(fetch, feed)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.int32], ids=lambda d: d.name)
def test_simple_save_round_trip(device, timed, tf_graph, tf_session, tmp_path, dtype):
    weights = (np.arange(12).reshape(3, 4) % 5).astype(dtype.as_numpy_dtype)
    with tf_graph.as_default():
        x = tf.compat.v1.placeholder(dtype, shape=(None, 3), name="x")
        w = tf.compat.v1.get_variable("w", initializer=tf.constant(weights))
        y = tf.matmul(x, w, name="y")
        tf_session.run(tf.compat.v1.global_variables_initializer())
        export_dir = str(tmp_path / "model")
        with timed.region() as region:
            tf.compat.v1.saved_model.simple_save(tf_session, export_dir, inputs={"x": x}, outputs={"y": y})
            region.result = export_dir
    assert (tmp_path / "model" / "saved_model.pb").exists()
    assert (tmp_path / "model" / "variables").is_dir()
    data = (np.arange(6).reshape(2, 3) % 3).astype(dtype.as_numpy_dtype)
    signature, out = _load_and_run(export_dir, {"x": data})
    assert signature.method_name == "tensorflow/serving/predict"
    np.testing.assert_array_equal(
        out["y"].astype(np.float64), data.astype(np.float64) @ weights.astype(np.float64)
    )


def test_simple_save_multiple_inputs_outputs(device, timed, tf_graph, tf_session, tmp_path):
    with tf_graph.as_default():
        a = tf.compat.v1.placeholder(tf.float32, shape=(None,))
        b = tf.compat.v1.placeholder(tf.float32, shape=(None,))
        scale = tf.compat.v1.get_variable("scale", initializer=tf.constant(2.5))
        tf_session.run(tf.compat.v1.global_variables_initializer())
        outputs = {"sum": (a + b) * scale, "diff": a - b}
        with timed.region() as region:
            tf.compat.v1.saved_model.simple_save(tf_session, str(tmp_path / "m"), {"a": a, "b": b}, outputs)
            region.result = None
    signature, out = _load_and_run(str(tmp_path / "m"), {"a": [1.0, 2.0], "b": [3.0, -1.0]})
    assert set(signature.inputs) == {"a", "b"} and set(signature.outputs) == {"sum", "diff"}
    np.testing.assert_allclose(out["sum"], [10.0, 2.5])
    np.testing.assert_allclose(out["diff"], [-2.0, 3.0])


def test_simple_save_large_variable(device, timed, tf_graph, tf_session, tmp_path):
    """A 1024x1024 float32 variable (4 MB) is saved and restored exactly."""
    values = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
    with tf_graph.as_default():
        x = tf.compat.v1.placeholder(tf.int32, shape=(None,))
        table = tf.compat.v1.get_variable("table", initializer=tf.constant(values))
        rows = tf.gather(table, x)
        tf_session.run(tf.compat.v1.global_variables_initializer())
        with timed.region() as region:
            tf.compat.v1.saved_model.simple_save(tf_session, str(tmp_path / "big"), {"x": x}, {"rows": rows})
            region.result = None
    _, out = _load_and_run(str(tmp_path / "big"), {"x": [0, 777, 1023]})
    np.testing.assert_array_equal(out["rows"], values[[0, 777, 1023]])


def test_simple_save_existing_directory_raises(device, timed, tf_graph, tf_session, tmp_path):
    with tf_graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=())
        (tmp_path / "taken").mkdir()
        (tmp_path / "taken" / "saved_model.pb").write_bytes(b"")
        with pytest.raises(AssertionError, match="already exists"), timed.region():
            tf.compat.v1.saved_model.simple_save(
                tf_session, str(tmp_path / "taken"), {"x": x}, {"y": x * 2.0}
            )
