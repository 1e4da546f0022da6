"""jax.numpy.convolve: 1-D convolution against numpy.convolve for modes, dtypes and lengths; precision;
gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {
    "float32": 1e-4,
    "float64": 1e-12,
    "float16": 2e-2,
    "bfloat16": 1e-1,
    "int32": 0,
    "complex64": 1e-4,
}


def _data(rng, n, dtype):
    if dtype == "int32":
        return rng.integers(-10, 10, n).astype(np.int32)
    data = rng.uniform(-1, 1, n)
    if dtype.startswith("complex"):
        data = data + 1j * rng.uniform(-1, 1, n)
    return data.astype(jnp.dtype(dtype))


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(1, 1), (7, 3), (3, 7), (12, 12), (1 << 17, 9)], ids=str)
def test_convolve_matches_numpy(device, timed, dtype, mode, lengths):
    rng = np.random.default_rng(0)
    a, v = _data(rng, lengths[0], dtype), _data(rng, lengths[1], dtype)
    out = timed(jnp.convolve, jnp.asarray(a), jnp.asarray(v), mode=mode)
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    expected = np.convolve(np.asarray(a).astype(wide), np.asarray(v).astype(wide), mode=mode)
    assert out.shape == expected.shape
    if dtype == "int32":  # jnp.convolve promotes integer inputs to an inexact type
        assert jnp.issubdtype(out.dtype, jnp.floating)
    else:
        assert out.dtype == jnp.dtype(dtype)
    tol = TOLERANCE[dtype] * max(1.0, np.sqrt(min(lengths)))
    np.testing.assert_allclose(np.asarray(out).astype(wide), expected, rtol=tol, atol=tol)


def test_convolve_precision_highest(device, timed):
    rng = np.random.default_rng(1)
    a, v = rng.standard_normal(257).astype(np.float32), rng.standard_normal(31).astype(np.float32)
    out = timed(jnp.convolve, jnp.asarray(a), jnp.asarray(v), precision="highest")
    np.testing.assert_allclose(np.asarray(out), np.convolve(a.astype(np.float64), v), rtol=1e-5, atol=1e-5)


def test_convolve_empty_raises(device, timed):
    with pytest.raises(ValueError):
        timed(jnp.convolve, jnp.zeros((0,)), jnp.ones((3,)))


def test_convolve_gradient(device, timed):
    a = jnp.arange(1.0, 6.0)
    v = jnp.array([1.0, -2.0, 0.5])
    grad = timed(jax.grad(lambda u: jnp.sum(jnp.convolve(u, v) ** 2)), a)
    full = np.convolve(np.asarray(a), np.asarray(v))
    expected = np.array([np.sum(2 * full * np.convolve(np.eye(5)[i], np.asarray(v))) for i in range(5)])
    np.testing.assert_allclose(np.asarray(grad), expected, rtol=1e-12)
