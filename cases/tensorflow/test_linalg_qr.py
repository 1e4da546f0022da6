"""tf.linalg.qr: Q orthonormal, R upper triangular, Q @ R == A, |diag R| as NumPy's, for 6 dtypes."""

import numpy as np
import pytest
import tensorflow as tf

# Relative tolerance on Frobenius norms, per unit of max(m, n).
EPS = {tf.float32: 1e-6, tf.float64: 1e-14, tf.complex64: 1e-6, tf.complex128: 1e-14,
       tf.float16: 2e-3, tf.bfloat16: 2e-2}  # fmt: skip


def _random(shape: tuple[int, ...], dtype: tf.DType, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _check(a: np.ndarray, q: np.ndarray, r: np.ndarray, full: bool, tol: float) -> None:
    m, n = a.shape[-2:]
    k = m if full else min(m, n)
    assert q.shape == (*a.shape[:-2], m, k) and r.shape == (*a.shape[:-2], k, n)
    scale = tol * max(m, n, 1)
    norm_a = max(np.linalg.norm(a), 1.0)
    eye = np.broadcast_to(np.eye(k), (*q.shape[:-2], k, k))
    gram = np.conj(np.swapaxes(q, -1, -2)) @ q
    assert np.linalg.norm(gram - eye) <= scale * max(k, 1), "Q's columns are not orthonormal"
    np.testing.assert_array_equal(np.tril(r, -1), 0)  # exactly upper triangular
    assert np.linalg.norm(q @ r - a) <= scale * norm_a, "Q @ R differs from A"


@pytest.mark.parametrize("full_matrices", [False, True], ids=["reduced", "full"])
@pytest.mark.parametrize("dtype", list(EPS), ids=lambda d: d.name)
def test_qr_dtypes(device, timed, dtype, full_matrices):
    a = tf.constant(_random((6, 4), dtype), dtype)
    q, r = timed(tf.linalg.qr, a, full_matrices)
    assert q.dtype == dtype and r.dtype == dtype
    to64 = tf.complex128 if dtype.is_complex else tf.float64
    a64 = tf.cast(a, to64).numpy()  # the input as rounded to the dtype
    _check(a64, tf.cast(q, to64).numpy(), tf.cast(r, to64).numpy(), full_matrices, EPS[dtype])
    # R's diagonal magnitudes are unique: they match NumPy's whatever the sign convention.
    r_np = np.linalg.qr(a64, mode="reduced")[1]
    np.testing.assert_allclose(
        np.abs(np.diagonal(tf.cast(r, to64).numpy())), np.abs(np.diagonal(r_np)), rtol=EPS[dtype] * 100
    )


@pytest.mark.parametrize(
    "shape,full_matrices",
    [
        ((5, 3), False),
        ((3, 5), False),  # wide: R is 3x5
        ((3, 5), True),
        ((7, 7), True),
        ((2, 3, 4, 3), False),  # batches
        ((0, 3), False),
        ((3, 0), True),
        ((0, 4, 4), False),
        ((362, 362), False),  # 1 MB of float64
    ],
    ids=str,
)
def test_qr_shapes(device, timed, shape, full_matrices):
    a = _random(shape, tf.float64, seed=1)
    q, r = timed(tf.linalg.qr, tf.constant(a), full_matrices)
    _check(a, q.numpy(), r.numpy(), full_matrices, EPS[tf.float64])


def test_qr_rank_deficient(device, timed):
    # Two equal columns: still an orthonormal Q and an exact factorization, with R[1, 1] == 0 up to rounding.
    col = np.arange(1.0, 6.0)
    a = np.stack([col, col, np.ones(5)], axis=1)
    q, r = timed(tf.linalg.qr, tf.constant(a))
    _check(a, q.numpy(), r.numpy(), False, EPS[tf.float64])
    assert abs(r.numpy()[1, 1]) < 1e-12


def test_qr_gradient(device, timed):
    a = tf.constant(_random((5, 3), tf.float64, seed=2))
    with tf.GradientTape() as tape:
        tape.watch(a)
        q, r = timed(tf.linalg.qr, a)
        # Q @ R rebuilds A, so the gradient of sum(Q @ R * W) with respect to A is W.
        loss = tf.reduce_sum((q @ r) * tf.reshape(tf.range(15, dtype=tf.float64), (5, 3)))
    np.testing.assert_allclose(tape.gradient(loss, a).numpy(), np.arange(15.0).reshape(5, 3), atol=1e-10)


@pytest.mark.parametrize("shape", [(), (4,)], ids=["scalar", "vector"])
def test_qr_refuses_rank_below_two(device, timed, shape):
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.linalg.qr, tf.ones(shape))


def test_qr_refuses_integer_input(device, timed):
    with pytest.raises((TypeError, tf.errors.InvalidArgumentError, tf.errors.NotFoundError)):
        timed(tf.linalg.qr, tf.ones((3, 3), tf.int32))
