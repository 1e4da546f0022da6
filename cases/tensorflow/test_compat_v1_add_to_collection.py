"""tf.compat.v1.add_to_collection: appends a value to a named collection of the default graph, in order."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


@pytest.mark.parametrize("count", [0, 1, 5, 2000], ids=lambda n: f"n{n}")
def test_add_to_collection_order(device, timed, tf_graph, tf_session, count):
    items = [tf.constant(float(i), name=f"c{i}") for i in range(count)]
    with timed.region() as region:
        for item in items:
            v1.add_to_collection("things", item)
        region.result = items
    assert tf_graph.get_collection("things") == items  # insertion order, same objects
    if count:
        total = tf_session.run(tf.add_n(v1.get_collection("things")))
        assert total == sum(range(count))


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.bool], ids=lambda d: d.name
)
def test_add_to_collection_tensors_run(device, timed, tf_graph, tf_session, dtype):
    data = np.array([[1, 0], [0, 1]]).astype(dtype.as_numpy_dtype)
    t = tf.constant(data, dtype)
    with timed.region():
        v1.add_to_collection(v1.GraphKeys.LOSSES, t)
    (got,) = v1.get_collection(v1.GraphKeys.LOSSES)
    assert got is t
    np.testing.assert_array_equal(tf_session.run(got).astype(np.float64), data.astype(np.float64))


def test_add_to_collection_any_values_and_names(device, timed, tf_graph):
    key = ("a", "tuple", "name")  # any hashable name works
    values = [1, "text", None, {"nested": [1, 2]}, 1]  # duplicates kept
    with timed.region():
        for value in values:
            v1.add_to_collection(key, value)
        v1.add_to_collection("other", 3.5)
    assert tf_graph.get_collection(key) == values
    assert tf_graph.get_collection("other") == [3.5]
    # get_all_collection_keys lists the string names only (non-string keys are internal uses).
    assert "other" in tf_graph.get_all_collection_keys() and key not in tf_graph.get_all_collection_keys()


def test_add_to_collection_targets_the_default_graph(device, timed, tf_graph):
    other = tf.Graph()
    with timed.region():
        v1.add_to_collection("k", "outer")
        with other.as_default():
            v1.add_to_collection("k", "inner")
    assert tf_graph.get_collection("k") == ["outer"] and other.get_collection("k") == ["inner"]


def test_add_to_collection_scope_filter(device, timed, tf_graph):
    with tf.name_scope("enc"):
        a = tf.constant(1.0, name="a")
    with tf.name_scope("dec"):
        b = tf.constant(2.0, name="a")
    with timed.region():
        v1.add_to_collection("named", a)
        v1.add_to_collection("named", b)
    assert v1.get_collection("named", scope="enc") == [a]
    assert v1.get_collection("named", scope="dec") == [b]


def test_add_to_collection_refusals(device, timed, tf_graph):
    with pytest.raises(TypeError), timed.region():
        v1.add_to_collection(["unhashable"], 1)
    tf_graph.finalize()
    with pytest.raises(RuntimeError, match="finalized"):
        v1.add_to_collection("late", 1)
    assert tf_graph.get_collection("late") == []
