"""tf.summary.flush: flushes a summary writer's pending events to its event file; the file then holds
every event written, with its step, tag and value. The flush is called by the timed function (in compiled
mode inside tf.function(jit_compile=True)), as a training step flushes its writer."""

import glob

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.util import event_pb2


def _events(logdir):
    events = []
    for path in sorted(glob.glob(str(logdir / "events.out.tfevents.*"))):
        for record in tf.data.TFRecordDataset(path):
            events.append(event_pb2.Event.FromString(record.numpy()))
    return [e for e in events if e.HasField("summary")]


def _writer(logdir):
    # A long queue and flush interval, so that only the explicit flush is meant to write the events out.
    return tf.summary.create_file_writer(str(logdir), max_queue=1000, flush_millis=10**8)


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64], ids=lambda d: d.name
)
def test_flush_writes_values(device, timed, tmp_path, dtype):
    writer = _writer(tmp_path)
    with writer.as_default():
        for step in range(4):
            tf.summary.write("value", tf.cast(tf.constant(step * 3), dtype), step=step)
    timed(lambda: tf.summary.flush(writer))
    events = _events(tmp_path)
    assert [e.step for e in events] == [0, 1, 2, 3]
    assert {v.tag for e in events for v in e.summary.value} == {"value"}
    values = [tf.make_ndarray(e.summary.value[0].tensor) for e in events]
    np.testing.assert_array_equal(np.array(values, np.float64), [0.0, 3.0, 6.0, 9.0])
    assert events[0].summary.value[0].tensor.dtype == dtype.as_datatype_enum


def test_flush_default_writer(device, timed, tmp_path):
    writer = _writer(tmp_path)
    with writer.as_default():
        tf.summary.write("a", tf.constant([1.0, 2.0]), step=7)
        timed(lambda: tf.summary.flush())
    (event,) = _events(tmp_path)
    assert event.step == 7
    np.testing.assert_array_equal(tf.make_ndarray(event.summary.value[0].tensor), [1.0, 2.0])


def test_flush_large_tensor(device, timed, tmp_path):
    """A 512x512 float32 summary tensor (1 MB)."""
    data = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    writer = _writer(tmp_path)
    with writer.as_default():
        tf.summary.write("big", tf.constant(data), step=1)
    timed(lambda: tf.summary.flush(writer))
    (event,) = _events(tmp_path)
    np.testing.assert_array_equal(tf.make_ndarray(event.summary.value[0].tensor), data)


def test_flush_inside_tf_function(device, timed, tmp_path):
    writer = _writer(tmp_path)

    @tf.function
    def log_and_flush(x, step):
        with writer.as_default():
            tf.summary.write("f", x * 2.0, step=step)
            tf.summary.flush()
        return x

    out = timed.once(log_and_flush, tf.constant(1.25), tf.constant(3, tf.int64))  # once: one event
    assert float(out) == 1.25
    (event,) = _events(tmp_path)
    assert event.step == 3 and float(tf.make_ndarray(event.summary.value[0].tensor)) == 2.5


def test_flush_without_writer_is_noop(device, timed, tmp_path):
    assert timed(lambda: tf.summary.flush()) is None
    assert _events(tmp_path) == []


def test_flush_empty_writer_and_closed_writer(device, timed, tmp_path):
    writer = _writer(tmp_path)
    timed(lambda: tf.summary.flush(writer))
    assert _events(tmp_path) == []
    with writer.as_default():
        tf.summary.write("late", tf.constant(1), step=0)
    writer.close()
    tf.summary.flush(writer)  # flushing a closed writer is harmless; close already wrote the event
    assert [e.summary.value[0].tag for e in _events(tmp_path)] == ["late"]
