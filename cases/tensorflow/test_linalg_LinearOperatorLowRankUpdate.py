"""tf.linalg.LinearOperatorLowRankUpdate: L + U D V^H dense, matmul, solve, determinant, against NumPy."""

import numpy as np
import pytest
import tensorflow as tf

TOL = {tf.float16: 1e-2, tf.float32: 1e-4, tf.float64: 1e-10, tf.complex64: 1e-4, tf.complex128: 1e-10}


def _parts(n: int, k: int, dtype: tf.DType, seed: int, batch: tuple = ()) -> dict:
    """A positive base diagonal L, and U, D > 0, V of rank k, all as NumPy float64/complex128 arrays."""
    rng = np.random.default_rng(seed)

    def draw(shape):
        x = rng.standard_normal(shape)
        return x + 1j * rng.standard_normal(shape) if dtype.is_complex else x

    return {
        "base": rng.uniform(1.0, 2.0, (*batch, n)),
        "u": draw((*batch, n, k)) / np.sqrt(max(n, 1)),
        "d": rng.uniform(0.5, 1.5, (*batch, k)),
        "v": draw((*batch, n, k)) / np.sqrt(max(n, 1)),
    }


def _dense(p: dict, use_d: bool, use_v: bool) -> np.ndarray:
    u, v = p["u"], p["v"] if use_v else p["u"]
    ud = u * p["d"][..., None, :] if use_d else u
    eye = np.eye(p["base"].shape[-1])
    return p["base"][..., None, :] * eye + ud @ np.conj(np.swapaxes(v, -1, -2))


def _operator(base, u, d, v):
    base_op = tf.linalg.LinearOperatorDiag(base, is_positive_definite=True, is_self_adjoint=True)
    return tf.linalg.LinearOperatorLowRankUpdate(
        base_op, u, diag_update=d, v=v, is_diag_update_positive=True if d is not None else None
    )


def _consts(p: dict, dtype: tf.DType, use_d: bool, use_v: bool) -> tuple:
    base = tf.cast(tf.constant(p["base"]), dtype)
    d = tf.cast(tf.constant(p["d"]), dtype) if use_d else None
    v = tf.constant(p["v"].astype(dtype.as_numpy_dtype)) if use_v else None
    return base, tf.constant(p["u"].astype(dtype.as_numpy_dtype)), d, v


def _np(t: tf.Tensor) -> np.ndarray:
    return t.numpy().astype(np.complex128 if t.dtype.is_complex else np.float64)


@pytest.mark.parametrize(
    ("use_d", "use_v"),
    [(False, False), (True, False), (False, True), (True, True)],
    ids=["UUH", "UDUH", "UVH", "UDVH"],
)
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.complex64, tf.float16], ids=lambda d: d.name)
def test_low_rank_update_matmul(device, timed, dtype, use_d, use_v):
    p = _parts(6, 2, dtype, 0)
    x = np.random.default_rng(1).standard_normal((6, 3)).astype(dtype.as_numpy_dtype)

    def apply(base, u, d, v, x):
        op = _operator(base, u, d, v)
        return op.to_dense(), op.matmul(x)

    dense, y = timed(apply, *_consts(p, dtype, use_d, use_v), tf.constant(x))
    assert dense.dtype == dtype and tuple(dense.shape) == (6, 6)
    expected = _dense(p, use_d, use_v)
    np.testing.assert_allclose(_np(dense), expected, rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_allclose(
        _np(y), expected @ x.astype(expected.dtype), rtol=TOL[dtype] * 5, atol=TOL[dtype] * 5
    )


@pytest.mark.parametrize(("use_d", "use_v"), [(True, False), (False, True)], ids=["cholesky", "no_cholesky"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64], ids=lambda d: d.name)
def test_low_rank_update_solve_and_determinant(device, timed, dtype, use_d, use_v):
    # Woodbury and the matrix determinant lemma against a dense solve and slogdet.
    p = _parts(7, 3, dtype, 2, batch=(2,))
    rhs = np.random.default_rng(3).standard_normal((2, 7, 2))

    def apply(base, u, d, v, rhs):
        op = _operator(base, u, d, v)
        return op.solve(rhs), op.log_abs_determinant(), op.determinant()

    x, logdet, det = timed(apply, *_consts(p, dtype, use_d, use_v), tf.cast(tf.constant(rhs), dtype))
    dense = _dense(p, use_d, use_v)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(dense, rhs), rtol=TOL[dtype] * 10, atol=TOL[dtype])
    sign, expected_logdet = np.linalg.slogdet(dense)
    np.testing.assert_allclose(logdet.numpy(), expected_logdet, rtol=TOL[dtype] * 10, atol=TOL[dtype])
    np.testing.assert_allclose(det.numpy(), sign * np.exp(expected_logdet), rtol=TOL[dtype] * 10)


