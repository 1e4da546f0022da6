"""tf.name_scope: prefixes op and variable names (nesting, uniquing, absolute/root), values untouched."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_name_scope_prefixes_graph_ops(device, timed, tf_graph, tf_session, dtype):
    data = (np.arange(12).reshape(3, 4) % 5).astype(dtype.as_numpy_dtype)
    with timed.region() as region:
        with tf.name_scope("outer") as outer:
            a = tf.constant(data, dtype, name="a")
            with tf.name_scope("inner") as inner:
                total = tf.add(a, a, name="sum")
        region.result = total
    assert (outer, inner) == ("outer/", "outer/inner/")
    assert a.op.name == "outer/a" and total.op.name == "outer/inner/sum"
    assert total.name == "outer/inner/sum:0" and total.dtype == dtype
    got = tf_session.run(tf.cast(total, tf.float64))
    np.testing.assert_array_equal(got, 2 * data.astype(np.float64))


@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (7, 1, 5), (512, 512)], ids=str)
def test_name_scope_graph_values_unchanged(device, timed, tf_graph, tf_session, shape):
    """Scoping renames, it never changes what is computed (1 MB of float32 included)."""
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with tf_graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=shape, name="x")
    with timed.region() as region:
        with tf.name_scope("model"):
            y = tf.math.square(x, name="squared")
        region.result = y
    assert y.op.name == "model/squared" and tuple(y.shape) == shape
    np.testing.assert_array_equal(tf_session.run(y, {x: data}), data * data)


def test_name_scope_reentry_is_uniqued(device, timed, tf_graph):
    names = []
    with timed.region() as region:
        for _ in range(3):
            with tf.name_scope("block") as scope:
                names.append((scope, tf.constant(0.0, name="c").op.name))
        region.result = names
    assert names == [("block/", "block/c"), ("block_1/", "block_1/c"), ("block_2/", "block_2/c")]


def test_name_scope_absolute_and_root(device, timed, tf_graph):
    """A name ending in '/' re-enters that scope as is; '' returns to the root."""
    with timed.region() as region:
        with tf.name_scope("outer"), tf.name_scope("deep"):
            with tf.name_scope("outer/") as again:
                first = tf.constant(1.0, name="k")
            with tf.name_scope("") as root:
                top = tf.constant(2.0, name="top")
        region.result = (first, top)
    assert again == "outer/" and first.op.name == "outer/k"
    assert root == "" and top.op.name == "top"


def test_name_scope_eager(device, timed):
    """Eagerly the scope string nests and variables take it; tensors are computed as usual."""
    x = tf.constant(np.array([1.5, -0.0, np.inf], np.float32))
    with timed.region() as region:
        with tf.name_scope("layer") as outer, tf.name_scope("dense") as inner:
            v = tf.Variable(np.float32(2.0), name="kernel")
            y = x * v
        region.result = y
    assert (outer, inner) == ("layer/", "layer/dense/")
    assert v.name == "layer/dense/kernel:0"
    np.testing.assert_array_equal(y.numpy(), [3.0, -0.0, np.inf])
    assert np.signbit(y.numpy()[1])


def test_name_scope_inside_tf_function(device, timed):
    """Inside a traced function the graph ops carry the scope."""

    @tf.function
    def scoped(x: tf.Tensor) -> tf.Tensor:
        with tf.name_scope("fn_scope"):
            return tf.identity(x * 3.0, name="tripled")

    concrete = scoped.get_concrete_function(tf.TensorSpec((2,), tf.float32))
    names = {op.name for op in concrete.graph.get_operations()}
    assert "fn_scope/tripled" in names
    with timed.region() as region:
        region.result = out = scoped(tf.constant([1.0, -2.0]))
    np.testing.assert_array_equal(out.numpy(), [3.0, -6.0])


@pytest.mark.parametrize("name", ["bad name!", "-leading", "semi;colon"], ids=str)
def test_name_scope_refuses_invalid_names_in_graph(device, timed, tf_graph, name):
    with pytest.raises(ValueError), timed.region(), tf.name_scope(name):
        tf.constant(0.0)


@pytest.mark.parametrize("name", [None, 3, b"bytes"], ids=str)
def test_name_scope_refuses_non_string(device, timed, name):
    with pytest.raises((ValueError, TypeError)), timed.region(), tf.name_scope(name):
        pass
