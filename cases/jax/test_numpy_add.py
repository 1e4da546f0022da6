"""jax.numpy.add: elementwise addition against NumPy over dtypes, shapes, broadcasting and overflow."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {
    "float32": 1e-6,
    "float64": 1e-15,
    "float16": 1e-3,
    "bfloat16": 8e-3,
    "int32": 0,
    "complex64": 1e-6,
}
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


def _data(rng, shape, dtype):
    if dtype == "int32":
        return rng.integers(-1000, 1000, shape)
    data = rng.uniform(-10, 10, shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.uniform(-10, 10, shape)
    return data


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_add_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(_data(rng, shape, dtype), dtype=dtype)
    y = jnp.asarray(_data(rng, shape, dtype), dtype=dtype)
    out = timed(jnp.add, x, y)
    assert out.dtype == x.dtype and out.shape == shape
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    expected = np.asarray(x).astype(wide) + np.asarray(y).astype(wide)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(wide), expected, rtol=tol, atol=tol * 10)


def test_add_broadcasts(device, timed):
    x = jnp.arange(3.0, dtype=jnp.float32).reshape(3, 1)
    y = jnp.arange(4.0, dtype=jnp.float32).reshape(1, 4) * 10
    out = timed(jnp.add, x, y)
    assert out.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(out), np.arange(3.0)[:, None] + 10 * np.arange(4.0)[None, :])


def test_add_integer_overflow_wraps(device, timed):
    x = jnp.array([127, -128, 100], dtype=jnp.int8)
    y = jnp.array([1, -1, 27], dtype=jnp.int8)
    out = timed(jnp.add, x, y)
    assert out.dtype == jnp.int8
    np.testing.assert_array_equal(np.asarray(out), np.array([-128, 127, 127], dtype=np.int8))


def test_add_special_values(device, timed):
    x = jnp.array([np.inf, np.inf, np.nan, -0.0, 3e38], dtype=jnp.float32)
    y = jnp.array([1.0, -np.inf, 1.0, -0.0, 3e38], dtype=jnp.float32)
    out = np.asarray(timed(jnp.add, x, y))
    assert out[0] == np.inf and np.isnan(out[1]) and np.isnan(out[2])
    assert out[3] == 0.0 and np.signbit(out[3])
    assert out[4] == np.inf


def test_add_promotes_mixed_dtypes(device, timed):
    out = timed(jnp.add, jnp.arange(4, dtype=jnp.int32), jnp.ones(4, dtype=jnp.float32))
    assert out.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(out), np.arange(4) + 1.0)


def test_add_gradient(device, timed):
    x = jnp.linspace(-1.0, 1.0, 5)
    y = jnp.linspace(2.0, 3.0, 5)
    gx, gy = timed(jax.grad(lambda a, b: jnp.sum(jnp.add(a, b) ** 2), argnums=(0, 1)), x, y)
    np.testing.assert_allclose(np.asarray(gx), 2 * (np.asarray(x) + np.asarray(y)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), np.asarray(gx), rtol=1e-12)
