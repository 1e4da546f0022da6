"""jax.scipy.linalg.lu: LU decomposition with partial pivoting against scipy.linalg.lu and the
reconstruction P @ L @ U, over dtypes (half types included), square, rectangular, batched, empty,
singular matrices and permute_l."""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsp_linalg
import numpy as np
import pytest
import scipy.linalg

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 2e-5, "float64": 1e-12, "complex64": 2e-5, "complex128": 1e-12}
HALF_TOLERANCE = {"float16": 2e-2, "bfloat16": 1e-1}
SHAPES = [(1, 1), (5, 5), (4, 7), (7, 4), (512, 512)]


def _matrix(rng, shape, dtype):
    data = rng.uniform(-1, 1, shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.uniform(-1, 1, shape)
    return data


def _check_factors(a, p, lower, upper, tol):
    m, n = a.shape[-2:]
    k = min(m, n)
    assert (
        p.shape == (*a.shape[:-2], m, m)
        and lower.shape == (*a.shape[:-2], m, k)
        and upper.shape == (*a.shape[:-2], k, n)
    )
    pn, ln, un = (np.asarray(t).astype(np.complex128) for t in (p, lower, upper))
    np.testing.assert_allclose(np.triu(ln, 1)[..., :k, :], 0, atol=0)
    np.testing.assert_allclose(np.diagonal(ln, axis1=-2, axis2=-1), 1, atol=tol)
    np.testing.assert_allclose(np.tril(un, -1), 0, atol=0)
    # partial pivoting bounds |L| by 1 (by sqrt(2) for complex: LAPACK pivots on |re| + |im|)
    assert (np.abs(ln) <= np.sqrt(2) + tol).all()
    if not np.iscomplexobj(np.asarray(a)):
        assert (np.abs(ln) <= 1 + tol).all()
    scale = max(1.0, np.abs(np.asarray(a).astype(np.complex128)).max()) * max(m, n) ** 0.5
    np.testing.assert_allclose(pn @ ln @ un, np.asarray(a).astype(np.complex128), atol=tol * scale)


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_lu_reconstructs_and_matches_scipy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    a = jnp.asarray(_matrix(rng, shape, dtype), dtype=dtype)
    p, lower, upper = timed(jsp_linalg.lu, a)
    assert lower.dtype == a.dtype and upper.dtype == a.dtype
    tol = TOLERANCE[dtype]
    _check_factors(a, p, lower, upper, tol)
    if dtype in ("float64", "complex128") and shape != (512, 512):
        sp, sl, su = scipy.linalg.lu(np.asarray(a))
        np.testing.assert_allclose(np.asarray(p), sp, atol=0)
        np.testing.assert_allclose(np.asarray(lower), sl, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(np.asarray(upper), su, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", list(HALF_TOLERANCE))
@pytest.mark.parametrize("shape", [(5, 5), (64, 48)], ids=lambda s: "x".join(map(str, s)))
def test_lu_half_precision(device, timed, dtype, shape):
    a = jnp.asarray(np.random.default_rng(4).uniform(-1, 1, shape), dtype=dtype)
    p, lower, upper = timed(jsp_linalg.lu, a)
    assert lower.dtype == a.dtype and upper.dtype == a.dtype
    _check_factors(a, p, lower, upper, HALF_TOLERANCE[dtype])


def test_lu_permute_l(device, timed):
    a = jnp.asarray(np.random.default_rng(1).normal(size=(6, 6)))
    pl, u = timed(jsp_linalg.lu, a, permute_l=True)
    spl, su = scipy.linalg.lu(np.asarray(a), permute_l=True)
    np.testing.assert_allclose(np.asarray(pl), spl, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(u), su, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(pl) @ np.asarray(u), np.asarray(a), atol=1e-12)


def test_lu_batched(device, timed):
    # the docstring promises shape (..., M, N), as scipy.linalg.lu supports since SciPy 1.11
    a = jnp.asarray(np.random.default_rng(2).normal(size=(3, 4, 4)))
    p, lower, upper = timed(jsp_linalg.lu, a)
    _check_factors(a, p, lower, upper, 1e-12)


def test_lu_singular_and_pivoting(device, timed):
    a = jnp.array([[0.0, 1.0, 2.0], [0.0, 2.0, 4.0], [1.0, 1.0, 1.0]])  # rank 2, zero leading pivot
    p, lower, upper = timed(jsp_linalg.lu, a)
    _check_factors(a, p, lower, upper, 1e-12)
    assert abs(float(upper[2, 2])) < 1e-12


def test_lu_empty(device, timed):
    p, lower, upper = timed(jsp_linalg.lu, jnp.zeros((0, 0), jnp.float32))
    assert p.shape == (0, 0) and lower.shape == (0, 0) and upper.shape == (0, 0)
