"""jax.lax.erf: error function against scipy.special.erf per dtype and shape, symmetry, limits and
gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special
from jax import lax

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-6, "float64": 1e-14, "float16": 2e-3, "bfloat16": 1e-2}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_erf_matches_scipy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-4, 4, shape), dtype=dtype)
    out = timed(lax.erf, x)
    assert out.dtype == x.dtype and out.shape == shape
    expected = scipy.special.erf(np.asarray(x).astype(np.float64))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


def test_erf_special_values(device, timed):
    x = jnp.array([0.0, -0.0, np.inf, -np.inf, np.nan, 10.0, -10.0], dtype=jnp.float32)
    out = np.asarray(timed(lax.erf, x))
    np.testing.assert_array_equal(out[:4], [0.0, 0.0, 1.0, -1.0])
    assert np.isnan(out[4])
    np.testing.assert_allclose(out[5:], [1.0, -1.0], atol=1e-7)


def test_erf_is_odd(device, timed):
    x = jnp.linspace(0.0, 3.0, 101, dtype=jnp.float64)
    pos = timed(lax.erf, x)
    neg = timed(lax.erf, -x)
    np.testing.assert_allclose(np.asarray(pos), -np.asarray(neg), rtol=0, atol=0)


def test_erf_small_argument_linear(device, timed):
    x = jnp.array([1e-10, 1e-20, 1e-300], dtype=jnp.float64)
    out = timed(lax.erf, x)
    np.testing.assert_allclose(np.asarray(out), 2 / np.sqrt(np.pi) * np.asarray(x), rtol=1e-12)


def test_erf_rejects_integer(device, timed):
    with pytest.raises(TypeError):
        timed(lax.erf, jnp.arange(3, dtype=jnp.int32))


def test_erf_gradient(device, timed):
    x = jnp.linspace(-3.0, 3.0, 13, dtype=jnp.float64)
    grad = timed(jax.vmap(jax.grad(lax.erf)), x)
    np.testing.assert_allclose(
        np.asarray(grad), 2 / np.sqrt(np.pi) * np.exp(-(np.asarray(x) ** 2)), rtol=1e-12
    )