@pytest.mark.parametrize(
    ("n", "k", "batch"),
    [(0, 1, ()), (1, 1, ()), (9, 4, (3,)), (512, 8, ())],
    ids=["empty", "1x1", "odd", "1MB"],
)
def test_low_rank_update_shapes(device, timed, n, k, batch):
    """n = 512: the dense float32 operator and the 512x512 right-hand side are 1 MB each."""
    p = _parts(n, k, tf.float32, 4, batch)
    x = np.random.default_rng(5).standard_normal((*batch, n, n)).astype(np.float32)

    def apply(base, u, d, v, x):
        op = _operator(base, u, d, v)
        return op.matmul(x), op.diag_part()

    y, diag = timed(apply, *_consts(p, tf.float32, True, True), tf.constant(x))
    dense = _dense(p, True, True)
    assert tuple(y.shape) == (*batch, n, n) and tuple(diag.shape) == (*batch, n)
    np.testing.assert_allclose(y.numpy(), dense @ x, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(diag.numpy(), np.diagonal(dense, axis1=-2, axis2=-1), rtol=1e-5, atol=1e-5)


def test_low_rank_update_hints_and_adjoint(device, timed):
    # L + U D U^H with D > 0 is self-adjoint and positive definite; L + U V^H is not known to be.
    p = _parts(5, 2, tf.complex128, 6)
    sym = _operator(*_consts(p, tf.complex128, True, False))
    gen = _operator(*_consts(p, tf.complex128, False, True))
    assert sym.is_self_adjoint and sym.is_positive_definite
    assert not gen.is_self_adjoint
    x = tf.constant(np.random.default_rng(7).standard_normal((5, 2)) + 0j)
    out = timed(lambda x: gen.matmul(x, adjoint=True), x)
    np.testing.assert_allclose(out.numpy(), np.conj(_dense(p, False, True)).T @ x.numpy(), rtol=1e-10)


def test_low_rank_update_gradient(device, timed):
    # sum(to_dense()) of L + u u^T adds sum(u)**2, whose gradient is 2 * sum(u) in every entry of u.
    base = tf.constant([1.0, 2.0, 3.0], tf.float64)
    u = tf.constant([[0.5], [-1.0], [2.0]], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(u)
        loss = tf.reduce_sum(timed(lambda b, u: _operator(b, u, None, None).to_dense(), base, u))
    np.testing.assert_allclose(tape.gradient(loss, u).numpy(), np.full((3, 1), 2 * 1.5), rtol=1e-12)


@pytest.mark.parametrize("case", ["domain", "rank", "batch"])
def test_low_rank_update_refusals(device, case):
    base = tf.linalg.LinearOperatorIdentity(num_rows=3, dtype=tf.float64)
    rng = np.random.default_rng(8)
    kwargs = {
        "domain": {"u": rng.random((5, 4, 2))},
        "rank": {"u": rng.random((5, 3, 2)), "diag_update": rng.random((5, 4))},
        "batch": {"u": rng.random((5, 3, 2)), "v": rng.random((4, 3, 2))},
    }[case]
    with pytest.raises((ValueError, TypeError)):
        tf.linalg.LinearOperatorLowRankUpdate(base, **kwargs)
