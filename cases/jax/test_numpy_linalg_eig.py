"""jax.numpy.linalg.eig: general (non-symmetric) eigendecomposition checked by A v = v w, unit
eigenvectors and eigenvalues against numpy.linalg.eig, over dtypes, sizes, batches and known spectra.
In the study JAX implemented it on the CPU backend only; current JAX also lowers it on CUDA/ROCm GPUs
(cusolver/MAGMA geev), not on TPU."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}
SHAPES = [(0, 0), (1, 1), (5, 5), (3, 6, 6), (256, 256)]


def _matrix(rng, shape, dtype):
    data = rng.normal(size=shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.normal(size=shape)
    return data


def _sorted(values):
    values = np.asarray(values)
    return (
        np.sort_complex(np.round(values, 6)) if values.ndim == 1 else np.stack([_sorted(v) for v in values])
    )


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_eig_satisfies_definition(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    a = jnp.asarray(_matrix(rng, shape, dtype), dtype=dtype)
    w, v = timed(jnp.linalg.eig, a)
    assert jnp.issubdtype(w.dtype, jnp.complexfloating) and jnp.issubdtype(v.dtype, jnp.complexfloating)
    assert w.shape == shape[:-1] and v.shape == shape
    an, wn, vn = (np.asarray(t).astype(np.complex128) for t in (a, w, v))
    tol = TOLERANCE[dtype]
    n = shape[-1]
    if n == 0:
        return
    scale = max(1.0, np.abs(an).max()) * n
    np.testing.assert_allclose(an @ vn, vn * wn[..., None, :], atol=tol * scale)
    np.testing.assert_allclose(np.linalg.norm(vn, axis=-2), 1.0, rtol=tol * 10)
    if n <= 6:
        np.testing.assert_allclose(_sorted(wn), _sorted(np.linalg.eig(an)[0]), atol=max(tol * 100, 1e-5))


def test_eig_known_spectrum(device, timed):
    rotation = jnp.array([[0.0, -1.0], [1.0, 0.0]])
    w, _ = timed(jnp.linalg.eig, rotation)
    np.testing.assert_allclose(np.sort_complex(np.asarray(w)), [-1j, 1j], atol=1e-12)
    triangular = jnp.array([[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [0.0, 0.0, 5.0]])
    w, _ = timed(jnp.linalg.eig, triangular)
    np.testing.assert_allclose(np.sort(np.asarray(w).real), [2.0, 3.0, 5.0], atol=1e-12)
    np.testing.assert_allclose(np.asarray(w).imag, 0.0, atol=1e-12)


def test_eig_real_input_gives_conjugate_pairs(device, timed):
    a = jnp.asarray(np.random.default_rng(3).normal(size=(7, 7)))
    w, _ = timed(jnp.linalg.eig, a)
    wn = np.asarray(w)
    np.testing.assert_allclose(np.sort_complex(wn), np.sort_complex(np.conj(wn)), atol=1e-10)


def test_eig_rejects_non_square(device, timed):
    with pytest.raises((ValueError, TypeError)):
        timed(jnp.linalg.eig, jnp.ones((3, 4)))
