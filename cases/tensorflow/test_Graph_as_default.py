"""tf.Graph.as_default: makes a graph the default for ops built in its block and restores the previous one.

The harness's tf_graph wraps as_default to pin a device; these tests call the real method
(tf.Graph.as_default) on that graph and pin the device themselves with graph.device(device).
"""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_ops_land_in_graph(device, timed, tf_graph, tf_session, dtype):
    before, eager_before = tf.compat.v1.get_default_graph(), tf.executing_eagerly()
    context = tf.Graph.as_default(tf_graph)
    with timed.region() as region:
        region.result = entered = context.__enter__()
    try:
        assert entered is tf_graph and tf.compat.v1.get_default_graph() is tf_graph
        assert not tf.executing_eagerly()
        with tf_graph.device(device):
            x = tf.constant([1, 2, 3], dtype)
            y = x * tf.constant(2, dtype)
    finally:
        context.__exit__(None, None, None)
    assert tf.compat.v1.get_default_graph() is before and tf.executing_eagerly() == eager_before
    assert y.graph is tf_graph and y.op in tf_graph.get_operations()
    assert y.device.endswith(device.lstrip("/"))
    out = tf_session.run(y)
    assert out.dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(out.astype(np.float64), [2, 4, 6])


@pytest.mark.parametrize("shape", [(0,), (7, 3), (512, 1024)], ids=str)
def test_graph_computation_shapes(device, timed, tf_graph, tf_session, shape):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    with timed.region() as region, tf.Graph.as_default(tf_graph) as g, g.device(device):
        region.result = y = tf.abs(tf.constant(data)) + 1.0
    np.testing.assert_allclose(tf_session.run(y), np.abs(data) + 1.0, rtol=1e-6)


def test_nested_graphs_restore(device, timed, tf_graph):
    other = tf.Graph()
    outer = tf.compat.v1.get_default_graph()
    with timed.region() as region, tf.Graph.as_default(tf_graph):
        with tf_graph.device(device):
            a = tf.constant(1.0, name="a")
        with tf.Graph.as_default(other):
            b = tf.constant(2.0, name="b")
            assert tf.compat.v1.get_default_graph() is other
        assert tf.compat.v1.get_default_graph() is tf_graph
        region.result = None
    assert tf.compat.v1.get_default_graph() is outer
    assert a.graph is tf_graph and b.graph is other
    assert [op.name for op in tf_graph.get_operations()] == ["a"]


def test_restores_on_exception_and_mixing_graphs_fails(device, timed, tf_graph):
    other = tf.Graph()
    with tf.Graph.as_default(other):
        foreign = tf.constant(1.0)
    before = tf.compat.v1.get_default_graph()
    with (
        pytest.raises(ValueError, match="graph"),
        timed.region(),
        tf.Graph.as_default(tf_graph),
        tf_graph.device(device),
    ):
        tf.add(foreign, tf.constant(1.0))
    assert tf.compat.v1.get_default_graph() is before
