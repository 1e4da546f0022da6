"""jax.scipy.stats.norm.cdf: normal CDF against scipy.stats.norm.cdf with loc/scale broadcasting,
dtypes, tails,
limits and gradient."""

import jax
import jax.numpy as jnp
import jax.scipy.stats as jsp_stats
import numpy as np
import pytest
import scipy.stats

jax.config.update("jax_enable_x64", True)

# norm.cdf is built on ndtr, which documents float32/float64 only; half types raise TypeError.
TOLERANCE = {"float32": 1e-6, "float64": 1e-14}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_norm_cdf_standard(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-6, 6, shape), dtype=dtype)
    out = timed(jsp_stats.norm.cdf, x)
    assert out.shape == shape and out.dtype == x.dtype
    expected = scipy.stats.norm.cdf(np.asarray(x).astype(np.float64))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norm_cdf_loc_scale_broadcast(device, timed, dtype):
    rng = np.random.default_rng(1)
    x = rng.uniform(-5, 5, (4, 1, 6)).astype(dtype)
    loc = rng.uniform(-1, 1, (3, 1)).astype(dtype)
    scale = rng.uniform(0.2, 3, (6,)).astype(dtype)
    out = timed(jsp_stats.norm.cdf, jnp.asarray(x), jnp.asarray(loc), jnp.asarray(scale))
    expected = scipy.stats.norm.cdf(x.astype(np.float64), loc, scale)
    assert out.shape == expected.shape == (4, 3, 6)
    np.testing.assert_allclose(
        np.asarray(out), expected, rtol=TOLERANCE[dtype] * 10, atol=TOLERANCE[dtype] * 10
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_norm_cdf_rejects_half(device, timed, dtype):
    with pytest.raises(TypeError):
        timed(jsp_stats.norm.cdf, jnp.zeros((3,), dtype))


def test_norm_cdf_far_tail(device, timed):
    x = jnp.array([-10.0, -25.0, -37.0, 8.0], dtype=jnp.float64)
    out = timed(jsp_stats.norm.cdf, x)
    np.testing.assert_allclose(np.asarray(out), scipy.stats.norm.cdf(np.asarray(x)), rtol=1e-10)


def test_norm_cdf_special_values(device, timed):
    x = jnp.array([0.0, np.inf, -np.inf, np.nan], dtype=jnp.float32)
    out = np.asarray(timed(jsp_stats.norm.cdf, x))
    np.testing.assert_array_equal(out[:3], [0.5, 1.0, 0.0])
    assert np.isnan(out[3])


def test_norm_cdf_gradient_is_pdf(device, timed):
    x = jnp.linspace(-4.0, 4.0, 17, dtype=jnp.float64)
    grad = timed(jax.vmap(jax.grad(lambda v: jsp_stats.norm.cdf(v, 1.0, 2.0))), x)
    np.testing.assert_allclose(np.asarray(grad), scipy.stats.norm.pdf(np.asarray(x), 1.0, 2.0), rtol=1e-12)
