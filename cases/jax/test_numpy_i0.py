"""jax.numpy.i0 (the study printed jax.scipy.special.i0): modified Bessel function of order 0
against scipy.special.i0, symmetry, overflow and its gradient (i1)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-5, "float64": 1e-12, "float16": 3e-3, "bfloat16": 2e-2}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_i0_matches_scipy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-9, 9, shape), dtype=dtype)
    out = timed(jnp.i0, x)
    assert out.dtype == x.dtype and out.shape == shape
    expected = scipy.special.i0(np.asarray(x).astype(np.float64))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


def test_i0_special_values(device, timed):
    x = jnp.array([0.0, 1.0, -1.0, np.inf, -np.inf, np.nan], dtype=jnp.float64)
    out = np.asarray(timed(jnp.i0, x))
    np.testing.assert_allclose(out[:3], [1.0, 1.2660658777520082, 1.2660658777520082], rtol=1e-14)
    # exp(x) * series / sqrt(x) at +-inf is nan in the reference implementations too
    reference = scipy.special.i0(np.array([np.inf, -np.inf, np.nan]))
    np.testing.assert_array_equal(out[3:], reference)


def test_i0_large_arguments(device, timed):
    x = jnp.array([50.0, -80.0, 100.0], dtype=jnp.float32)
    out = np.asarray(timed(jnp.i0, x))
    np.testing.assert_allclose(out[:2], scipy.special.i0([50.0, -80.0]), rtol=1e-5)
    assert out[2] == np.inf  # i0(100) ~ 1e42 overflows float32


def test_i0_integer_input_promotes(device, timed):
    out = timed(jnp.i0, jnp.arange(-3, 4, dtype=jnp.int32))
    assert jnp.issubdtype(out.dtype, jnp.floating)
    np.testing.assert_allclose(np.asarray(out), scipy.special.i0(np.arange(-3, 4)), rtol=1e-6)


def test_i0_gradient_is_i1(device, timed):
    x = jnp.linspace(-5.0, 5.0, 11)
    grad = timed(jax.vmap(jax.grad(jnp.i0)), x)
    np.testing.assert_allclose(np.asarray(grad), scipy.special.i1(np.asarray(x)), rtol=1e-10, atol=1e-14)
