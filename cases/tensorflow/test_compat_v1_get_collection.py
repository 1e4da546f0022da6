"""tf.compat.v1.get_collection: items of a named graph collection, in insertion order, filtered by scope.

The timed function gathers a collection and combines its items (as TF1 code sums the REGULARIZATION_LOSSES
collection); in compiled mode it is a tf.function(jit_compile=True) called in the graph, whose trace reads
the graph's collections. Its output is run with the session."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


@pytest.mark.parametrize("count", [0, 1, 5, 2000], ids=lambda n: f"n{n}")
def test_get_collection_order_and_values(device, timed, tf_graph, tf_session, count):
    seen = []

    def stacked():
        got = v1.get_collection("things")
        seen.append(got)
        return tf.stack(got) if got else tf.zeros((0,))

    with tf_graph.as_default():
        items = [tf.constant(float(i), name=f"c{i}") for i in range(count)]
        for item in items:
            v1.add_to_collection("things", item)
        out = timed.once(stacked)
    assert seen[-1] == items
    np.testing.assert_array_equal(tf_session.run(out), np.arange(count, dtype=np.float32))


def test_get_collection_scope_filter(device, timed, tf_graph, tf_session):
    seen = []

    def sums():
        enc, dec, rx = (
            v1.get_collection("ts", scope="enc"),
            v1.get_collection("ts", scope="dec"),
            v1.get_collection("ts", scope=".*/a"),
        )
        seen.append((enc, dec, rx))
        return [tf.add_n(enc), tf.add_n(dec), tf.add_n(rx)]

    with tf_graph.as_default():
        with tf.name_scope("enc"):
            a = tf.constant(1.0, name="a")
            b = tf.constant(2.0, name="b")
        with tf.name_scope("dec"):
            c = tf.constant(3.0, name="a")
        for t in (a, b, c):
            v1.add_to_collection("ts", t)
        out = timed.once(sums)
    enc, dec, rx = seen[-1]
    assert enc == [a, b] and dec == [c] and rx == [a, c]
    assert tf_session.run(out) == [3.0, 3.0, 4.0]


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32], ids=lambda d: d.name
)
def test_get_collection_global_variables(device, timed, tf_graph, tf_session, dtype):
    seen = []

    def read_all():
        got = v1.get_collection(v1.GraphKeys.GLOBAL_VARIABLES)
        trainable = v1.get_collection(v1.GraphKeys.TRAINABLE_VARIABLES)
        seen.append((got, trainable))
        return [v.read_value() for v in got]

    with tf_graph.as_default():
        x = v1.get_variable("x", initializer=tf.constant([1, 2, 3], dtype))
        y = v1.get_variable("y", initializer=tf.constant(4, dtype), trainable=False)
        out = timed.once(read_all)
        tf_session.run(v1.global_variables_initializer())
    got, trainable = seen[-1]
    assert got == [x, y] and trainable == [x]
    values = tf_session.run(out)
    np.testing.assert_array_equal(values[0].astype(np.float64), [1, 2, 3])
    assert values[1] == 4


def test_get_collection_missing_and_copy(device, timed, tf_graph, tf_session):
    seen = []

    def count_items():
        missing, got = v1.get_collection("nope"), v1.get_collection("k")
        seen.append((missing, got))
        return tf.constant([len(missing), len(got)])

    with tf_graph.as_default():
        v1.add_to_collection("k", 1)
        out = timed.once(count_items)
        missing, got = seen[-1]
        assert missing == [] and got == [1]
        got.append(2)  # a copy: the collection itself is unchanged
        assert v1.get_collection("k") == [1] and v1.get_collection_ref("k") == [1]
        assert tf_graph.get_collection("k") == [1]
    np.testing.assert_array_equal(tf_session.run(out), [0, 1])
