"""torch.nn.BCEWithLogitsLoss: sigmoid + binary cross-entropy with weight and pos_weight, against NumPy."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 5e-3, torch.bfloat16: 3e-2}


def _inputs(shape, dtype, device, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal(shape) * scale
    target = rng.uniform(0, 1, shape)
    return (
        torch.from_numpy(np.asarray(logits)).to(device=device, dtype=dtype),
        torch.from_numpy(np.asarray(target)).to(device=device, dtype=dtype),
    )


def _reference(x, y, weight=None, pos_weight=None, reduction="mean"):
    x, y = x.astype(np.float64), y.astype(np.float64)
    log_sig, log_one_minus = -np.logaddexp(0, -x), -np.logaddexp(0, x)
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * y * log_sig + (1 - y) * log_one_minus)
    if weight is not None:
        loss = loss * weight
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("shape", [(0, 4), (7,), (5, 3), (512, 600)], ids=["empty", "odd", "2d", "large"])
def test_bce_with_logits_values(device, timed, dtype, reduction, shape):
    loss = torch.nn.BCEWithLogitsLoss(reduction=reduction)
    x, y = _inputs(shape, dtype, device)
    out = timed(loss, x, y)
    expected = _reference(_np(x), _np(y), reduction=reduction)
    if reduction == "sum":  # the sum is in the input dtype: past its range it is inf
        expected = torch.tensor(expected, dtype=torch.float64, device="cpu").to(dtype).double().numpy()
    assert out.dtype == dtype and tuple(out.shape) == np.shape(expected)
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), expected, rtol=tol * 10, atol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
@pytest.mark.parametrize("with_pos_weight", [False, True], ids=["no_pos_weight", "pos_weight"])
def test_bce_with_logits_weights(device, timed, dtype, with_pos_weight):
    rng = np.random.default_rng(5)
    weight = torch.from_numpy(rng.uniform(0.5, 2, (1, 4))).to(device=device, dtype=dtype)
    pos_weight = (
        torch.from_numpy(rng.uniform(0.5, 3, 4)).to(device=device, dtype=dtype) if with_pos_weight else None
    )
    loss = torch.nn.BCEWithLogitsLoss(weight=weight, pos_weight=pos_weight, reduction="sum")
    x, y = _inputs((6, 4), dtype, device)
    out = timed(loss, x, y)
    expected = _reference(_np(x), _np(y), _np(weight), None if pos_weight is None else _np(pos_weight), "sum")
    np.testing.assert_allclose(_np(out), expected, rtol=1e-5 if dtype == torch.float32 else 1e-12)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
def test_bce_with_logits_is_stable_for_extreme_logits(device, timed, dtype):
    loss = torch.nn.BCEWithLogitsLoss(reduction="none")
    x = torch.tensor([100.0, -100.0, 100.0, -100.0, 0.0], dtype=dtype, device=device)
    y = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.5], dtype=dtype, device=device)
    out = timed(loss, x, y)
    assert torch.isfinite(out).all()
    np.testing.assert_allclose(_np(out), [0.0, 0.0, 100.0, 100.0, np.log(2)], rtol=1e-2, atol=1e-3)


def test_bce_with_logits_shape_mismatch(device, timed):
    loss = torch.nn.BCEWithLogitsLoss()
    with pytest.raises(ValueError):
        timed(loss, torch.zeros(3, 2, device=device), torch.zeros(3, device=device))


def test_bce_with_logits_gradient(device, timed):
    loss = torch.nn.BCEWithLogitsLoss(reduction="mean")
    x, y = _inputs((4, 3), torch.float64, device)
    x.requires_grad_()
    assert torch.autograd.gradcheck(lambda a: timed(loss, a, y), (x,))
    x.grad = None
    timed(loss, x, y).backward()
    expected = (1 / (1 + np.exp(-_np(x))) - _np(y)) / 12
    np.testing.assert_allclose(_np(x.grad), expected, rtol=1e-10)
