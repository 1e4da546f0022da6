"""jax.numpy.cos: elementwise cosine against NumPy, special values and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-6, "float64": 1e-14, "float16": 1e-3, "bfloat16": 1e-2, "complex64": 1e-5}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_cos_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    data = rng.uniform(-10, 10, shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.uniform(-2, 2, shape)
    x = jnp.asarray(data, dtype=dtype)
    out = timed(jnp.cos, x)
    assert out.dtype == x.dtype and out.shape == shape
    expected = np.cos(np.asarray(x, dtype=np.complex128 if dtype.startswith("complex") else np.float64))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(expected.dtype), expected, rtol=tol, atol=tol)


def test_cos_special_values(device, timed):
    x = jnp.array([0.0, np.pi, -np.pi / 2, np.inf, -np.inf, np.nan], dtype=jnp.float32)
    out = np.asarray(timed(jnp.cos, x))
    np.testing.assert_allclose(out[:3], [1.0, -1.0, 0.0], atol=1e-6)
    assert np.isnan(out[3:]).all()


def test_cos_integer_input_promotes(device, timed):
    out = timed(jnp.cos, jnp.arange(4, dtype=jnp.int32))
    assert jnp.issubdtype(out.dtype, jnp.floating)
    np.testing.assert_allclose(np.asarray(out), np.cos(np.arange(4)), rtol=1e-6)


def test_cos_gradient(device, timed):
    x = jnp.linspace(-3.0, 3.0, 11, dtype=jnp.float64)
    grad = timed(jax.vmap(jax.grad(jnp.cos)), x)
    np.testing.assert_allclose(np.asarray(grad), -np.sin(np.asarray(x)), rtol=1e-12)
