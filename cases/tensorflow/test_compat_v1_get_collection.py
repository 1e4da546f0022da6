"""tf.compat.v1.get_collection: items of a named graph collection, in insertion order, filtered by scope."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


@pytest.mark.parametrize("count", [0, 1, 5, 2000], ids=lambda n: f"n{n}")
def test_get_collection_order_and_values(device, timed, tf_graph, tf_session, count):
    with tf_graph.as_default():
        items = [tf.constant(float(i), name=f"c{i}") for i in range(count)]
        for item in items:
            v1.add_to_collection("things", item)
        with timed.region() as region:
            got = v1.get_collection("things")
            region.result = len(got)
    assert got == items
    if count:
        np.testing.assert_array_equal(tf_session.run(got[:50]), np.arange(min(count, 50), dtype=np.float32))


def test_get_collection_scope_filter(device, timed, tf_graph):
    with tf_graph.as_default():
        with tf.name_scope("enc"):
            a = tf.constant(1.0, name="a")
            b = tf.constant(2.0, name="b")
        with tf.name_scope("dec"):
            c = tf.constant(3.0, name="a")
        for t in (a, b, c):
            v1.add_to_collection("ts", t)
        with timed.region() as region:
            region.result = enc, dec, rx = (
                v1.get_collection("ts", scope="enc"),
                v1.get_collection("ts", scope="dec"),
                v1.get_collection("ts", scope=".*/a"),
            )
    assert enc == [a, b] and dec == [c] and rx == [a, c]


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32], ids=lambda d: d.name
)
def test_get_collection_global_variables(device, timed, tf_graph, tf_session, dtype):
    with tf_graph.as_default():
        x = v1.get_variable("x", initializer=tf.constant([1, 2, 3], dtype))
        y = v1.get_variable("y", initializer=tf.constant(4, dtype), trainable=False)
        with timed.region() as region:
            got = v1.get_collection(v1.GraphKeys.GLOBAL_VARIABLES)
            trainable = v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES)
            region.result = [v.name for v in got]
        tf_session.run(v1.global_variables_initializer())
    assert got == [x, y] and trainable == [x]
    values = tf_session.run(got)
    np.testing.assert_array_equal(values[0].astype(np.float64), [1, 2, 3])
    assert values[1] == 4


def test_get_collection_missing_and_copy(device, timed, tf_graph):
    with tf_graph.as_default():
        with timed.region() as region:
            region.result = missing = v1.get_collection("nope")
        assert missing == []
        v1.add_to_collection("k", 1)
        got = v1.get_collection("k")
        got.append(2)  # a copy: the collection itself is unchanged
        assert v1.get_collection("k") == [1] and v1.get_collection_ref("k") == [1]
        assert tf_graph.get_collection("k") == [1]
