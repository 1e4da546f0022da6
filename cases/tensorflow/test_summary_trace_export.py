"""tf.summary.trace_export: traced function graphs written as one summary event, read back and checked."""

import glob

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import config_pb2
from tensorflow.core.util import event_pb2

# trace_export stops the host-side tracer and writes what it collected through the default summary writer:
# a Python-level side effect on global trace state that no tf.function(jit_compile=True) can take, so the
# export is timed with timed.region() (the traced function itself runs through tf.function as usual).


@pytest.fixture(autouse=True)
def _clean_trace_state():
    """No trace left on and no default step, before and after each subtest."""
    tf.summary.trace_off()
    tf.summary.experimental.set_step(None)
    try:
        yield
    finally:
        tf.summary.trace_off()
        tf.summary.experimental.set_step(None)


def _summary_events(logdir) -> list:
    events = []
    for path in sorted(glob.glob(str(logdir / "events.out.tfevents.*"))):
        for record in tf.data.TFRecordDataset(path):
            events.append(event_pb2.Event.FromString(record.numpy()))
    return [e for e in events if e.HasField("summary")]


def _graph_ops(event) -> set:
    (value,) = event.summary.value
    meta = config_pb2.RunMetadata.FromString(tf.make_ndarray(value.tensor).item())
    return {node.op for fg in meta.function_graphs for node in fg.pre_optimization_graph.node}


def _traced_call(fn, *args):
    """Runs fn under an active graph trace; the caller exports."""
    tf.summary.trace_on(graph=True, profiler=False)
    return fn(*args)


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32], ids=lambda d: d.name
)
def test_trace_export_writes_graph(device, timed, tmp_path, dtype):
    x = np.arange(12).reshape(3, 4) % 5
    fn = tf.function(lambda a: tf.matmul(a, a, transpose_b=True) + tf.ones([], a.dtype))
    writer = tf.summary.create_file_writer(str(tmp_path))
    out = _traced_call(fn, tf.cast(tf.constant(x), dtype))
    with writer.as_default(), timed.region() as region:
        region.result = tf.summary.trace_export("traced_fn", step=5)
    writer.flush()
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), x @ x.T + 1)
    (event,) = _summary_events(tmp_path)
    assert event.step == 5
    (value,) = event.summary.value
    assert value.tag == "traced_fn"
    assert value.metadata.plugin_data.plugin_name == "graph_run_metadata_graph"
    assert {"MatMul", "AddV2"} <= _graph_ops(event)


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (7, 5), (512, 512)], ids=["empty", "1x1", "odd", "1MB"])
def test_trace_export_shapes(device, timed, tmp_path, shape):
    """The graph is written whatever the traced input's size (512x512 float32: 1 MB)."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    fn = tf.function(lambda a: tf.reduce_sum(tf.square(a), axis=0))
    writer = tf.summary.create_file_writer(str(tmp_path))
    out = _traced_call(fn, tf.constant(x))
    with writer.as_default(), timed.region() as region:
        region.result = tf.summary.trace_export("sq", step=0)
    writer.flush()
    np.testing.assert_allclose(out.numpy(), np.square(x).sum(0), rtol=1e-4)
    (event,) = _summary_events(tmp_path)
    assert {"Square", "Sum"} <= _graph_ops(event)


def test_trace_export_default_step(device, timed, tmp_path):
    # With no step argument, tf.summary.experimental.get_step() is used.
    fn = tf.function(lambda a: tf.nn.relu(a))
    writer = tf.summary.create_file_writer(str(tmp_path))
    _traced_call(fn, tf.constant([-1.0, 2.0]))
    tf.summary.experimental.set_step(11)
    with writer.as_default(), timed.region() as region:
        region.result = tf.summary.trace_export("relu")
    writer.flush()
    (event,) = _summary_events(tmp_path)
    assert event.step == 11 and "Relu" in _graph_ops(event)


def test_trace_export_two_functions(device, timed, tmp_path):
    f = tf.function(lambda a: tf.sin(a))
    g = tf.function(lambda a: tf.exp(a))
    writer = tf.summary.create_file_writer(str(tmp_path))
    _traced_call(f, tf.constant([0.5]))
    g(tf.constant([0.5]))
    with writer.as_default(), timed.region() as region:
        region.result = tf.summary.trace_export("both", step=1)
    writer.flush()
    (event,) = _summary_events(tmp_path)
    assert {"Sin", "Exp"} <= _graph_ops(event)


def test_trace_export_stops_the_trace(device, timed, tmp_path):
    # Export stops the trace: exporting again without trace_on is refused and writes nothing more.
    fn = tf.function(lambda a: a * 2)
    writer = tf.summary.create_file_writer(str(tmp_path))
    _traced_call(fn, tf.constant([1.0]))
    with writer.as_default():
        with timed.region() as region:
            region.result = tf.summary.trace_export("first", step=1)
        fn(tf.constant([2.0, 3.0]))
        with pytest.raises(ValueError, match="trace_on"):
            tf.summary.trace_export("second", step=2)
    writer.flush()
    assert [v.tag for e in _summary_events(tmp_path) for v in e.summary.value] == ["first"]


def test_trace_export_without_writer(device, timed, tmp_path):
    # Documented: metadata goes to the default writer "if one has been set"; without one nothing is written.
    fn = tf.function(lambda a: a + 1)
    writer = tf.summary.create_file_writer(str(tmp_path))
    _traced_call(fn, tf.constant([1.0]))
    with timed.region() as region:
        region.result = tf.summary.trace_export("nowhere", step=1)
    writer.flush()
    assert _summary_events(tmp_path) == []


def test_trace_export_refuses_missing_step(device, tmp_path):
    # Documented: ValueError when a default writer exists but no step is given or set.
    fn = tf.function(lambda a: a - 1)
    writer = tf.summary.create_file_writer(str(tmp_path))
    _traced_call(fn, tf.constant([1.0]))
    with writer.as_default(), pytest.raises(ValueError):
        tf.summary.trace_export("nostep")
