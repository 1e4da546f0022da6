"""torch.nn.Sequential: construction and .to(device), container semantics and the composed forward (timed)."""

from collections import OrderedDict

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 5e-3, torch.bfloat16: 4e-2}


def _tensor(shape, dtype, device, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(device=device, dtype=dtype)


def _build(device, *modules):
    return torch.nn.Sequential(*modules).to(device)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("batch,width", [(0, 4), (5, 3), (256, 512)], ids=["empty", "odd", "large"])
def test_sequential_forward_composes(device, timed, dtype, batch, width):
    torch.manual_seed(0)
    model = _build(
        device,
        torch.nn.Linear(width, 8, dtype=dtype),
        torch.nn.Tanh(),
        torch.nn.Linear(8, 2, dtype=dtype),
    )
    x = _tensor((batch, width), dtype, device)
    with torch.no_grad():
        y = timed(model, x)
    w1, b1, w2, b2 = (_np(p).astype(np.float64) for p in model.parameters())
    expected = np.tanh(_np(x).astype(np.float64) @ w1.T + b1) @ w2.T + b2
    assert y.shape == (batch, 2) and y.dtype == dtype
    tol = TOLS[dtype] * (np.sqrt(width) if dtype in (torch.float16, torch.bfloat16) else 1)
    np.testing.assert_allclose(_np(y), expected, rtol=tol * 10, atol=tol * 10)


def test_sequential_container_protocol(device, timed):
    layers = [torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1)]
    model = _build(device, *layers)
    assert len(model) == 3 and model[0] is layers[0] and model[-1] is layers[2]
    x = _tensor((5, 3), torch.float32, device)
    w1, b1, w2, b2 = (_np(p).astype(np.float64) for p in model.parameters())
    expected = np.maximum(_np(x).astype(np.float64) @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(_np(timed(model, x)), expected, rtol=1e-5, atol=1e-5)
    assert isinstance(model[1:], torch.nn.Sequential) and len(model[1:]) == 2
    assert [name for name, _ in model.named_children()] == ["0", "1", "2"]
    assert all(p.device.type == torch.device(device).type for p in model.parameters())
    model.append(torch.nn.Sigmoid())
    assert len(model) == 4 and isinstance(model[3], torch.nn.Sigmoid)
    del model[1]
    assert [type(m).__name__ for m in model] == ["Linear", "Linear", "Sigmoid"]


def test_sequential_from_ordered_dict(device, timed):
    model = _build(device, OrderedDict([("fc", torch.nn.Linear(2, 2)), ("act", torch.nn.ReLU())]))
    assert model.fc is model[0] and isinstance(model.act, torch.nn.ReLU)
    assert list(model.state_dict()) == ["fc.weight", "fc.bias"]
    x = _tensor((4, 2), torch.float32, device)
    expected = np.maximum(_np(x) @ _np(model.fc.weight).T + _np(model.fc.bias), 0)
    np.testing.assert_allclose(_np(timed(model, x)), expected, rtol=1e-5, atol=1e-6)


def test_empty_sequential_is_identity(device, timed):
    model = _build(device)
    x = _tensor((3, 2), torch.float32, device)
    assert timed(model, x) is x and len(model) == 0


def test_sequential_moves_buffers_and_parameters(device, timed):
    norm = torch.nn.BatchNorm1d(3, device="cpu")
    model = _build(device, torch.nn.Linear(3, 3, device="cpu"), norm)
    for tensor in [*model.parameters(), *model.buffers()]:
        assert tensor.device.type == torch.device(device).type
    x = _tensor((6, 3), torch.float32, device)
    y = timed.once(model, x)  # once: in training mode the forward updates the running stats
    assert y.device.type == torch.device(device).type and y.shape == (6, 3)
    h = _np(x).astype(np.float64) @ _np(model[0].weight).astype(np.float64).T + _np(model[0].bias)
    expected = (h - h.mean(0)) / np.sqrt(h.var(0) + norm.eps)  # batch statistics; weight 1, bias 0
    np.testing.assert_allclose(_np(y), expected, rtol=1e-4, atol=1e-4)
    assert int(norm.num_batches_tracked) == 1


def test_sequential_gradient(device, timed):
    model = _build(device, torch.nn.Linear(3, 2, dtype=torch.float64), torch.nn.Softplus())
    x = _tensor((4, 3), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(model, (x,))
    got = torch.autograd.grad(timed(model, x).sum(), (x, *model.parameters()))
    expected = torch.autograd.grad(model(x).sum(), (x, *model.parameters()))
    for g, e in zip(got, expected):
        np.testing.assert_allclose(_np(g), _np(e), rtol=1e-10, atol=1e-12)
