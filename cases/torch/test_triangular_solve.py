"""torch.triangular_solve (deprecated for torch.linalg.solve_triangular): solve A X = b for triangular A,
against scipy.linalg.solve_triangular."""

import numpy as np
import pytest
import scipy.linalg
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = {torch.float32: 1e-4, torch.float64: 1e-10, torch.complex64: 1e-4, torch.complex128: 1e-10}


def _system(batch, n, k, dtype, device, upper, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n)) + 3 * n**0.5 * np.eye(n) if n else np.zeros((*batch, 0, 0))
    b = rng.standard_normal((*batch, n, k))
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(a.shape) * 0.1
        b = b + 1j * rng.standard_normal(b.shape)
    a = np.triu(a) if upper else np.tril(a)
    to = lambda m: torch.from_numpy(np.ascontiguousarray(m)).to(device=device, dtype=dtype)  # noqa: E731
    return to(b), to(a)


def _reference(b, a, upper, transpose, unitriangular):
    a, b = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64), b.astype(a.dtype)
    if a.ndim == 2:
        return scipy.linalg.solve_triangular(
            a, b, lower=not upper, trans=int(transpose), unit_diagonal=unitriangular
        )
    return np.stack([_reference(bb, aa, upper, transpose, unitriangular) for bb, aa in zip(b, a)])


@pytest.mark.parametrize("dtype", list(DTYPES), ids=_ids)
@pytest.mark.parametrize("upper", [True, False], ids=["upper", "lower"])
@pytest.mark.parametrize(
    "batch,n,k",
    [((), 0, 3), ((), 1, 1), ((), 5, 3), ((4,), 7, 2), ((2, 3), 4, 0), ((), 256, 512)],
    ids=["empty", "1x1", "odd", "batched", "no_rhs", "large"],
)
def test_triangular_solve_values(device, timed, dtype, upper, batch, n, k):
    b, a = _system(batch, n, k, dtype, device, upper)
    solution, coefficient = timed(torch.triangular_solve, b, a, upper=upper)
    assert solution.dtype == dtype and solution.shape == b.shape and coefficient.shape == a.shape
    expected = _reference(_np(b), _np(a), upper, False, False)
    tol = DTYPES[dtype]
    np.testing.assert_allclose(_np(solution), expected, rtol=tol, atol=tol)
    np.testing.assert_array_equal(_np(coefficient), _np(a))


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128], ids=_ids)
@pytest.mark.parametrize("transpose", [False, True], ids=["plain", "transpose"])
@pytest.mark.parametrize("unitriangular", [False, True], ids=["diag", "unit_diag"])
def test_triangular_solve_options(device, timed, dtype, transpose, unitriangular):
    b, a = _system((), 6, 3, dtype, device, upper=True, seed=1)
    solution, _ = timed(
        torch.triangular_solve, b, a, upper=True, transpose=transpose, unitriangular=unitriangular
    )
    expected = _reference(_np(b), _np(a), True, transpose, unitriangular)
    np.testing.assert_allclose(_np(solution), expected, rtol=1e-10, atol=1e-10)


def test_triangular_solve_ignores_other_triangle(device, timed):
    b, a = _system((), 5, 2, torch.float64, device, upper=False)
    noisy = a + torch.triu(torch.full_like(a, 100.0), diagonal=1)
    solution, _ = timed(torch.triangular_solve, b, noisy, upper=False)
    np.testing.assert_allclose(_np(solution), _reference(_np(b), _np(a), False, False, False), rtol=1e-10)


def test_triangular_solve_broadcasts_batches(device, timed):
    b, _ = _system((3,), 4, 2, torch.float64, device, upper=True)
    _, a = _system((), 4, 2, torch.float64, device, upper=True, seed=2)
    solution, _ = timed(torch.triangular_solve, b, a.unsqueeze(0))
    assert solution.shape == (3, 4, 2)
    expected = np.stack([_reference(bb, _np(a), True, False, False) for bb in _np(b)])
    np.testing.assert_allclose(_np(solution), expected, rtol=1e-10)


def test_triangular_solve_shape_mismatch(device, timed):
    with pytest.raises(RuntimeError):
        timed(torch.triangular_solve, torch.zeros(3, 2, device=device), torch.eye(4, device=device))


def test_triangular_solve_gradient(device, timed):
    b, a = _system((2,), 3, 2, torch.float64, device, upper=True)
    b.requires_grad_()
    a.requires_grad_()
    assert torch.autograd.gradcheck(
        lambda x, y: timed(torch.triangular_solve, x, y.triu(), upper=True)[0], (b, a)
    )
