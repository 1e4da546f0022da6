"""jax.numpy.linalg.svd: singular values against numpy.linalg.svd, reconstruction and orthogonality of
the factors, full/reduced matrices, batches, the gradient, and the QDWH-based SVD
(jax._src.tpu.linalg.svd) the study timed."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-4, "float64": 1e-11, "complex64": 1e-4, "complex128": 1e-11}
SHAPES = [(0, 0), (1, 1), (3, 3), (5, 3), (3, 5), (2, 4, 3), (17, 9)]


def _matrix(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.standard_normal(shape)
    return data.astype(dtype)


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("full_matrices", [False, True], ids=["reduced", "full"])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_svd_factors(device, timed, dtype, full_matrices, shape):
    a = _matrix(shape, dtype)
    u, s, vh = timed(jnp.linalg.svd, jnp.asarray(a), full_matrices=full_matrices)
    m, n = shape[-2:]
    k = min(m, n)
    batch = shape[:-2]
    assert s.shape == (*batch, k) and s.dtype == np.finfo(dtype).dtype
    assert u.shape == (*batch, m, m if full_matrices else k) and vh.shape == (
        *batch,
        n if full_matrices else k,
        n,
    )
    tol = TOLERANCE[dtype] * max(1, max(m, n))
    np.testing.assert_allclose(
        np.asarray(s), np.linalg.svd(a.astype(np.complex128), compute_uv=False), rtol=tol, atol=tol
    )
    s_np = np.asarray(s).astype(a.dtype)
    recon = (np.asarray(u)[..., :, :k] * s_np[..., None, :]) @ np.asarray(vh)[..., :k, :]
    np.testing.assert_allclose(recon, a, rtol=tol, atol=tol)
    eye_u = np.swapaxes(np.asarray(u).conj(), -1, -2) @ np.asarray(u)
    np.testing.assert_allclose(eye_u, np.broadcast_to(np.eye(u.shape[-1]), eye_u.shape), atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_large_tall(device, timed, dtype):
    a = _matrix((1024, 128), dtype, seed=4)  # 1 MB in float64: leaves the cache
    u, s, vh = timed(jnp.linalg.svd, jnp.asarray(a), full_matrices=False)
    assert u.shape == (1024, 128) and s.shape == (128,) and vh.shape == (128, 128)
    tol = 1e-3 if dtype == "float32" else 1e-10
    ref = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    np.testing.assert_allclose(np.asarray(s), ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(
        (np.asarray(u) * np.asarray(s)) @ np.asarray(vh), a, rtol=tol * 10, atol=tol * 10
    )


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_svd_values_only(device, timed, dtype):
    a = _matrix((6, 4), dtype, seed=1)
    s = timed(jnp.linalg.svd, jnp.asarray(a), compute_uv=False)
    np.testing.assert_allclose(
        np.asarray(s), np.linalg.svd(a.astype(np.float64), compute_uv=False), rtol=1e-5
    )
    assert np.all(np.diff(np.asarray(s)) <= 0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_svd_half_precision(device, timed, dtype):
    a = np.diag([4.0, 2.0, 1.0]) + 0.1
    s = timed(jnp.linalg.svd, jnp.asarray(a, dtype=dtype), compute_uv=False)
    np.testing.assert_allclose(np.asarray(s, np.float64), np.linalg.svd(a, compute_uv=False), rtol=2e-2)


def test_svd_rank_deficient(device, timed):
    a = np.outer(np.arange(1.0, 6.0), np.arange(1.0, 5.0))
    s = timed(jnp.linalg.svd, jnp.asarray(a), compute_uv=False)
    np.testing.assert_allclose(np.asarray(s)[0], np.linalg.norm(a), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(s)[1:], 0.0, atol=1e-12)


def test_svd_gradient_of_nuclear_norm(device, timed):
    a = jnp.asarray(_matrix((4, 3), "float64", seed=2))
    grad = timed(jax.grad(lambda x: jnp.sum(jnp.linalg.svd(x, compute_uv=False))), a)
    u, _, vh = np.linalg.svd(np.asarray(a), full_matrices=False)
    np.testing.assert_allclose(np.asarray(grad), u @ vh, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_qdwh_svd(device, timed, dtype):
    shape = (8, 5)
    from jax._src.tpu.linalg import svd as qdwh_svd

    a = _matrix(shape, dtype, seed=3)
    u, s, vh = timed(qdwh_svd.svd, jnp.asarray(a), full_matrices=False)
    tol = 1e-3 if dtype == "float32" else 1e-9
    np.testing.assert_allclose(
        np.asarray(s), np.linalg.svd(a.astype(np.float64), compute_uv=False), rtol=tol, atol=tol
    )
    recon = (np.asarray(u) * np.asarray(s)[None, :]) @ np.asarray(vh)
    np.testing.assert_allclose(recon, a, rtol=tol * 10, atol=tol * 10)
