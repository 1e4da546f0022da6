"""torch.nn.Linear: construction and .to(device), init bounds, and y = x W^T + b (the forward pass timed)
against NumPy."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 5e-3, torch.bfloat16: 4e-2}


def _build(device, in_features, out_features, dtype=None, **kwargs):
    return torch.nn.Linear(in_features, out_features, dtype=dtype, **kwargs).to(device)


def _tensor(shape, dtype, device, seed=0):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "in_f,out_f,batch",
    [(3, 5, (4,)), (3, 5, (0,)), (7, 1, (2, 3)), (1024, 512, (64,))],
    ids=["study_3x5", "empty_batch", "batch_dims", "large"],
)
def test_linear_forward(device, timed, dtype, in_f, out_f, batch):
    layer = _build(device, in_f, out_f, dtype=dtype)
    assert layer.weight.shape == (out_f, in_f) and layer.bias.shape == (out_f,)
    assert layer.weight.dtype == dtype and layer.weight.device.type == torch.device(device).type
    x = _tensor((*batch, in_f), dtype, device)
    with torch.no_grad():
        y = timed(layer, x)
    expected = _np(x).astype(np.float64) @ _np(layer.weight).astype(np.float64).T + _np(layer.bias)
    assert y.shape == (*batch, out_f) and y.dtype == dtype
    tol = TOLS[dtype] * (np.sqrt(in_f) if dtype in (torch.float16, torch.bfloat16) else 1)
    np.testing.assert_allclose(_np(y), expected, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("in_f", [1, 3, 100])
def test_linear_init_bounds(device, timed, in_f):
    layer = _build(device, in_f, 50)
    bound = 1 / np.sqrt(in_f)
    for p in (layer.weight, layer.bias):
        assert -bound <= p.min().item() and p.max().item() <= bound
    assert layer.weight.requires_grad and layer.bias.requires_grad
    x = _tensor((2, in_f), torch.float32, device)
    expected = _np(x).astype(np.float64) @ _np(layer.weight).astype(np.float64).T + _np(layer.bias)
    np.testing.assert_allclose(_np(timed(layer, x)), expected, rtol=1e-4, atol=1e-4)


def test_linear_without_bias(device, timed):
    layer = _build(device, 4, 2, dtype=torch.float64, bias=False)
    assert layer.bias is None and len(list(layer.parameters())) == 1
    x = _tensor((3, 4), torch.float64, device)
    np.testing.assert_allclose(_np(timed(layer, x)), _np(x) @ _np(layer.weight).T, rtol=1e-12)


def test_linear_zero_in_features(device, timed):
    layer = _build(device, 0, 3, dtype=torch.float32)
    y = timed(layer, torch.empty(2, 0, device=device))
    np.testing.assert_allclose(_np(y), np.broadcast_to(_np(layer.bias), (2, 3)))


def test_linear_shape_mismatch(device, timed):
    layer = _build(device, 3, 5)
    with pytest.raises(RuntimeError):
        timed(layer, torch.zeros(2, 4, device=device))


def test_linear_gradients(device, timed):
    layer = _build(device, 3, 5, dtype=torch.float64)
    x = _tensor((4, 3), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(layer, (x,))
    layer.zero_grad()
    timed(layer, x).sum().backward()
    np.testing.assert_allclose(_np(layer.weight.grad), np.tile(_np(x).sum(0), (5, 1)), rtol=1e-12)
    np.testing.assert_allclose(_np(layer.bias.grad), np.full(5, 4.0))
