"""jax.numpy.average: (weighted) averages against numpy.average over axes and dtypes; returned weights;
gradient."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-2, "bfloat16": 5e-2, "int32": 1e-6}


def _data(rng, shape, dtype):
    if dtype == "int32":
        return rng.integers(-100, 100, shape).astype(np.int32)
    return rng.uniform(-1, 1, shape).astype(jnp.dtype(dtype))


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("axis", [None, 0, -1], ids=["all", "first", "last"])
@pytest.mark.parametrize("shape", [(1,), (3, 5, 7), (512, 1024)], ids=["one", "odd", "large"])
def test_average_unweighted(device, timed, dtype, axis, shape):
    rng = np.random.default_rng(0)
    x = _data(rng, shape, dtype)
    out = timed(jnp.average, jnp.asarray(x), axis=axis)
    expected = np.average(x.astype(np.float64), axis=axis)
    assert out.shape == np.shape(expected)
    assert jnp.issubdtype(out.dtype, jnp.inexact)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [None, 1])
def test_average_weighted(device, timed, dtype, axis):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (4, 6)).astype(dtype)
    w = rng.uniform(0.1, 2, (4, 6) if axis is None else (6,)).astype(dtype)
    out = timed(jnp.average, jnp.asarray(x), axis=axis, weights=jnp.asarray(w))
    expected = np.average(x.astype(np.float64), axis=axis, weights=w.astype(np.float64))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out), expected, rtol=tol, atol=tol)


def test_average_returned_and_keepdims(device, timed):
    x = np.arange(12.0).reshape(3, 4)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    avg, wsum = timed(
        jnp.average, jnp.asarray(x), axis=1, weights=jnp.asarray(w), returned=True, keepdims=True
    )
    e_avg, e_wsum = np.average(x, axis=1, weights=w, returned=True, keepdims=True)
    np.testing.assert_allclose(np.asarray(avg), e_avg)
    np.testing.assert_allclose(np.asarray(wsum), e_wsum)


def test_average_empty_is_nan(device, timed):
    out = timed(jnp.average, jnp.zeros((0,), jnp.float32))
    assert np.isnan(np.asarray(out))


def test_average_gradient(device, timed):
    x = jnp.arange(1.0, 9.0)
    w = jnp.arange(8.0, 0.0, -1.0)
    grad = timed(jax.grad(functools.partial(jnp.average, weights=w)), x)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(w) / np.sum(np.asarray(w)), rtol=1e-12)
