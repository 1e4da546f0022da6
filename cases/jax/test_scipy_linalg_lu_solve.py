"""jax.scipy.linalg.lu_solve: solves A x = b (or A^T x = b, A^H x = b) from an LU factorisation, against
scipy.linalg.lu_solve on the same scipy.linalg.lu_factor output and against A @ x == b, over dtypes,
sizes (empty to 1 MB), right-hand-side shapes, trans, batches, integer right-hand sides, NaN and
singular factors."""

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.linalg

jax.config.update("jax_enable_x64", True)

# tolerance on the solution, relative to its largest entry (the matrices are diagonally dominant)
TOLERANCE = {
    "float32": 1e-5,
    "float64": 1e-12,
    "float16": 2e-2,
    "bfloat16": 1e-1,
    "complex64": 1e-5,
    "complex128": 1e-12,
}
SIZES = [0, 7, 360]  # 360 x 360 float64 is 1 MB


def well_conditioned(rng, n, dtype):
    a = rng.uniform(-1, 1, (n, n))
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        a = a + 1j * rng.uniform(-1, 1, (n, n))
    return a + n * np.eye(n)


def rhs(rng, shape, dtype):
    b = rng.uniform(-1, 1, shape)
    if np.issubdtype(np.dtype(dtype), np.complexfloating):
        b = b + 1j * rng.uniform(-1, 1, shape)
    return b


def factor(a, dtype):
    """scipy.linalg.lu_factor in float64/complex128, factors then cast to the dtype under test."""
    lu, piv = scipy.linalg.lu_factor(a)
    return jnp.asarray(lu, dtype=dtype), jnp.asarray(piv, dtype=jnp.int32)


def solve(lu, piv, b, trans=0):
    return jax.scipy.linalg.lu_solve((lu, piv), b, trans=trans)


def check(out, lu, piv, b, a, dtype, trans=0):
    """Against scipy.linalg.lu_solve on the (cast) factors, and the residual against A itself."""
    wide = np.complex128 if np.issubdtype(np.dtype(dtype), np.complexfloating) else np.float64
    lu64 = np.asarray(lu).astype(wide)
    b64 = np.asarray(b).astype(wide)
    expected = scipy.linalg.lu_solve((lu64, np.asarray(piv)), b64, trans=trans)
    got = np.asarray(out).astype(wide)
    tol = TOLERANCE[dtype]
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * scale)
    op = {0: a, 1: a.T, 2: a.conj().T}[trans]
    np.testing.assert_allclose(op @ got, b64, rtol=tol * 10, atol=tol * 10 * max(1, a.shape[0]))


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n{n}")
def test_lu_solve_matches_scipy(device, timed, dtype, n):
    rng = np.random.default_rng(0)
    a = well_conditioned(rng, n, dtype)
    lu, piv = factor(a, dtype)
    b = jnp.asarray(rhs(rng, (n,), dtype), dtype=dtype)
    out = timed(solve, lu, piv, b)
    assert out.dtype == lu.dtype and out.shape == (n,)
    check(out, lu, piv, b, a, dtype)


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
@pytest.mark.parametrize("trans", [0, 1, 2], ids=lambda t: f"trans{t}")
def test_lu_solve_trans_and_matrix_rhs(device, timed, dtype, trans):
    k = 3
    rng = np.random.default_rng(1)
    a = well_conditioned(rng, 5, dtype)
    lu, piv = factor(a, dtype)
    b = jnp.asarray(rhs(rng, (5, k), dtype), dtype=dtype)
    out = timed(functools.partial(solve, trans=trans), lu, piv, b)
    assert out.dtype == lu.dtype and out.shape == (5, k)
    check(out, lu, piv, b, a, dtype, trans)


def test_lu_solve_no_rhs_columns(device, timed):
    rng = np.random.default_rng(5)
    lu, piv = factor(well_conditioned(rng, 5, "float64"), "float64")
    out = timed(solve, lu, piv, jnp.zeros((5, 0)))
    assert out.shape == (5, 0) and out.dtype == jnp.float64


def test_lu_solve_batched(device, timed):
    # a stack of factorisations (..., n, n) with matching (..., n, k) right-hand sides
    rng = np.random.default_rng(2)
    mats = [well_conditioned(rng, 6, "float64") for _ in range(4)]
    factors = [scipy.linalg.lu_factor(m) for m in mats]
    lu = jnp.asarray(np.stack([f[0] for f in factors]))
    piv = jnp.asarray(np.stack([f[1] for f in factors]), dtype=jnp.int32)
    b = jnp.asarray(rng.uniform(-1, 1, (4, 6, 2)))
    out = timed(solve, lu, piv, b)
    assert out.shape == (4, 6, 2)
    for i in range(4):
        check(out[i], lu[i], piv[i], b[i], mats[i], "float64")


def test_lu_solve_integer_rhs_promotes(device, timed):
    rng = np.random.default_rng(3)
    a = well_conditioned(rng, 4, "float64")
    lu, piv = factor(a, "float64")
    b = jnp.array([1, -2, 3, 0], dtype=jnp.int32)
    out = timed(solve, lu, piv, b)
    assert out.dtype == jnp.float64
    np.testing.assert_allclose(np.asarray(out), np.linalg.solve(a, [1.0, -2.0, 3.0, 0.0]), rtol=1e-12)


def test_lu_solve_permutation_matters(device, timed):
    # a matrix whose factorisation needs row swaps: [[0, 1], [1, 0]] x = [2, 3] -> x = [3, 2]
    a = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [4.0, 0.0, 0.0]])
    lu, piv = factor(a, "float64")
    assert (np.asarray(piv) != np.arange(3)).any()
    out = timed(solve, lu, piv, jnp.array([2.0, 6.0, 8.0]))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0, 3.0])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lu_solve_nan_in_rhs(device, timed, dtype):
    # a NaN in b reaches every unknown through the dense triangular factors, as in scipy
    rng = np.random.default_rng(4)
    a = well_conditioned(rng, 5, dtype)
    lu, piv = factor(a, dtype)
    b = rhs(rng, (5,), dtype)
    b[2] = np.nan
    out = np.asarray(timed(solve, lu, piv, jnp.asarray(b, dtype=dtype)))
    expected = scipy.linalg.lu_solve((np.asarray(lu, np.float64), np.asarray(piv)), b, check_finite=False)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    assert np.isnan(out).all()


def test_lu_solve_singular_factor(device, timed):
    # a zero pivot in U: the solution cannot be all finite (scipy divides by zero the same way)
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        lu, piv = factor(a, "float64")
    assert np.asarray(lu)[1, 1] == 0.0
    out = np.asarray(timed(solve, lu, piv, jnp.array([1.0, 1.0])))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = scipy.linalg.lu_solve((np.asarray(lu), np.asarray(piv)), np.array([1.0, 1.0]))
    assert not np.isfinite(expected).all()
    assert not np.isfinite(out).all()
