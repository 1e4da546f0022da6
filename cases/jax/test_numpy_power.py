"""jax.numpy.power: elementwise power against NumPy over dtypes, integer exponents, broadcasting, edges."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 5e-6, "float64": 1e-13, "float16": 3e-3, "bfloat16": 2e-2, "complex64": 2e-5}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_power_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    base = rng.uniform(0.1, 4, shape)
    expo = rng.uniform(-3, 3, shape)
    if dtype.startswith("complex"):
        base = base + 1j * rng.uniform(-2, 2, shape)
        expo = expo + 1j * rng.uniform(-1, 1, shape)
    x = jnp.asarray(base, dtype=dtype)
    y = jnp.asarray(expo, dtype=dtype)
    out = timed(jnp.power, x, y)
    assert out.dtype == x.dtype and out.shape == shape
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    expected = np.power(np.asarray(x).astype(wide), np.asarray(y).astype(wide))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(wide), expected, rtol=tol, atol=1e-30)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_power_integers_exact(device, timed, dtype):
    base = jnp.asarray(np.arange(-5, 6) % 7 if dtype == "uint8" else np.arange(-5, 6), dtype=dtype)
    expo = jnp.asarray(np.arange(11) % 4, dtype=dtype)
    out = timed(jnp.power, base, expo)
    assert out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), np.power(np.asarray(base), np.asarray(expo)))


def test_power_broadcast_scalar_exponent(device, timed):
    x = jnp.linspace(0.0, 3.0, 16, dtype=jnp.float32).reshape(4, 4)
    out = timed(jnp.power, x, 2)
    assert out.shape == (4, 4) and out.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(out), np.asarray(x) ** 2, rtol=1e-6)


def test_power_special_values(device, timed):
    x = jnp.array([0.0, 0.0, -8.0, -2.0, np.inf, 1.0, 2.0], dtype=jnp.float64)
    y = jnp.array([0.0, -1.0, 1 / 3, 3.0, -1.0, np.nan, np.inf], dtype=jnp.float64)
    out = np.asarray(timed(jnp.power, x, y))
    with np.errstate(all="ignore"):
        expected = np.power(np.asarray(x), np.asarray(y))
    # 0**0 = 1, 0**-1 = inf, negative base with fractional exponent = nan, 1**nan = 1, 2**inf = inf
    np.testing.assert_array_equal(out, expected)


def test_power_gradient(device, timed):
    x = jnp.linspace(0.5, 3.0, 6)
    y = jnp.linspace(-1.0, 2.0, 6)
    gx, gy = timed(jax.vmap(jax.grad(jnp.power, argnums=(0, 1))), x, y)
    xn, yn = np.asarray(x), np.asarray(y)
    np.testing.assert_allclose(np.asarray(gx), yn * xn ** (yn - 1), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), np.log(xn) * xn**yn, rtol=1e-12)
