"""jax.numpy.prod: product reduction against NumPy over axes, dtypes, keepdims, initial/where,
integer accumulation, empty input and its gradient."""

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
def test_prod_matches_numpy(device, timed, dtype, axis, shape):
    rng = np.random.default_rng(0)
    # factors close to 1 (log-normal) so that products of many terms stay finite
    data = np.exp(rng.normal(0.0, 0.02, shape)) * rng.choice([-1.0, 1.0], shape)
    if dtype.startswith("complex"):
        data = data * np.exp(1j * rng.normal(0.0, 0.02, shape))
    x = jnp.asarray(data, dtype=dtype)
    out = timed(jnp.prod, x, axis=axis)
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    expected = np.prod(np.asarray(x).astype(wide), axis=axis)
    assert out.shape == expected.shape and out.dtype == x.dtype
    n = int(np.prod(shape)) // max(1, int(np.prod(expected.shape)))
    tol = TOLERANCE[dtype] * max(1.0, n**0.5)
    np.testing.assert_allclose(np.asarray(out).astype(wide), expected, rtol=tol, atol=1e-30)


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "bool"])
def test_prod_integer_promotes_like_numpy(device, timed, dtype):
    data = (
        np.array([[1, 2, 3, 4, 5, 6], [2, 2, 2, 2, 2, 2]])
        if dtype != "bool"
        else np.array([[1, 1, 0], [1, 1, 1]])
    )
    x = jnp.asarray(data, dtype=dtype)
    out = timed(jnp.prod, x, axis=1)
    expected = np.prod(data.astype(dtype), axis=1)
    # NumPy accumulates small integers in the default integer type (int64 with x64 enabled)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_prod_keepdims_initial_where(device, timed):
    data = np.arange(1.0, 13.0).reshape(3, 4)
    mask = np.arange(12).reshape(3, 4) % 3 != 0
    out = timed(jnp.prod, jnp.asarray(data), axis=0, keepdims=True, initial=2.0, where=jnp.asarray(mask))
    assert out.shape == (1, 4)
    np.testing.assert_allclose(
        np.asarray(out), np.prod(data, axis=0, keepdims=True, initial=2.0, where=mask), rtol=1e-14
    )


def test_prod_empty_and_special(device, timed):
    out = timed(jnp.prod, jnp.zeros((0, 3), jnp.float32), axis=0)
    np.testing.assert_array_equal(np.asarray(out), np.ones(3))
    special = np.asarray(
        timed(jnp.prod, jnp.array([[0.0, np.inf], [np.nan, 1.0], [1e30, 1e30]], jnp.float32), axis=1)
    )
    assert np.isnan(special[0]) and np.isnan(special[1]) and special[2] == np.inf


def test_prod_gradient(device, timed):
    x = jnp.array([1.5, -2.0, 0.5, 3.0])
    grad = timed(jax.grad(jnp.prod), x)
    xn = np.asarray(x)
    np.testing.assert_allclose(np.asarray(grad), np.prod(xn) / xn, rtol=1e-12)
