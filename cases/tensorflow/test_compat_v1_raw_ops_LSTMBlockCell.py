"""tf.compat.v1.raw_ops.LSTMBlockCell: one LSTM step (all 7 outputs), against a NumPy LSTM cell."""

import numpy as np
import pytest
import tensorflow as tf

NAMES = ("i", "cs", "f", "o", "ci", "co", "h")


def _cell(x, cs_prev, h_prev, w, wci, wcf, wco, b, **attrs):
    return tf.compat.v1.raw_ops.LSTMBlockCell(
        x=x, cs_prev=cs_prev, h_prev=h_prev, w=w, wci=wci, wcf=wcf, wco=wco, b=b, **attrs
    )


def _inputs(batch: int, inp: int, cell: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(inp + cell)  # keeps pre-activations O(1): gates neither saturate nor vanish
    return [
        rng.standard_normal((batch, inp)),
        rng.standard_normal((batch, cell)),
        rng.standard_normal((batch, cell)),
        rng.standard_normal((inp + cell, 4 * cell)) * scale,
        rng.standard_normal(cell),
        rng.standard_normal(cell),
        rng.standard_normal(cell),
        rng.standard_normal(4 * cell) * 0.5,
    ]


def _reference(x, cs_prev, h_prev, w, wci, wcf, wco, b, forget_bias=1.0, cell_clip=3.0, use_peephole=False):
    """The op's documented step in float64, gate blocks of w and b in the order i, ci, f, o."""

    def sigmoid(z):
        return 1.0 / (1.0 + np.exp(-z))

    if not use_peephole:
        wci = wcf = wco = np.zeros_like(wci)
    pre_i, pre_ci, pre_f, pre_o = np.split(np.concatenate([x, h_prev], axis=1) @ w + b, 4, axis=1)
    i = sigmoid(pre_i + cs_prev * wci)
    f = sigmoid(pre_f + forget_bias + cs_prev * wcf)
    ci = np.tanh(pre_ci)
    cs = ci * i + cs_prev * f
    if cell_clip > 0:
        cs = np.clip(cs, -cell_clip, cell_clip)
    o = sigmoid(pre_o + cs * wco)
    co = np.tanh(cs)
    return i, cs, f, o, ci, co, co * o


def _check(out, expected, atol: float) -> None:
    assert tuple(out._fields) == NAMES
    for name, got, want in zip(NAMES, out, expected):
        assert tuple(got.shape) == want.shape, name
        np.testing.assert_allclose(tf.cast(got, tf.float64).numpy(), want, atol=atol, rtol=0, err_msg=name)


@pytest.mark.parametrize("dtype,atol", [(tf.float32, 1e-5), (tf.float16, 1e-2)], ids=["float32", "float16"])
@pytest.mark.parametrize("use_peephole", [False, True], ids=["plain", "peephole"])
def test_lstm_block_cell_values(device, timed, dtype, atol, use_peephole):
    arrays = _inputs(3, 4, 5)
    # The reference works on the inputs as rounded to the op's dtype.
    rounded = [a.astype(dtype.as_numpy_dtype).astype(np.float64) for a in arrays]
    out = timed(_cell, *[tf.constant(a, dtype) for a in arrays], use_peephole=use_peephole)
    assert all(t.dtype == dtype for t in out)
    _check(out, _reference(*rounded, use_peephole=use_peephole), atol)


@pytest.mark.parametrize("forget_bias", [0.0, 1.0, 5.0], ids=str)
@pytest.mark.parametrize("cell_clip", [-1.0, 0.25, 3.0], ids=lambda c: "noclip" if c < 0 else f"clip{c}")
def test_lstm_block_cell_options(device, timed, forget_bias, cell_clip):
    """forget_bias is added to the forget gate; cs is clipped to [-cell_clip, cell_clip] when positive."""
    arrays = [a.astype(np.float32) for a in _inputs(4, 3, 6, seed=1)]
    arrays[1] *= 4.0  # a large previous cell state so that clipping has work to do
    attrs = {"forget_bias": forget_bias, "cell_clip": cell_clip, "use_peephole": True}
    out = timed(_cell, *map(tf.constant, arrays), **attrs)
    expected = _reference(*(a.astype(np.float64) for a in arrays), forget_bias, cell_clip, True)
    _check(out, expected, 2e-5)
    if cell_clip > 0:
        assert np.abs(out.cs.numpy()).max() <= cell_clip


@pytest.mark.parametrize("batch,inp,cell", [(1, 1, 1), (7, 3, 5), (64, 384, 128)], ids=str)
def test_lstm_block_cell_shapes(device, timed, batch, inp, cell):
    """Odd sizes and a 512x512 float32 weight matrix (1 MB)."""
    arrays = [a.astype(np.float32) for a in _inputs(batch, inp, cell, seed=2)]
    out = timed(_cell, *map(tf.constant, arrays))
    _check(out, _reference(*(a.astype(np.float64) for a in arrays)), 5e-5)


def test_lstm_block_cell_saturated_gates(device, timed):
    """Huge pre-activations saturate the gates to exactly 0/1 without NaN."""
    arrays = [a.astype(np.float32) for a in _inputs(2, 2, 3, seed=3)]
    arrays[7] = np.array([100.0] * 3 + [-100.0] * 3 + [-100.0] * 3 + [100.0] * 3, np.float32)
    out = timed(_cell, *map(tf.constant, arrays), forget_bias=0.0, cell_clip=-1.0)
    np.testing.assert_allclose(out.i.numpy(), 1.0)
    np.testing.assert_allclose(out.f.numpy(), 0.0, atol=1e-30)
    np.testing.assert_allclose(out.ci.numpy(), -1.0)
    np.testing.assert_allclose(out.cs.numpy(), -1.0)  # ci * i + cs_prev * 0
    np.testing.assert_allclose(out.h.numpy(), np.tanh(-1.0), rtol=1e-6)


def test_lstm_block_cell_refuses_float64(device, timed):
    """The op's T attribute allows half and float only."""
    arrays = _inputs(2, 3, 4)
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError), match="allowed values"):
        timed(_cell, *map(tf.constant, arrays))


def test_lstm_block_cell_refuses_bad_weight_shape(device, timed):
    arrays = [a.astype(np.float32) for a in _inputs(2, 3, 4)]
    arrays[3] = arrays[3][:, :-1]  # 15 columns instead of 4 * cell_size
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="cell_size"):
        timed(_cell, *map(tf.constant, arrays))


def test_lstm_block_cell_refuses_empty_state(device, timed):
    """A zero-sized batch is refused ("is empty"), as upstream checks."""
    arrays = [a.astype(np.float32) for a in _inputs(2, 3, 4)]
    for k in range(3):
        arrays[k] = arrays[k][:0]
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError), match="is empty"):
        timed(_cell, *map(tf.constant, arrays))
