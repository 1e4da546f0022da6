"""tf.compat.v1.train.QueueRunner: threads that run enqueue ops into a queue until stopped or out of range."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


@pytest.mark.parametrize(
    "dtype", [tf.float32, tf.float64, tf.float16, tf.int32, tf.int64], ids=lambda d: d.name
)
def test_enqueues_until_input_exhausted(device, timed, tf_graph, tf_session, dtype):
    data = np.arange(10).astype(dtype.as_numpy_dtype)
    with tf_graph.as_default():
        source = v1.FIFOQueue(20, dtype, shapes=[()])
        fill = source.enqueue_many([data])
        close = source.close()
        target = v1.FIFOQueue(20, dtype, shapes=[()])
        move = target.enqueue(source.dequeue())
        with timed.region() as region:
            runner = v1.train.QueueRunner(target, [move])
            region.result = None
        size = target.size()
        take = target.dequeue_many(10)
    tf_session.run(fill)
    tf_session.run(close)
    coord = v1.train.Coordinator()
    threads = runner.create_threads(tf_session, coord=coord, start=True)
    got = tf_session.run(take)  # blocks until the runner moved all 10 (then it closes the queue)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    assert tf_session.run(size) == 0
    np.testing.assert_array_equal(np.sort(got), data)
    assert runner.exceptions_raised == []


@pytest.mark.parametrize("n_ops", [1, 3], ids=lambda n: f"ops{n}")
def test_several_enqueue_ops_threads(device, timed, tf_graph, tf_session, n_ops):
    with tf_graph.as_default():
        queue = v1.FIFOQueue(1000, tf.float32, shapes=[(256, 256)])  # 256 KB per element
        ops = [queue.enqueue(tf.fill((256, 256), float(i))) for i in range(n_ops)]
        with timed.region() as region:
            runner = v1.train.QueueRunner(queue, ops)
            region.result = None
        batch = queue.dequeue_many(12)
    coord = v1.train.Coordinator()
    threads = runner.create_threads(tf_session, coord=coord, start=True)
    assert len(threads) == n_ops + 1  # one per op plus the close-on-stop thread
    got = tf_session.run(batch)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)
    assert got.shape == (12, 256, 256)
    assert set(np.unique(got[:, 0, 0])) <= set(float(i) for i in range(n_ops))
    np.testing.assert_array_equal(got, np.broadcast_to(got[:, :1, :1], got.shape))


def test_proto_roundtrip_and_collection(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        queue = v1.FIFOQueue(5, tf.int32, shapes=[()], name="q")
        op = queue.enqueue(tf.constant(7))
        with timed.region() as region:
            runner = v1.train.QueueRunner(queue, [op])
            region.result = None
        proto = runner.to_proto()
        assert proto.queue_name == "q" and list(proto.enqueue_op_name) == [op.name]
        again = v1.train.QueueRunner.from_proto(proto)
        assert again.queue.name == queue.name and again.enqueue_ops[0] is op
        v1.train.add_queue_runner(runner)
        assert v1.get_collection(v1.GraphKeys.QUEUE_RUNNERS) == [runner]
        take = queue.dequeue_many(5)
    coord = v1.train.Coordinator()
    threads = v1.train.start_queue_runners(tf_session, coord=coord)
    np.testing.assert_array_equal(tf_session.run(take), [7] * 5)
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=10)


def test_enqueue_error_reported(device, timed, tf_graph, tf_session):
    with tf_graph.as_default():
        queue = v1.FIFOQueue(5, tf.float32, shapes=[()])
        x = v1.placeholder(tf.float32, shape=())
        with timed.region() as region:
            runner = v1.train.QueueRunner(queue, [queue.enqueue(x)])  # runs without a feed: fails
            region.result = None
    coord = v1.train.Coordinator()
    threads = runner.create_threads(tf_session, coord=coord, start=True)
    with pytest.raises(tf.errors.InvalidArgumentError):
        coord.join(threads, stop_grace_period_secs=10)


def test_rejected_in_eager(device, timed):
    with pytest.raises(RuntimeError), timed.region():
        v1.train.QueueRunner(queue=None, enqueue_ops=[])
