"""torch.saddmm: sparse beta * input + alpha * (sparse mat1 @ dense mat2), returning a sparse COO
tensor, against the same computation in dense NumPy."""

import numpy as np
import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


TOLS = {torch.float32: 1e-5, torch.float64: 1e-12, torch.complex128: 1e-12}


def _sparse(shape, nnz, dtype, device, seed):
    rng = np.random.default_rng(seed)
    flat = rng.choice(shape[0] * shape[1], nnz, replace=False) if shape[0] * shape[1] else np.zeros(0, int)
    idx = torch.from_numpy(np.stack(np.unravel_index(flat, shape)).reshape(2, -1))
    vals = rng.standard_normal(nnz) + (1j * rng.standard_normal(nnz) if dtype.is_complex else 0)
    return torch.sparse_coo_tensor(idx, torch.from_numpy(np.asarray(vals)), shape).to(
        device=device, dtype=dtype
    )


def _dense(shape, dtype, device, seed):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype.is_complex else 0)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize(
    "di,dj,dk,nnz",
    [(5, 4, 3, 6), (7, 9, 1, 0), (0, 3, 4, 0), (6, 0, 5, 0), (512, 1024, 64, 20000)],
    ids=["odd", "no_nnz", "empty_rows", "empty_inner", "large"],
)
@pytest.mark.parametrize("coalesced", [True, False], ids=["coalesced", "uncoalesced"])
def test_saddmm_values(device, timed, dtype, di, dj, dk, nnz, coalesced):
    x = _sparse((di, dj), nnz, dtype, device, 0)
    t = _sparse((di, dk), min(nnz, di * dk), dtype, device, 1)
    if coalesced:
        x, t = x.coalesce(), t.coalesce()
    y = _dense((dj, dk), dtype, device, 2)
    out = timed(torch.saddmm, t, x, y, beta=0.5, alpha=-2.0)
    assert out.is_sparse and out.dtype == dtype and out.shape == (di, dk)
    expected = 0.5 * t.to_dense().cpu().numpy() - 2.0 * x.to_dense().cpu().numpy() @ y.cpu().numpy()
    tol = TOLS[dtype] * max(1, np.sqrt(dj))
    np.testing.assert_allclose(out.to_dense().cpu().numpy(), expected, rtol=tol, atol=tol)


def test_saddmm_defaults(device, timed):
    x = _sparse((4, 3), 5, torch.float64, device, 3).coalesce()
    t = _sparse((4, 2), 3, torch.float64, device, 4).coalesce()
    y = _dense((3, 2), torch.float64, device, 5)
    out = timed(torch.saddmm, t, x, y)
    expected = t.to_dense().cpu().numpy() + x.to_dense().cpu().numpy() @ y.cpu().numpy()
    np.testing.assert_allclose(out.to_dense().cpu().numpy(), expected, rtol=1e-12)


def test_saddmm_duplicate_entries_are_summed(device, timed):
    idx = torch.tensor([[0, 0, 1], [1, 1, 0]])
    x = torch.sparse_coo_tensor(idx, torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64), (2, 2)).to(device)
    t = torch.sparse_coo_tensor(
        torch.zeros(2, 0, dtype=torch.long), torch.zeros(0, dtype=torch.float64), (2, 2)
    ).to(device)
    y = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64, device=device)
    out = timed(torch.saddmm, t, x, y)
    np.testing.assert_array_equal(out.to_dense().cpu().numpy(), [[0.0, 3.0], [4.0, 0.0]])


def test_saddmm_rejects_bad_shapes(device, timed):
    x = _sparse((4, 3), 5, torch.float64, device, 6)
    t = _sparse((4, 2), 3, torch.float64, device, 7)
    with pytest.raises(RuntimeError):
        timed(torch.saddmm, t, x, _dense((4, 2), torch.float64, device, 8))
