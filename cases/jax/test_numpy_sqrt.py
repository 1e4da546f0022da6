"""jax.numpy.sqrt: elementwise square root against NumPy, negatives, signed zero, complex and gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-6, "float64": 1e-15, "float16": 1e-3, "bfloat16": 8e-3, "complex64": 2e-6}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_sqrt_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    if dtype.startswith("complex"):
        data = rng.uniform(-10, 10, shape) + 1j * rng.uniform(-10, 10, shape)
    else:
        data = rng.uniform(0, 100, shape)
    x = jnp.asarray(data, dtype=dtype)
    out = timed(jnp.sqrt, x)
    assert out.dtype == x.dtype and out.shape == shape
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    expected = np.sqrt(np.asarray(x).astype(wide))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(wide), expected, rtol=tol, atol=tol)


def test_sqrt_special_values(device, timed):
    x = jnp.array([0.0, -0.0, 4.0, np.inf, -1.0, -np.inf, np.nan, 1e-40], dtype=jnp.float32)
    out = np.asarray(timed(jnp.sqrt, x))
    assert out[0] == 0.0 and not np.signbit(out[0])
    assert out[1] == 0.0 and np.signbit(out[1])
    assert out[2] == 2.0 and out[3] == np.inf
    assert np.isnan(out[4:7]).all()
    # subnormal input: sqrt(1e-40) = 1e-20, unless the device flushes subnormals to zero
    assert out[7] == pytest.approx(1e-20, rel=1e-3) or out[7] == 0.0


def test_sqrt_complex_branch(device, timed):
    x = jnp.array([-1.0 + 0j, -4.0 + 0j, 1j, -1j], dtype=jnp.complex128)
    out = np.asarray(timed(jnp.sqrt, x))
    np.testing.assert_allclose(out, np.sqrt(np.asarray(x)), rtol=1e-14, atol=1e-15)


def test_sqrt_perfect_squares_exact(device, timed):
    x = jnp.arange(0, 1000, dtype=jnp.float64) ** 2
    out = timed(jnp.sqrt, x)
    np.testing.assert_array_equal(np.asarray(out), np.arange(0, 1000, dtype=np.float64))


def test_sqrt_gradient(device, timed):
    x = jnp.linspace(0.25, 9.0, 11)
    grad = timed(jax.vmap(jax.grad(jnp.sqrt)), x)
    np.testing.assert_allclose(np.asarray(grad), 0.5 / np.sqrt(np.asarray(x)), rtol=1e-12)
