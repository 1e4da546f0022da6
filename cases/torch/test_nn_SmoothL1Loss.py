"""torch.nn.SmoothL1Loss: construction and the Huber-like loss with threshold beta (the module call
timed), per reduction, against NumPy, with gradients."""

import numpy as np
import pytest
import torch
from torch import nn


def _np(t):
    return t.detach().double().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 2e-2}


def _reference(x, y, beta, reduction):
    d = np.abs(x - y)
    loss = np.where(d < beta, 0.5 * d**2 / beta, d - 0.5 * beta) if beta > 0 else d
    return {"none": loss, "mean": loss.mean() if loss.size else np.nan, "sum": loss.sum()}[reduction]


def _build(**kwargs):
    return nn.SmoothL1Loss(**kwargs)


def _tensor(shape, dtype, device, seed):
    # scale 0.25: most differences fall in the quadratic zone, some beyond beta=1, and a half-precision
    # sum over the large input stays below the float16 maximum
    data = np.asarray(np.random.default_rng(seed).standard_normal(shape) * 0.25)
    return torch.from_numpy(data).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "shape", [(0,), (), (7,), (5, 3, 4), (512, 1024)], ids=["empty", "scalar", "odd", "3d", "large"]
)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_smooth_l1_values(device, timed, dtype, shape, reduction):
    m = _build(reduction=reduction)
    x, y = _tensor(shape, dtype, device, 0), _tensor(shape, dtype, device, 1)
    out = timed(m, x, y)
    expected = _reference(_np(x), _np(y), 1.0, reduction)
    assert out.dtype == dtype and tuple(out.shape) == np.shape(expected)
    n = max(1, int(np.prod(shape)))
    tol = TOLS[dtype] * (np.sqrt(n) if reduction == "sum" else 1)
    np.testing.assert_allclose(_np(out), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("beta", [0.0, 0.25, 1.0, 3.0])
def test_smooth_l1_beta(device, timed, beta):
    m = _build(reduction="none", beta=beta)
    x, y = _tensor((50,), torch.float64, device, 2) * 12, _tensor((50,), torch.float64, device, 3) * 12
    out = timed(m, x, y)
    np.testing.assert_allclose(_np(out), _reference(_np(x), _np(y), beta, "none"), rtol=1e-12)


def test_smooth_l1_at_threshold_is_continuous(device, timed):
    m = _build(reduction="none", beta=0.5)
    x = torch.tensor([0.5 - 1e-9, 0.5, 0.5 + 1e-9], dtype=torch.float64, device=device)
    out = _np(timed(m, x, torch.zeros_like(x)))
    np.testing.assert_allclose(out, [0.25, 0.25, 0.25], atol=1e-8)


def test_smooth_l1_broadcast_warns(device, timed):
    m = _build()
    with pytest.warns(UserWarning):
        timed(m, torch.zeros(3, 1, device=device), torch.zeros(3, device=device))


def test_smooth_l1_negative_beta(device, timed):
    m = _build(beta=-1.0)
    with pytest.raises(RuntimeError):
        timed(m, torch.zeros(3, device=device), torch.ones(3, device=device))


@pytest.mark.parametrize("beta", [0.0, 1.0])
def test_smooth_l1_gradient(device, timed, beta):
    m = _build(beta=beta)
    x = (_tensor((4, 3), torch.float64, device, 4) * 8).requires_grad_()
    y = _tensor((4, 3), torch.float64, device, 5) * 8
    assert torch.autograd.gradcheck(lambda a: m(a, y), (x,))
    timed(m, x, y).backward()
    d = _np(x) - _np(y)
    expected = (np.clip(d / beta, -1, 1) if beta > 0 else np.sign(d)) / d.size
    np.testing.assert_allclose(_np(x.grad), expected, rtol=1e-12)
