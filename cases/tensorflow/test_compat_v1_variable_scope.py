"""tf.compat.v1.variable_scope: name prefixes, variable sharing (reuse), default initializers and
dtypes for get_variable in a graph. The scope is opened by the timed function, TF1 model code of a
tensor (in compiled mode a tf.function(jit_compile=True) called in the graph); its output and the
variables are run with the session."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16], ids=lambda d: d.name)
def test_scope_names_and_initializer(device, timed, tf_graph, tf_session, dtype):
    seen = []

    def layer(x):
        scope_args = {"initializer": v1.constant_initializer(0.5), "dtype": dtype}
        with v1.variable_scope("layer", **scope_args) as scope:
            w = v1.get_variable("w", shape=(3, 2))
        seen.append((scope, w))
        return tf.matmul(tf.cast(x, dtype), w)

    with tf_graph.as_default():
        out = timed.once(layer, tf.ones((2, 3)))
        scope, w = seen[-1]
        assert scope.name == "layer" and w.device == device
        assert w.name == "layer/w:0" and w.dtype.base_dtype == dtype and w.shape.as_list() == [3, 2]
        tf_session.run(v1.global_variables_initializer())
        value, result = tf_session.run([w, out])
    np.testing.assert_array_equal(value.astype(np.float64), np.full((3, 2), 0.5))
    np.testing.assert_array_equal(result.astype(np.float64), np.full((2, 2), 1.5))


def test_scope_reuse_shares_variables(device, timed, tf_graph, tf_session):
    seen = []

    def shared(x):
        with v1.variable_scope("shared", reuse=True):
            again = v1.get_variable("v")
        seen.append(again)
        return x * again

    with tf_graph.as_default():
        with v1.variable_scope("shared"):
            first = v1.get_variable("v", initializer=tf.constant([1.0, 2.0]))
        out = timed.once(shared, tf.constant([3.0, 4.0]))
        assert seen[-1] is first
        with v1.variable_scope("shared", reuse=v1.AUTO_REUSE):
            assert v1.get_variable("v") is first
            created = v1.get_variable("other", shape=(), initializer=v1.zeros_initializer())
        assert created.name == "shared/other:0"
        assert len(v1.global_variables()) == 2
        tf_session.run(v1.global_variables_initializer())
    np.testing.assert_array_equal(tf_session.run(out), [3.0, 8.0])


def test_scope_without_reuse_rejects_duplicates(device, timed, tf_graph):
    def duplicate(x):
        with v1.variable_scope("dup"):
            return x * v1.get_variable("v", shape=(1,))

    with tf_graph.as_default():
        with v1.variable_scope("dup"):
            v1.get_variable("v", shape=(1,))
        with pytest.raises(ValueError, match="already exists"):
            timed.once(duplicate, tf.ones((1,)))
        with pytest.raises(ValueError, match="does not exist"), v1.variable_scope("dup", reuse=True):
            v1.get_variable("missing", shape=(1,))


def test_nested_and_default_name_scopes(device, timed, tf_graph, tf_session):
    seen = []

    def blocks(x):
        with v1.variable_scope("outer"), v1.variable_scope("inner"):
            v = v1.get_variable("k", shape=(2,), initializer=v1.ones_initializer())
        names = []
        for _ in range(2):
            with v1.variable_scope(None, default_name="block"):
                names.append(v1.get_variable("b", shape=(), initializer=v1.zeros_initializer()).name)
        seen.append((v, names))
        return x + v

    with tf_graph.as_default():
        out = timed.once(blocks, tf.constant([1.0, 2.0]))
        v, names = seen[-1]
        assert v.name == "outer/inner/k:0"
        assert names == ["block/b:0", "block_1/b:0"]
        # Ops built in the scope get the name prefix too.
        with v1.variable_scope("outer", reuse=True):
            op = tf.identity(v, name="read")
        assert op.name.startswith("outer")
        tf_session.run(v1.global_variables_initializer())
        np.testing.assert_array_equal(tf_session.run(op), [1.0, 1.0])
        np.testing.assert_array_equal(tf_session.run(out), [2.0, 3.0])


def test_scope_large_variable_and_custom_getter(device, timed, tf_graph, tf_session):
    """A 1024x1024 float32 variable (4 MB) created through a custom getter that records names."""
    seen = []

    def recording_getter(getter, name, *args, **kwargs):
        seen.append(name)
        return getter(name, *args, **kwargs)

    def embed(ids):
        with v1.variable_scope("big", custom_getter=recording_getter):
            table = v1.get_variable(
                "table", shape=(1024, 1024), initializer=v1.random_uniform_initializer(-1.0, 1.0, seed=1)
            )
        return tf.gather(table, ids)

    with tf_graph.as_default():
        rows = timed.once(embed, tf.constant([0, 1023]))
        tf_session.run(v1.global_variables_initializer())
        (table,) = v1.global_variables()
        values, got_rows = tf_session.run([table, rows])
    assert seen[-1] == "big/table"
    assert values.shape == (1024, 1024) and values.dtype == np.float32
    assert values.min() >= -1.0 and values.max() < 1.0 and abs(values.mean()) < 0.01
    np.testing.assert_array_equal(got_rows, values[[0, 1023]])
