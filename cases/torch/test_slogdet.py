"""torch.slogdet (timed as Tensor.slogdet and Tensor.logdet, as the study did): sign and log|det|
against numpy.linalg.slogdet, per dtype, shape and batch, with singular inputs and gradients."""

import numpy as np
import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 2e-4, torch.float64: 1e-10, torch.complex64: 2e-4, torch.complex128: 1e-10}


def _matrix(shape, dtype, device, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    if dtype.is_complex:
        data = data + 1j * rng.standard_normal(shape)
    n = shape[-1]
    data = data + (np.sqrt(n) * np.eye(n) if n else 0)  # well conditioned
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "shape",
    [(0, 0), (1, 1), (5, 5), (3, 4, 4), (2, 0, 0), (384, 384)],
    ids=["0x0", "1x1", "5x5", "batched", "batched_empty", "large"],
)
def test_slogdet_values(device, timed, dtype, shape):
    m = _matrix(shape, dtype, device)
    sign, logabs = timed(torch.Tensor.slogdet, m)
    ref_sign, ref_logabs = np.linalg.slogdet(
        m.cpu().numpy().astype(np.complex128 if dtype.is_complex else np.float64)
    )
    assert sign.dtype == dtype and logabs.dtype == dtype.to_real()
    assert tuple(sign.shape) == shape[:-2] and tuple(logabs.shape) == shape[:-2]
    tol = TOLS[dtype]
    np.testing.assert_allclose(sign.cpu().numpy(), ref_sign, rtol=tol, atol=tol)
    np.testing.assert_allclose(logabs.cpu().numpy(), ref_logabs, rtol=tol, atol=tol * max(shape[-1], 1))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_logdet_positive_and_negative(device, timed, dtype):
    pos = torch.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=dtype, device=device)
    neg = torch.tensor([[0.0, 2.0], [3.0, 0.0]], dtype=dtype, device=device)
    out = timed(torch.Tensor.logdet, pos)
    assert abs(out.item() - np.log(5.0)) < 1e-6
    assert torch.isnan(timed(torch.Tensor.logdet, neg)).item()
    sign, logabs = neg.slogdet()  # untimed: each test times one function
    assert sign.item() == -1.0 and abs(logabs.item() - np.log(6.0)) < 1e-6


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_slogdet_singular(device, timed, dtype):
    m = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]], dtype=dtype, device=device)
    sign, logabs = timed(torch.Tensor.slogdet, m)
    assert sign.item() == 0.0 and logabs.item() == -float("inf")
    assert m.logdet().item() == -float("inf")  # untimed: each test times one function


def test_slogdet_batched_logdet_matches_numpy(device, timed):
    m = _matrix((6, 7, 7), torch.float64, device, seed=3)
    out = timed(torch.Tensor.logdet, m)
    sign, logabs = np.linalg.slogdet(m.cpu().numpy())
    expected = np.where(sign > 0, logabs, np.nan)
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-10, atol=1e-10)


def test_slogdet_rejects_bad_input(device, timed):
    with pytest.raises(RuntimeError):
        timed(torch.Tensor.slogdet, torch.zeros(3, 4, device=device))
    with pytest.raises(RuntimeError):
        timed(torch.Tensor.slogdet, torch.zeros(3, 3, dtype=torch.int64, device=device))


def test_slogdet_gradient(device, timed):
    m = _matrix((4, 4), torch.float64, device, seed=1).requires_grad_()
    assert torch.autograd.gradcheck(lambda a: timed(torch.Tensor.slogdet, a)[1], (m,))
    _, logabs = timed(torch.Tensor.slogdet, m)
    logabs.backward()
    # d log|det A| / dA = A^{-T}
    np.testing.assert_allclose(m.grad.cpu().numpy(), np.linalg.inv(m.detach().cpu().numpy()).T, rtol=1e-10)
