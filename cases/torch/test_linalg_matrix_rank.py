"""torch.linalg.matrix_rank: numerical rank from singular values, against numpy.linalg.matrix_rank."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [torch.float32, torch.float64, torch.complex64, torch.complex128]


def _low_rank(batch, m, n, rank, dtype, device, seed=0):
    rng = np.random.default_rng(seed)
    left, right = rng.standard_normal((*batch, m, rank)), rng.standard_normal((*batch, rank, n))
    if dtype.is_complex:
        left = left + 1j * rng.standard_normal(left.shape)
    return torch.from_numpy(left @ right).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "batch,m,n,rank",
    [
        ((), 0, 3, 0),
        ((), 5, 5, 5),
        ((), 6, 4, 2),
        ((), 3, 7, 1),
        ((3,), 5, 5, 3),
        ((2, 2), 4, 6, 0),
        ((), None, None, None),
    ],
    ids=["empty", "full", "tall_rank2", "wide_rank1", "batched", "zero_rank", "large"],
)
def test_matrix_rank_values(device, timed, dtype, batch, m, n, rank):
    if m is None:  # large: a tall 1 MiB matrix with 128 columns in this dtype
        m, n, rank = 2**20 // dtype.itemsize // 128, 128, 64
    a = _low_rank(batch, m, n, rank, dtype, device)
    out = timed(torch.linalg.matrix_rank, a)
    assert out.dtype == torch.int64 and out.shape == batch
    expected = np.full(batch, rank) if m and n else np.zeros(batch, dtype=np.int64)
    np.testing.assert_array_equal(_np(out), expected)
    if m and m <= 64:
        np.testing.assert_array_equal(_np(out), np.linalg.matrix_rank(_np(a)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex128], ids=_ids)
def test_matrix_rank_hermitian(device, timed, dtype):
    half = _low_rank((), 6, 3, 3, dtype, device, seed=1)
    a = half @ half.mH
    out = timed(torch.linalg.matrix_rank, a, hermitian=True)
    assert out.item() == 3 == np.linalg.matrix_rank(_np(a), hermitian=True)


@pytest.mark.parametrize(
    "kwargs,expected",
    [({}, 3), ({"atol": 0.5}, 2), ({"rtol": 0.2}, 1), ({"atol": 1e-3, "rtol": 0.0}, 3), ({"atol": 20.0}, 0)],
    ids=["default", "atol", "rtol", "atol_only", "all_below"],
)
def test_matrix_rank_tolerances(device, timed, kwargs, expected):
    a = torch.diag(torch.tensor([10.0, 1.0, 0.01, 0.0], dtype=torch.float64, device=device))
    out = timed(torch.linalg.matrix_rank, a, **kwargs)
    assert out.item() == expected


def test_matrix_rank_tolerance_tensor_per_batch(device, timed):
    a = torch.diag_embed(torch.tensor([[3.0, 2.0, 1.0]] * 3, dtype=torch.float64, device=device))
    atol = torch.tensor([0.5, 1.5, 2.5], dtype=torch.float64, device=device)
    out = timed(torch.linalg.matrix_rank, a, atol=atol, rtol=torch.zeros_like(atol))
    assert out.tolist() == [3, 2, 1]


def test_matrix_rank_rejects_vectors_and_integers(device, timed):
    with pytest.raises(RuntimeError):
        timed(torch.linalg.matrix_rank, torch.ones(4, device=device))
    with pytest.raises(RuntimeError):
        timed(torch.linalg.matrix_rank, torch.ones(3, 3, dtype=torch.int64, device=device))
