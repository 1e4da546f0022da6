"""torch.log1p: log(1 + x), accurate near 0, dense and sparse (the study timed sparse Tensor.log1p),
against numpy.log1p."""

import numpy as np
import pytest
import torch


def _np(t):
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 2e-6, torch.float64: 1e-14, torch.float16: 1e-3, torch.bfloat16: 8e-3}


def _tensor(shape, dtype, device, seed=0):
    data = np.random.default_rng(seed).uniform(-0.99, 10.0, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "shape", [(0,), (), (7,), (5, 33), (1 << 18,)], ids=["empty", "scalar", "odd", "2d", "large"]
)
def test_log1p_dense(device, timed, dtype, shape):
    x = _tensor(shape, dtype, device)
    out = timed(torch.log1p, x)
    assert out.dtype == dtype and out.shape == x.shape
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), np.log1p(_np(x).astype(np.float64)), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
def test_log1p_edge_values(device, timed, dtype):
    values = [0.0, -0.0, -1.0, -2.0, float("inf"), -float("inf"), float("nan"), 1e-3, -1e-3]
    x = torch.tensor(values, dtype=dtype, device=device)
    out = _np(timed(torch.log1p, x))
    assert out[0] == 0 and out[1] == 0 and np.signbit(out[1])
    assert (
        out[2] == -np.inf and np.isnan(out[3]) and out[4] == np.inf and np.isnan(out[5]) and np.isnan(out[6])
    )
    tol = TOLS[dtype]
    np.testing.assert_allclose(out[7:], np.log1p(_np(x)[7:].astype(np.float64)), rtol=tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_log1p_tiny_values_are_exact(device, timed, dtype):
    x = torch.tensor([1e-10, -1e-12, 1e-30], dtype=dtype, device=device)
    out = timed(torch.log1p, x)
    # log(1 + x) in floating point would return 0 here; log1p keeps x.
    np.testing.assert_allclose(_np(out), _np(x), rtol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
@pytest.mark.parametrize(
    "size,nnz", [((5, 5), 0), ((6, 7), 9), ((1024, 1024), 40000)], ids=["no_nnz", "odd", "large"]
)
def test_log1p_sparse(device, timed, dtype, size, nnz):
    rng = np.random.default_rng(1)
    flat = rng.choice(size[0] * size[1], nnz, replace=False)
    idx = torch.from_numpy(np.stack(np.unravel_index(flat, size))).to(device)
    vals = torch.from_numpy(rng.uniform(-0.5, 5.0, nnz)).to(device=device, dtype=dtype)
    s = torch.sparse_coo_tensor(idx, vals, size).coalesce()
    out = timed(torch.Tensor.log1p, s)
    assert out.is_sparse and out.dtype == dtype and out.shape == size
    tol = TOLS[dtype]
    np.testing.assert_allclose(
        _np(out.to_dense()), np.log1p(_np(s.to_dense()).astype(np.float64)), rtol=tol, atol=tol
    )


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool], ids=_ids)
def test_log1p_integers_promote(device, timed, dtype):
    x = torch.tensor([0, 1, 3], device=device).to(dtype)
    out = timed(torch.log1p, x)
    assert out.dtype == torch.get_default_dtype()
    np.testing.assert_allclose(_np(out), np.log1p(_np(x).astype(np.float64)), rtol=1e-6)


def test_log1p_gradient(device, timed):
    x = _tensor((4, 3), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: timed(torch.log1p, t), (x,))
    timed(torch.log1p, x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), 1 / (1 + _np(x)), rtol=1e-12)
