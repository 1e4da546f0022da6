"""jax.numpy.exp: elementwise exponential against NumPy, special values, overflow and gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 2e-6, "float64": 1e-14, "float16": 2e-3, "bfloat16": 1e-2, "complex64": 5e-6}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_exp_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    data = rng.uniform(-8, 8, shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.uniform(-4, 4, shape)
    x = jnp.asarray(data, dtype=dtype)
    out = timed(jnp.exp, x)
    assert out.dtype == x.dtype and out.shape == shape
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    expected = np.exp(np.asarray(x).astype(wide))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(wide), expected, rtol=tol, atol=1e-30)


def test_exp_special_values(device, timed):
    x = jnp.array([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan], dtype=jnp.float32)
    out = np.asarray(timed(jnp.exp, x))
    np.testing.assert_allclose(out[:3], [1.0, 1.0, np.e], rtol=1e-6)
    assert out[3] == np.inf and out[4] == 0.0 and np.isnan(out[5])


@pytest.mark.parametrize("dtype,big,small", [("float32", 89.0, -104.0), ("float16", 12.0, -18.0)])
def test_exp_overflow_underflow(device, timed, dtype, big, small):
    out = np.asarray(timed(jnp.exp, jnp.array([big, small], dtype=dtype)))
    assert out[0] == np.inf and out[1] == 0.0


def test_exp_integer_input_promotes(device, timed):
    out = timed(jnp.exp, jnp.arange(5, dtype=jnp.int32))
    assert jnp.issubdtype(out.dtype, jnp.floating)
    np.testing.assert_allclose(np.asarray(out), np.exp(np.arange(5)), rtol=1e-6)


def test_exp_gradient(device, timed):
    x = jnp.linspace(-3.0, 3.0, 13)
    grad = timed(jax.vmap(jax.grad(jnp.exp)), x)
    np.testing.assert_allclose(np.asarray(grad), np.exp(np.asarray(x)), rtol=1e-12)
