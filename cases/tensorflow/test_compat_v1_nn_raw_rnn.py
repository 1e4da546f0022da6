"""tf.compat.v1.nn.raw_rnn: a dynamic RNN loop driven by loop_fn, against a NumPy recurrence
(emit zeros and keep the state once a sequence is finished)."""

import numpy as np
import pytest
import tensorflow as tf

TOL = {tf.float32: 1e-5, tf.float64: 1e-12}


class TanhCell:
    """A minimal RNN cell: h' = tanh(x W + h U); output = state = h'."""

    def __init__(self, w, u):
        self.w, self.u = w, u
        self.output_size = self.state_size = int(u.shape[0])

    def zero_state(self, batch_size, dtype):
        return tf.zeros((batch_size, self.state_size), dtype)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return self.zero_state(batch_size, dtype)

    def __call__(self, inputs, state):
        h = tf.tanh(tf.matmul(inputs, self.w) + tf.matmul(state, self.u))
        return h, h


def _loop_fn(inputs, lengths, cell, dtype):
    max_time = int(inputs.shape[0])
    batch = int(inputs.shape[1])

    def loop_fn(time, cell_output, cell_state, loop_state):
        emit = cell_output
        state = cell.zero_state(batch, dtype) if cell_output is None else cell_state
        finished = time >= lengths
        all_done = tf.reduce_all(finished)
        nxt = tf.cond(
            all_done, lambda: tf.zeros_like(inputs[0]), lambda: inputs[tf.minimum(time, max_time - 1)]
        )
        return finished, nxt, state, emit, None

    return loop_fn


def _reference(x, lengths, w, u):
    max_time, batch, _ = x.shape
    h = np.zeros((batch, u.shape[0]))
    outs = np.zeros((max_time, batch, u.shape[0]))
    for t in range(max_time):
        new = np.tanh(x[t] @ w + h @ u)
        alive = (t < lengths)[:, None]
        outs[t] = np.where(alive, new, 0.0)
        h = np.where(alive, new, h)
    return outs, h


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
@pytest.mark.parametrize(
    "time_batch,lengths",
    [((4, 3), (4, 2, 1)), ((1, 1), (1,)), ((6, 2), (6, 6)), ((5, 4), (0, 5, 3, 1))],
    ids=str,
)
def test_raw_rnn_matches_recurrence(device, timed, dtype, time_batch, lengths):
    max_time, batch = time_batch
    rng = np.random.default_rng(0)
    x = rng.standard_normal((max_time, batch, 3))
    w, u = rng.standard_normal((3, 5)) * 0.5, rng.standard_normal((5, 5)) * 0.5
    cell = TanhCell(tf.constant(w, dtype), tf.constant(u, dtype))
    loop_fn = _loop_fn(tf.constant(x, dtype), tf.constant(lengths, tf.int32), cell, dtype)
    emit_ta, final_state, _ = timed(tf.compat.v1.nn.raw_rnn, cell, loop_fn)
    outputs = emit_ta.stack().numpy()
    expected_out, expected_state = _reference(x, np.array(lengths), w, u)
    steps = max(lengths)
    assert outputs.shape == (steps, batch, 5)
    np.testing.assert_allclose(outputs, expected_out[:steps], rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(final_state.numpy(), expected_state, rtol=TOL[dtype], atol=TOL[dtype])


def test_raw_rnn_large_batch(device, timed):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 1024, 32)).astype(np.float32)  # 1 MB of inputs
    w, u = (
        (rng.standard_normal((32, 16)) * 0.2).astype(np.float32),
        (rng.standard_normal((16, 16)) * 0.2).astype(np.float32),
    )
    lengths = rng.integers(1, 9, 1024)
    cell = TanhCell(tf.constant(w), tf.constant(u))
    loop_fn = _loop_fn(tf.constant(x), tf.constant(lengths, tf.int32), cell, tf.float32)
    emit_ta, final_state, _ = timed(tf.compat.v1.nn.raw_rnn, cell, loop_fn)
    expected_out, expected_state = _reference(x.astype(np.float64), lengths, w, u)
    np.testing.assert_allclose(emit_ta.stack().numpy(), expected_out[: lengths.max()], atol=1e-5)
    np.testing.assert_allclose(final_state.numpy(), expected_state, atol=1e-5)


def test_raw_rnn_loop_state(device, timed):
    """loop_state is threaded through: count the steps taken."""
    cell = TanhCell(tf.eye(2, dtype=tf.float64), tf.zeros((2, 2), tf.float64))
    inputs = tf.ones((3, 1, 2), tf.float64)
    lengths = tf.constant([3])

    def loop_fn(time, cell_output, cell_state, loop_state):
        state = cell.zero_state(1, tf.float64) if cell_output is None else cell_state
        count = tf.constant(0) if loop_state is None else loop_state + 1
        return time >= lengths, inputs[tf.minimum(time, 2)], state, cell_output, count

    _, final_state, final_loop = timed(tf.compat.v1.nn.raw_rnn, cell, loop_fn)
    assert int(final_loop) == 3
    np.testing.assert_allclose(final_state.numpy(), np.tanh([[1.0, 1.0]]), rtol=1e-12)


def test_raw_rnn_gradient(device, timed):
    w = tf.Variable([[0.5]], dtype=tf.float64)
    cell = TanhCell(w, tf.constant([[0.0]], tf.float64))
    inputs = tf.constant([[[1.0]], [[2.0]]], tf.float64)
    loop_fn = _loop_fn(inputs, tf.constant([2]), cell, tf.float64)
    with tf.GradientTape() as tape:
        emit_ta, _, _ = timed(tf.compat.v1.nn.raw_rnn, cell, loop_fn)
        loss = tf.reduce_sum(emit_ta.stack())
    grad = tape.gradient(loss, w).numpy()
    expected = (1 - np.tanh(0.5) ** 2) * 1.0 + (1 - np.tanh(1.0) ** 2) * 2.0
    np.testing.assert_allclose(grad, [[expected]], rtol=1e-10)
