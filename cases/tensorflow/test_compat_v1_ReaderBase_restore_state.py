"""tf.compat.v1.ReaderBase.restore_state (paper: TextLineReader.restore_state): a reader resumes from a
serialized state. IdentityReader supports state; TextLineReader does not serialize it (Unimplemented).

The restore op is made through `timed.once`, so compiled mode puts it inside an XLA-compiled call
in the test's graph, the way a TF1 user compiles part of a graph; the session then runs that call.
The two rejection tests build the op directly: under XLA a compile error is also an
InvalidArgumentError, which would pass them for the wrong reason."""

import pytest
import tensorflow as tf

v1 = tf.compat.v1


def _restore_with(reader):
    """The function under test as a function of the state tensor (what compiled mode compiles)."""

    def restore(state):
        return reader.restore_state(state)

    return restore


def _reader_graph(items):
    reader = v1.IdentityReader()
    queue = v1.FIFOQueue(len(items) + 10, tf.string)
    enqueue = queue.enqueue_many([items])
    key, value = reader.read(queue)
    return reader, queue, enqueue, key, value


@pytest.mark.parametrize("reads_before", [0, 1, 3], ids=lambda n: f"after{n}")
def test_restore_rewinds_counters(device, timed, tf_graph, tf_session, reads_before):
    items = [f"w{i}" for i in range(6)]
    with tf_graph.as_default():
        reader, _queue, enqueue, key, _ = _reader_graph(items)
        state_op = reader.serialize_state()
        produced, completed = reader.num_records_produced(), reader.num_work_units_completed()
        state_in = v1.placeholder(tf.string, shape=())
        restore = timed.once(_restore_with(reader), state_in)
        restore = restore if restore is not None else tf_graph.get_operations()[-1]
    tf_session.run(enqueue)
    for _ in range(reads_before):
        tf_session.run(key)
    saved = tf_session.run(state_op)
    tf_session.run(key)
    tf_session.run(key)
    assert tf_session.run(produced) == reads_before + 2
    tf_session.run(restore, {state_in: saved})
    assert tf_session.run([produced, completed]) == [reads_before, reads_before]
    assert tf_session.run(state_op) == saved


def test_restore_into_fresh_reader(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        reader, _, enqueue, key, _ = _reader_graph(["a", "b", "c"])
        other = v1.IdentityReader()
        state = reader.serialize_state()
        restore = timed.once(_restore_with(other), state)
        restore = restore if restore is not None else tf_graph.get_operations()[-1]
        produced = other.num_records_produced()
    tf_session.run(enqueue)
    tf_session.run(key)
    tf_session.run(key)
    tf_session.run(restore)
    assert tf_session.run(produced) == 2


def test_restore_large_state_string(device, timed, tf_graph, tf_session):
    big = "x" * (1 << 20)  # the current work item is carried in the state: 1 MB
    with tf_graph.as_default():
        reader, _, enqueue, key, _ = _reader_graph([big, "tail"])
        state = reader.serialize_state()
        restore = timed.once(_restore_with(reader), state)
        restore = restore if restore is not None else tf_graph.get_operations()[-1]
    tf_session.run(enqueue)
    assert tf_session.run(key) == big.encode()
    tf_session.run(restore)
    assert big.encode() in tf_session.run(state)


def test_restore_garbage_raises(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        reader = v1.IdentityReader()
        restore = reader.restore_state(tf.constant(b"\xff\xfenot a proto"))
    with pytest.raises(tf.errors.InvalidArgumentError), timed.region():
        tf_session.run(restore)


def test_text_line_reader_state_unimplemented(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        reader = v1.TextLineReader()
        restore = reader.restore_state(tf.constant(b""))
    with pytest.raises(tf.errors.UnimplementedError), timed.region():
        tf_session.run(restore)


def test_readers_rejected_in_eager(device, timed):
    with pytest.raises(RuntimeError), timed.region():
        v1.IdentityReader()
