"""torch.nn.LSTMCell: construction, parameter layout and init, and one step (timed) against NumPy."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 5e-3, torch.bfloat16: 4e-2}


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _reference(cell, x, h, c):
    """One LSTM step, gates in the order input, forget, cell, output (as documented)."""
    w_ih, w_hh = _np(cell.weight_ih).astype(np.float64), _np(cell.weight_hh).astype(np.float64)
    gates = x @ w_ih.T + h @ w_hh.T
    if cell.bias:
        gates = gates + _np(cell.bias_ih).astype(np.float64) + _np(cell.bias_hh).astype(np.float64)
    i, f, g, o = np.split(gates, 4, axis=-1)
    c_next = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    return _sigmoid(o) * np.tanh(c_next), c_next


def _build(device, dtype, *args, **kwargs):
    return torch.nn.LSTMCell(*args, device=device, dtype=dtype, **kwargs)


def _tensor(shape, dtype, device, seed):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "sizes", [(3, 5, 4), (10, 7, 0), (1, 1, 1), (512, 256, 64)], ids=["small", "empty_batch", "unit", "large"]
)
def test_lstmcell_step(device, timed, dtype, sizes):
    input_size, hidden, batch = sizes
    cell = _build(device, dtype, input_size, hidden)
    assert cell.weight_ih.shape == (4 * hidden, input_size) and cell.weight_hh.shape == (4 * hidden, hidden)
    assert cell.bias_ih.shape == (4 * hidden,) and all(p.dtype == dtype for p in cell.parameters())
    x, h, c = (
        _tensor((batch, input_size), dtype, device, 1),
        _tensor((batch, hidden), dtype, device, 2),
        _tensor((batch, hidden), dtype, device, 3),
    )
    with torch.no_grad():
        h1, c1 = timed(cell, x, (h, c))
    assert h1.shape == (batch, hidden) and h1.dtype == dtype and c1.dtype == dtype
    ref_h, ref_c = _reference(cell, *(_np(t).astype(np.float64) for t in (x, h, c)))
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(h1), ref_h, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(_np(c1), ref_c, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("hidden", [1, 16, 100])
def test_lstmcell_init_is_uniform_in_bound(device, timed, hidden):
    cell = _build(device, torch.float32, 8, hidden)
    bound = 1 / np.sqrt(hidden)
    for p in cell.parameters():
        values = _np(p)
        assert values.min() >= -bound and values.max() <= bound
    assert cell.input_size == 8 and cell.hidden_size == hidden
    x = _tensor((3, 8), torch.float32, device, 0)
    with torch.no_grad():
        h1, c1 = timed(cell, x)
    zeros = np.zeros((3, hidden))
    ref_h, ref_c = _reference(cell, _np(x).astype(np.float64), zeros, zeros)
    np.testing.assert_allclose(_np(h1), ref_h, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(c1), ref_c, rtol=1e-4, atol=1e-4)


def test_lstmcell_without_bias_and_default_state(device, timed):
    cell = _build(device, torch.float64, 4, 3, bias=False)
    assert cell.bias_ih is None and cell.bias_hh is None and len(list(cell.parameters())) == 2
    x = _tensor((2, 4), torch.float64, device, 0)
    h1, c1 = timed(cell, x)
    zeros = np.zeros((2, 3))
    ref_h, ref_c = _reference(cell, _np(x), zeros, zeros)
    np.testing.assert_allclose(_np(h1), ref_h, rtol=1e-12)
    np.testing.assert_allclose(_np(c1), ref_c, rtol=1e-12)


def test_lstmcell_unbatched_input(device, timed):
    cell = _build(device, torch.float64, 4, 3)
    x = _tensor((4,), torch.float64, device, 0)
    h1, c1 = timed(cell, x)
    assert h1.shape == (3,) and c1.shape == (3,)
    batched_h, _ = cell(x.unsqueeze(0))
    np.testing.assert_allclose(_np(h1), _np(batched_h[0]), rtol=1e-12)


def test_lstmcell_rejects_bad_sizes(device, timed):
    with pytest.raises(RuntimeError):
        torch.nn.LSTMCell(4, -1, device=device)
    cell = _build(device, torch.float32, 4, 3)
    with pytest.raises(RuntimeError):
        timed(cell, torch.zeros(2, 5, device=device))


def test_lstmcell_gradient(device, timed):
    cell = _build(device, torch.float64, 3, 2)
    x = _tensor((2, 3), torch.float64, device, 0).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: cell(t), (x,))
    h1, c1 = timed(cell, x)
    got = torch.autograd.grad((h1 * 2 + c1).sum(), (x, *cell.parameters()))
    h0, c0 = cell(x)
    expected = torch.autograd.grad((h0 * 2 + c0).sum(), (x, *cell.parameters()))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(_np(g), _np(e), rtol=1e-10, atol=1e-12)
