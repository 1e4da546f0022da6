"""jax.scipy.special.ndtr: the standard normal CDF against scipy.special.ndtr, tails, limits and gradient."""

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp_special
import numpy as np
import pytest
import scipy.special

jax.config.update("jax_enable_x64", True)

# ndtr documents float32/float64 only (half and integer inputs raise TypeError).
TOLERANCE = {"float32": 1e-6, "float64": 1e-14}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_ndtr_matches_scipy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-6, 6, shape), dtype=dtype)
    out = timed(jsp_special.ndtr, x)
    assert out.dtype == x.dtype and out.shape == shape
    expected = scipy.special.ndtr(np.asarray(x).astype(np.float64))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


def test_ndtr_lower_tail_relative_accuracy(device, timed):
    x = jnp.array([-10.0, -20.0, -30.0, -37.0], dtype=jnp.float64)
    out = timed(jsp_special.ndtr, x)
    np.testing.assert_allclose(np.asarray(out), scipy.special.ndtr(np.asarray(x)), rtol=1e-10)


def test_ndtr_special_values(device, timed):
    x = jnp.array([0.0, np.inf, -np.inf, np.nan], dtype=jnp.float32)
    out = np.asarray(timed(jsp_special.ndtr, x))
    np.testing.assert_array_equal(out[:3], [0.5, 1.0, 0.0])
    assert np.isnan(out[3])


@pytest.mark.parametrize("dtype", ["int32", "float16"])
def test_ndtr_rejects_unsupported_dtype(device, timed, dtype):
    with pytest.raises(TypeError):
        timed(jsp_special.ndtr, jnp.arange(-3, 4).astype(dtype))


def test_ndtr_gradient_is_normal_pdf(device, timed):
    x = jnp.linspace(-4.0, 4.0, 17, dtype=jnp.float64)
    grad = timed(jax.vmap(jax.grad(jsp_special.ndtr)), x)
    pdf = np.exp(-(np.asarray(x) ** 2) / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(np.asarray(grad), pdf, rtol=1e-12)
