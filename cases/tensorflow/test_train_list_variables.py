"""tf.train.list_variables: (name, shape) of every variable in a checkpoint, vs what was saved."""

import numpy as np
import pytest
import tensorflow as tf


def _save(tmp_path, **variables):
    checkpoint = tf.train.Checkpoint(**{k: tf.Variable(v) for k, v in variables.items()})
    return checkpoint.write(str(tmp_path / "ckpt"))


def _user_variables(listed):
    """Object-based checkpoints key a variable as '<attr>/.ATTRIBUTES/VARIABLE_VALUE'."""
    return {
        name.split("/")[0]: shape for name, shape in listed if name.endswith("/.ATTRIBUTES/VARIABLE_VALUE")
    }


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.float16, np.int32, np.int64], ids=lambda d: d.__name__
)
def test_list_variables_shapes(device, timed, tmp_path, dtype):
    prefix = _save(tmp_path, a=np.zeros((2, 3), dtype), b=np.ones((5,), dtype), c=np.array(7, dtype))
    with timed.region() as region:
        region.result = tf.train.list_variables(prefix)
    listed = region.result
    assert listed == sorted(listed)
    assert _user_variables(listed) == {"a": [2, 3], "b": [5], "c": []}
    reader = tf.train.load_checkpoint(prefix)
    np.testing.assert_array_equal(reader.get_tensor("b/.ATTRIBUTES/VARIABLE_VALUE"), np.ones(5, dtype))


def test_list_variables_from_directory(device, timed, tmp_path):
    """Given a directory, the latest checkpoint in it is listed."""
    checkpoint = tf.train.Checkpoint(w=tf.Variable(tf.zeros((4, 4))))
    manager = tf.train.CheckpointManager(checkpoint, str(tmp_path), max_to_keep=2)
    manager.save()
    checkpoint.v = tf.Variable(tf.zeros((3,)))
    manager.save()
    with timed.region() as region:
        region.result = tf.train.list_variables(str(tmp_path))
    # Checkpoint.save (through the manager) also stores its save counter.
    assert _user_variables(region.result) == {"w": [4, 4], "v": [3], "save_counter": []}


def test_list_variables_large(device, timed, tmp_path):
    """Many variables, one of them 4 MB."""
    arrays = {f"v{i:03d}": np.full((i % 5 + 1, 3), i, np.float32) for i in range(200)}
    arrays["big"] = np.zeros((1024, 1024), np.float32)
    prefix = _save(tmp_path, **arrays)
    with timed.region() as region:
        region.result = tf.train.list_variables(prefix)
    found = _user_variables(region.result)
    assert found == {name: list(value.shape) for name, value in arrays.items()}


def test_list_variables_tf1_saver(device, timed, tmp_path, tf_graph, tf_session):
    """A name-based (tf.compat.v1.train.Saver) checkpoint lists the graph's variable names."""
    with tf_graph.as_default():
        with tf.compat.v1.variable_scope("layer"):
            tf.compat.v1.get_variable("kernel", shape=(3, 2))
            tf.compat.v1.get_variable("bias", shape=(2,))
        saver = tf.compat.v1.train.Saver()
        tf_session.run(tf.compat.v1.global_variables_initializer())
        prefix = saver.save(tf_session, str(tmp_path / "model"))
    with timed.region() as region:
        region.result = tf.train.list_variables(prefix)
    assert region.result == [("layer/bias", [2]), ("layer/kernel", [3, 2])]


def test_list_variables_missing_raises(device, timed, tmp_path):
    with pytest.raises((ValueError, tf.errors.NotFoundError)), timed.region():
        tf.train.list_variables(str(tmp_path / "nothing"))
