"""jax.lax.integer_pow: x**y for a static integer exponent against NumPy per dtype, negative exponents,
gradient,
and under jax.experimental.sparse.sparsify as the study timed it."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.experimental import sparse

jax.config.update("jax_enable_x64", True)

TOLERANCE = {
    "float32": 1e-6,
    "float64": 1e-14,
    "float16": 1e-3,
    "bfloat16": 1e-2,
    "int32": 0,
    "complex64": 1e-5,
}


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 7])
@pytest.mark.parametrize("shape", [(0,), (7, 3), (1 << 18,)], ids=["empty", "odd", "large"])
def test_integer_pow_matches_numpy(device, timed, dtype, exponent, shape):
    rng = np.random.default_rng(0)
    if dtype == "int32":
        data = rng.integers(-5, 6, shape)
    else:
        data = rng.uniform(-1.5, 1.5, shape)
        if dtype.startswith("complex"):
            data = data + 1j * rng.uniform(-1, 1, shape)
    x = jnp.asarray(data, dtype=dtype)
    out = timed(lax.integer_pow, x, exponent)
    assert out.shape == shape and out.dtype == x.dtype
    wide = np.complex128 if dtype.startswith("complex") else (np.int64 if dtype == "int32" else np.float64)
    expected = np.asarray(x).astype(wide) ** exponent
    tol = TOLERANCE[dtype] * max(1, exponent)  # rounding compounds over the repeated products
    np.testing.assert_allclose(np.asarray(out).astype(wide), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_integer_pow_negative_exponent(device, timed, dtype):
    x = jnp.asarray([0.5, -2.0, 4.0, 0.0], dtype=dtype)
    out = np.asarray(timed(lax.integer_pow, x, -3))
    np.testing.assert_allclose(out[:3], np.array([0.5, -2.0, 4.0]) ** -3, rtol=1e-6)
    assert np.isposinf(out[3])


def test_integer_pow_gradient(device, timed):
    x = jnp.linspace(-2.0, 2.0, 9, dtype=jnp.float64)
    grad = timed(jax.vmap(jax.grad(lambda v: lax.integer_pow(v, 5))), x)
    np.testing.assert_allclose(np.asarray(grad), 5 * np.asarray(x) ** 4, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_integer_pow_sparsify(device, timed, dtype):
    rng = np.random.default_rng(1)
    dense = rng.uniform(-2, 2, (6, 5)) * (rng.uniform(size=(6, 5)) < 0.4)
    mat = sparse.BCOO.fromdense(jnp.asarray(dense, dtype=dtype))
    out = timed(sparse.sparsify(functools.partial(lax.integer_pow, y=2)), mat)
    assert isinstance(out, sparse.BCOO) and out.nse == mat.nse
    np.testing.assert_allclose(np.asarray(out.todense()), dense.astype(dtype) ** 2, rtol=1e-6)
