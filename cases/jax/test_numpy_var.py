"""jax.numpy.var: variance against NumPy over axes, dtypes, ddof, keepdims, where, empty input and
its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-5, "float64": 1e-12, "float16": 1e-2, "bfloat16": 5e-2, "complex64": 1e-5}
AXES = [None, 0, -1, (0, 2)]
SHAPES = [(3, 5, 7), (1, 1, 1), (64, 33, 129)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("axis", AXES, ids=["all", "first", "last", "pair"])
@pytest.mark.parametrize("shape", SHAPES, ids=["odd", "ones", "large"])
def test_var_matches_numpy(device, timed, dtype, axis, shape):
    rng = np.random.default_rng(0)
    data = rng.normal(3.0, 2.0, shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.normal(0.0, 1.0, shape)
    x = jnp.asarray(data, dtype=dtype)
    out = timed(jnp.var, x, axis=axis)
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    expected = np.var(np.asarray(x).astype(wide), axis=axis)
    assert out.shape == expected.shape
    # the variance of complex input is real
    assert not jnp.issubdtype(out.dtype, jnp.complexfloating)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("ddof", [0, 1, 3])
def test_var_ddof_keepdims(device, timed, ddof):
    x = jnp.asarray(np.random.default_rng(1).normal(size=(4, 9)))
    out = timed(jnp.var, x, axis=1, ddof=ddof, keepdims=True)
    assert out.shape == (4, 1)
    np.testing.assert_allclose(
        np.asarray(out), np.var(np.asarray(x), axis=1, ddof=ddof, keepdims=True), rtol=1e-12
    )


def test_var_where(device, timed):
    data = np.arange(20.0).reshape(4, 5) ** 1.5
    mask = (np.arange(20).reshape(4, 5) % 3) != 0
    out = timed(jnp.var, jnp.asarray(data), axis=1, where=jnp.asarray(mask))
    np.testing.assert_allclose(np.asarray(out), np.var(data, axis=1, where=mask), rtol=1e-12)


def test_var_empty_and_constant(device, timed):
    out = timed(jnp.var, jnp.zeros((0,), jnp.float32))
    assert out.shape == () and np.isnan(np.asarray(out))
    const = timed(jnp.var, jnp.full((1000,), 7.25, jnp.float32))
    # zero up to rounding of the mean (XLA may divide by n as a multiply by 1/n)
    assert 0.0 <= float(const) < (7.25 * np.finfo(np.float32).eps) ** 2 * 10


def test_var_integer_input_is_float(device, timed):
    out = timed(jnp.var, jnp.arange(10, dtype=jnp.int32))
    assert jnp.issubdtype(out.dtype, jnp.floating)
    assert float(out) == pytest.approx(8.25)


def test_var_gradient(device, timed):
    x = jnp.asarray(np.random.default_rng(2).normal(size=17))
    grad = timed(jax.grad(jnp.var), x)
    xn = np.asarray(x)
    np.testing.assert_allclose(np.asarray(grad), 2 * (xn - xn.mean()) / xn.size, rtol=1e-10, atol=1e-14)
