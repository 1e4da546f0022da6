"""jax.lax.select: elementwise choice by a boolean predicate, against numpy.where; broadcasting rules;
gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "bool", "complex64"]
SHAPES = [(0,), (), (7, 3), (3, 1, 5), (1 << 18,)]


def _data(rng, shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    values = rng.uniform(0 if dtype == "uint8" else -100, 100, shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.uniform(-1, 1, shape)
    return np.asarray(values).astype(jnp.dtype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_select_matches_where(device, timed, dtype, shape):
    rng = np.random.default_rng(3)
    pred = rng.integers(0, 2, shape).astype(bool)
    a, b = _data(rng, shape, dtype), _data(rng, shape, dtype)
    out = timed(lax.select, jnp.asarray(pred), jnp.asarray(a), jnp.asarray(b))
    assert out.shape == shape and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), np.where(pred, a, b))


def test_select_scalar_predicate(device, timed):
    a, b = jnp.arange(6.0).reshape(2, 3), -jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(timed(lax.select, jnp.bool_(True), a, b)), np.asarray(a))
    np.testing.assert_array_equal(np.asarray(timed(lax.select, jnp.bool_(False), a, b)), np.asarray(b))


def test_select_propagates_nan_and_inf(device, timed):
    pred = jnp.array([True, False, True, False])
    a = jnp.array([np.nan, 1.0, np.inf, 2.0])
    b = jnp.array([0.0, np.nan, 0.0, -np.inf])
    out = np.asarray(timed(lax.select, pred, a, b))
    assert np.isnan(out[0]) and np.isnan(out[1]) and np.isposinf(out[2]) and np.isneginf(out[3])


def test_select_rejects_mismatched_shapes(device, timed):
    with pytest.raises(TypeError):
        timed(lax.select, jnp.ones((3,), bool), jnp.ones((3,)), jnp.ones((4,)))


def test_select_gradient_routes_by_predicate(device, timed):
    pred = jnp.array([True, False, True])
    x, y = jnp.array([1.0, 2.0, 3.0]), jnp.array([4.0, 5.0, 6.0])
    gx, gy = timed(jax.grad(lambda u, v: jnp.sum(lax.select(pred, u * u, v * v)), argnums=(0, 1)), x, y)
    np.testing.assert_allclose(np.asarray(gx), [2.0, 0.0, 6.0])
    np.testing.assert_allclose(np.asarray(gy), [0.0, 10.0, 0.0])
