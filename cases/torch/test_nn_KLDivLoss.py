"""torch.nn.KLDivLoss: pointwise KL divergence target * (log target - input), against NumPy/SciPy."""

import numpy as np
import pytest
import torch
from scipy.special import xlogy


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 5e-3, torch.bfloat16: 3e-2}
REDUCTIONS = ["none", "sum", "mean", "batchmean"]


def _inputs(shape, dtype, device, seed=0):
    rng = np.random.default_rng(seed)
    logits, target = rng.standard_normal(shape), rng.uniform(0, 1, shape)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True)) if shape and shape[-1] else logits
    return (
        torch.from_numpy(np.asarray(log_probs)).to(device=device, dtype=dtype),
        torch.from_numpy(np.asarray(target)).to(device=device, dtype=dtype),
    )


def _reference(inp, target, reduction, log_target=False):
    inp, target = inp.astype(np.float64), target.astype(np.float64)
    pointwise = np.exp(target) * (target - inp) if log_target else xlogy(target, target) - target * inp
    if reduction == "none":
        return pointwise
    if reduction == "sum":
        return pointwise.sum()
    if reduction == "mean":
        return pointwise.mean()
    return pointwise.sum() / (inp.shape[0] if inp.ndim else 1)


def _through(value, dtype):
    """A reference value rounded to `dtype`: a sum past the dtype's range is inf there too."""
    return torch.tensor(value, dtype=torch.float64, device="cpu").to(dtype).double().numpy()


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(4, 5), (3, 2, 7), (512, 512)], ids=["2d", "3d", "large"])
def test_kldivloss_values(device, timed, dtype, reduction, shape):
    loss = torch.nn.KLDivLoss(reduction=reduction)
    inp, target = _inputs(shape, dtype, device)
    out = timed(loss, inp, target)
    expected = _reference(_np(inp), _np(target), reduction)
    if reduction == "batchmean":  # the sum is formed in the input dtype, then divided by the batch size
        expected = _through(_through(expected * shape[0], dtype) / shape[0], dtype)
    elif reduction == "sum":
        expected = _through(expected, dtype)
    assert out.dtype == dtype and tuple(out.shape) == np.shape(expected)
    tol = TOLS[dtype]
    np.testing.assert_allclose(
        _np(out), expected, rtol=tol * 10, atol=tol * (1 if reduction == "none" else 50)
    )


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_kldivloss_log_target(device, timed, reduction):
    loss = torch.nn.KLDivLoss(reduction=reduction, log_target=True)
    inp, target = _inputs((6, 9), torch.float64, device)
    log_target = torch.log(target)
    out = timed(loss, inp, log_target)
    np.testing.assert_allclose(_np(out), _reference(_np(inp), _np(log_target), reduction, True), rtol=1e-12)
    plain = torch.nn.KLDivLoss(reduction=reduction)(inp, target)
    np.testing.assert_allclose(_np(out), _np(plain), rtol=1e-12)


def test_kldivloss_zero_target_contributes_zero(device, timed):
    loss = torch.nn.KLDivLoss(reduction="none")
    inp = torch.tensor([-1.0, -50.0, -2.0], device=device)
    target = torch.tensor([0.0, 0.0, 0.5], device=device)
    out = timed(loss, inp, target)
    np.testing.assert_allclose(_np(out), [0.0, 0.0, 0.5 * (np.log(0.5) + 2.0)], rtol=1e-6)


def test_kldivloss_empty(device, timed):
    loss = torch.nn.KLDivLoss(reduction="sum")
    inp, target = _inputs((0, 3), torch.float32, device)
    assert timed(loss, inp, target).item() == 0.0


def test_kldivloss_identical_distributions_is_zero(device, timed):
    loss = torch.nn.KLDivLoss(reduction="batchmean")
    _, target = _inputs((8, 10), torch.float64, device)
    target = target / target.sum(-1, keepdim=True)
    assert abs(timed(loss, target.log(), target).item()) < 1e-12


def test_kldivloss_gradient(device, timed):
    loss = torch.nn.KLDivLoss(reduction="batchmean")
    inp, target = _inputs((3, 4), torch.float64, device)
    inp.requires_grad_()
    assert torch.autograd.gradcheck(lambda a, b: timed(loss, a, b), (inp, target.requires_grad_()))
    inp.grad = None
    timed(loss, inp, target.detach()).backward()
    np.testing.assert_allclose(_np(inp.grad), -_np(target) / 3, rtol=1e-12)
