"""jax.scipy.special.gammaln: log|Gamma(x)| against scipy.special.gammaln, poles, negative arguments,
large arguments and its gradient (digamma)."""

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp_special
import numpy as np
import pytest
import scipy.special

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 2e-5, "float64": 1e-12, "float16": 5e-3, "bfloat16": 3e-2}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gammaln_matches_scipy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(0.05, 30, shape), dtype=dtype)
    out = timed(jsp_special.gammaln, x)
    assert out.dtype == x.dtype and out.shape == shape
    expected = scipy.special.gammaln(np.asarray(x).astype(np.float64))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


def test_gammaln_special_values(device, timed):
    x = jnp.array([1.0, 2.0, 0.5, 0.0, -1.0, -2.0, np.inf, np.nan], dtype=jnp.float64)
    out = np.asarray(timed(jsp_special.gammaln, x))
    np.testing.assert_allclose(out[:3], [0.0, 0.0, 0.5 * np.log(np.pi)], atol=1e-14)
    assert (out[3:7] == np.inf).all()  # poles at the non-positive integers, and +inf
    assert np.isnan(out[7])


def test_gammaln_negative_non_integers(device, timed):
    x = jnp.array([-0.5, -1.5, -2.5, -7.3], dtype=jnp.float64)
    out = timed(jsp_special.gammaln, x)
    np.testing.assert_allclose(np.asarray(out), scipy.special.gammaln(np.asarray(x)), rtol=1e-10)


def test_gammaln_large_arguments(device, timed):
    x = jnp.array([1e3, 1e6, 1e10, 1e30], dtype=jnp.float32)
    out = timed(jsp_special.gammaln, x)
    np.testing.assert_allclose(
        np.asarray(out, dtype=np.float64), scipy.special.gammaln(np.asarray(x, np.float64)), rtol=1e-5
    )


def test_gammaln_gradient_is_digamma(device, timed):
    x = jnp.linspace(0.3, 12.0, 15)
    grad = timed(jax.vmap(jax.grad(jsp_special.gammaln)), x)
    np.testing.assert_allclose(np.asarray(grad), scipy.special.digamma(np.asarray(x)), rtol=1e-10)
