"""tf.linalg.tridiagonal_solve: tridiagonal systems in the three formats, against numpy.linalg.solve."""

import numpy as np
import pytest
import tensorflow as tf

DTYPES = [tf.float32, tf.float64, tf.complex64, tf.complex128]
TOL = {tf.float32: 1e-4, tf.float64: 1e-10, tf.complex64: 1e-4, tf.complex128: 1e-10}


def _system(m: int, k: int, dtype: tf.DType, seed: int, batch: tuple = ()) -> tuple:
    """Diagonally dominant systems: compact diagonals [..., 3, m], dense matrix, rhs [..., m, k]."""
    rng = np.random.default_rng(seed)
    npd = dtype.as_numpy_dtype

    def draw(shape):
        x = rng.uniform(-1, 1, shape)
        return x + 1j * rng.uniform(-1, 1, shape) if dtype.is_complex else x

    sup, sub = draw((*batch, m)), draw((*batch, m))
    diag = draw((*batch, m)) + 4.0 * np.sign(rng.uniform(-1, 1, (*batch, m)))
    if m:
        sup[..., -1] = 0.0  # ignored by the op; zero so the dense matrix agrees
        sub[..., 0] = 0.0
    dense = np.zeros((*batch, m, m), np.complex128 if dtype.is_complex else np.float64)
    idx = np.arange(m)
    dense[..., idx, idx] = diag
    dense[..., idx[:-1], idx[:-1] + 1] = sup[..., :-1]
    dense[..., idx[1:], idx[1:] - 1] = sub[..., 1:]
    rhs = draw((*batch, m, k))
    compact = np.stack([sup, diag, sub], axis=-2)
    return compact.astype(npd), dense, rhs.astype(npd)


@pytest.mark.parametrize("pivoting", [False, True], ids=["no_pivoting", "pivoting"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_tridiagonal_solve_compact(device, timed, dtype, pivoting):
    compact, dense, rhs = _system(9, 3, dtype, 0)
    out = timed(
        tf.linalg.tridiagonal_solve, tf.constant(compact), tf.constant(rhs), partial_pivoting=pivoting
    )
    assert out.dtype == dtype and tuple(out.shape) == (9, 3)
    np.testing.assert_allclose(out.numpy(), np.linalg.solve(dense, rhs), rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("fmt", ["matrix", "sequence"])
def test_tridiagonal_solve_other_formats(device, timed, fmt):
    compact, dense, rhs = _system(7, 2, tf.float64, 1, batch=(2,))
    if fmt == "matrix":
        # Entries off the three diagonals must be ignored.
        noisy = dense + np.triu(np.full((7, 7), 99.0), 2)
        out = timed(
            tf.linalg.tridiagonal_solve,
            tf.constant(noisy),
            tf.constant(rhs),
            diagonals_format="matrix",
            partial_pivoting=False,
        )
    else:
        # Sequence format with N = M - 1 super/subdiagonals.
        diags = (
            tf.constant(compact[..., 0, :-1]),
            tf.constant(compact[..., 1, :]),
            tf.constant(compact[..., 2, 1:]),
        )
        out = timed(
            tf.linalg.tridiagonal_solve,
            diags,
            tf.constant(rhs),
            diagonals_format="sequence",
            partial_pivoting=False,
        )
    np.testing.assert_allclose(out.numpy(), np.linalg.solve(dense, rhs), rtol=1e-10)


def test_tridiagonal_solve_vector_rhs_and_transpose(device, timed):
    compact, dense, rhs = _system(6, 4, tf.float64, 2)
    vec = timed(
        tf.linalg.tridiagonal_solve, tf.constant(compact), tf.constant(rhs[:, 0]), partial_pivoting=False
    )
    assert tuple(vec.shape) == (6,)
    np.testing.assert_allclose(vec.numpy(), np.linalg.solve(dense, rhs[:, 0]), rtol=1e-10)
    tr = timed(
        tf.linalg.tridiagonal_solve,
        tf.constant(compact),
        tf.constant(rhs.T.copy()),
        transpose_rhs=True,
        partial_pivoting=False,
    )
    # With transpose_rhs the [K, M] rhs is transposed first; the result is [M, K].
    assert tuple(tr.shape) == (6, 4)
    np.testing.assert_allclose(tr.numpy(), np.linalg.solve(dense, rhs), rtol=1e-10)


@pytest.mark.parametrize(
    ("m", "k", "batch"),
    [(0, 2, ()), (1, 1, ()), (33, 5, (3,)), (1024, 64, (4,))],
    ids=["empty", "1x1", "odd", "1MB"],
)
def test_tridiagonal_solve_shapes(device, timed, m, k, batch):
    """(4, 1024, 64) float32 right-hand sides are 1 MB."""
    compact, dense, rhs = _system(m, k, tf.float32, 3, batch)
    out = timed(tf.linalg.tridiagonal_solve, tf.constant(compact), tf.constant(rhs), partial_pivoting=False)
    assert tuple(out.shape) == (*batch, m, k)
    expected = np.linalg.solve(dense, rhs.astype(np.float64)) if m else rhs
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_tridiagonal_solve_needs_pivoting(device, timed):
    # The first pivot is 0: elimination without row exchanges divides by zero; partial pivoting swaps rows.
    dense = np.array([[0.0, 2.0, 0.0], [3.0, 1.0, 1.0], [0.0, 1.0, 2.0]])
    compact = np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 2.0], [0.0, 3.0, 1.0]])
    rhs = np.array([[2.0], [5.0], [4.0]])
    out = timed(tf.linalg.tridiagonal_solve, tf.constant(compact), tf.constant(rhs), partial_pivoting=True)
    np.testing.assert_allclose(out.numpy(), np.linalg.solve(dense, rhs), rtol=1e-12)


