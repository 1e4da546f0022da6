"""jax.numpy.log: natural logarithm against NumPy per dtype and shape, special values, integer
promotion, gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-6, "float64": 1e-14, "float16": 1e-3, "bfloat16": 1e-2, "complex64": 1e-5}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_log_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    data = rng.uniform(1e-3, 100, shape)
    if dtype.startswith("complex"):
        data = data * np.exp(1j * rng.uniform(-3, 3, shape))
    x = jnp.asarray(data, dtype=dtype)
    out = timed(jnp.log, x)
    assert out.dtype == x.dtype and out.shape == shape
    ref_dtype = np.complex128 if dtype.startswith("complex") else np.float64
    expected = np.log(np.asarray(x).astype(ref_dtype))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(ref_dtype), expected, rtol=tol, atol=tol)


def test_log_special_values(device, timed):
    x = jnp.array([1.0, np.e, 0.0, -0.0, np.inf, -1.0, np.nan], dtype=jnp.float32)
    out = np.asarray(timed(jnp.log, x))
    np.testing.assert_allclose(out[:2], [0.0, 1.0], atol=1e-6)
    assert np.isneginf(out[2]) and np.isneginf(out[3]) and np.isposinf(out[4])
    assert np.isnan(out[5]) and np.isnan(out[6])


def test_log_subnormal_and_tiny(device, timed):
    x = jnp.array([np.finfo(np.float64).tiny, 1e-300, 1e300], dtype=jnp.float64)
    out = timed(jnp.log, x)
    np.testing.assert_allclose(np.asarray(out), np.log(np.asarray(x)), rtol=1e-14)


def test_log_integer_input_promotes(device, timed):
    out = timed(jnp.log, jnp.arange(1, 9, dtype=jnp.int32))
    assert jnp.issubdtype(out.dtype, jnp.floating)
    np.testing.assert_allclose(np.asarray(out), np.log(np.arange(1, 9)), rtol=1e-6)


def test_log_gradient(device, timed):
    x = jnp.linspace(0.5, 5.0, 10, dtype=jnp.float64)
    grad = timed(jax.vmap(jax.grad(jnp.log)), x)
    np.testing.assert_allclose(np.asarray(grad), 1.0 / np.asarray(x), rtol=1e-12)