def test_tridiagonal_solve_conjugate_rhs(device, timed):
    compact, dense, rhs = _system(5, 2, tf.complex128, 4)
    out = timed(
        tf.linalg.tridiagonal_solve,
        tf.constant(compact),
        tf.constant(rhs),
        conjugate_rhs=True,
        partial_pivoting=False,
    )
    np.testing.assert_allclose(out.numpy(), np.linalg.solve(dense, np.conj(rhs)), rtol=1e-10)


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.int32], ids=lambda d: d.name)
def test_tridiagonal_solve_refuses_dtypes(device, timed, dtype):
    # Only float32/64 and complex64/128 are documented (the docstring names ValueError).
    compact, _, rhs = _system(4, 1, tf.float32, 5)
    with pytest.raises((ValueError, TypeError, tf.errors.InvalidArgumentError)):
        timed(tf.linalg.tridiagonal_solve, tf.cast(compact, dtype), tf.cast(rhs, dtype))


def test_tridiagonal_solve_perturb_needs_pivoting(device, timed):
    compact, _, rhs = _system(4, 1, tf.float32, 6)
    with pytest.raises(ValueError):
        timed(
            tf.linalg.tridiagonal_solve,
            tf.constant(compact),
            tf.constant(rhs),
            partial_pivoting=False,
            perturb_singular=True,
        )


def test_tridiagonal_solve_gradient(device, timed):
    compact, dense, rhs = _system(5, 2, tf.float64, 7)
    d, r = tf.constant(compact), tf.constant(rhs)
    with tf.GradientTape() as tape:
        tape.watch(r)
        loss = tf.reduce_sum(timed(tf.linalg.tridiagonal_solve, d, r, partial_pivoting=False))
    # d(sum(A^-1 b))/db = A^-T 1.
    expected = np.linalg.solve(dense.T, np.ones((5, 2)))
    np.testing.assert_allclose(tape.gradient(loss, r).numpy(), expected, rtol=1e-10)
