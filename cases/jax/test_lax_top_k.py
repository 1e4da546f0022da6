"""jax.lax.top_k: the k largest entries along the last axis against a NumPy sort over dtypes, k,
batched shapes, ties (lower index first), the axis option and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "int64"]
# the last axis holds a permutation of 0..n-1: n <= 256 keeps it exact in uint8 and bfloat16
SHAPES = [(1,), (7,), (5, 9), (2, 3, 11), (1024, 256)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_top_k_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    n = shape[-1]
    # distinct values along the last axis, so that the indices are unique
    data = np.argsort(rng.random(shape), axis=-1).astype(np.float64)
    x = jnp.asarray(data, dtype=dtype)
    k = min(3, n)
    values, indices = timed(lax.top_k, x, k)
    assert values.shape == (*shape[:-1], k) and values.dtype == x.dtype
    assert indices.shape == values.shape and jnp.issubdtype(indices.dtype, jnp.integer)
    order = np.argsort(-data, axis=-1, kind="stable")[..., :k]
    np.testing.assert_array_equal(np.asarray(indices), order)
    np.testing.assert_array_equal(np.asarray(values).astype(np.float64), np.take_along_axis(data, order, -1))
    assert n >= k


@pytest.mark.parametrize("k", [0, 1, 4, 8])
def test_top_k_ties_and_k(device, timed, k):
    x = jnp.array([3.0, 1.0, 3.0, 2.0, 3.0, 1.0, 0.0, 2.0], dtype=jnp.float32)
    values, indices = timed(lax.top_k, x, k)
    order = np.argsort(-np.asarray(x), kind="stable")[:k]
    np.testing.assert_array_equal(np.asarray(indices), order)
    np.testing.assert_array_equal(np.asarray(values), np.asarray(x)[order])


def test_top_k_axis_option(device, timed):
    x = jnp.asarray(np.random.default_rng(1).permutation(24).reshape(6, 4).astype(np.float32))
    values, indices = timed(lax.top_k, x, 2, axis=0)
    order = np.argsort(-np.asarray(x), axis=0, kind="stable")[:2]
    np.testing.assert_array_equal(np.asarray(indices), order)
    np.testing.assert_array_equal(np.asarray(values), np.take_along_axis(np.asarray(x), order, 0))


def test_top_k_rejects_k_too_large(device, timed):
    with pytest.raises((ValueError, TypeError)):
        timed(lax.top_k, jnp.ones(3), 4)


def test_top_k_gradient_scatters_to_selected(device, timed):
    x = jnp.array([0.5, 4.0, -1.0, 2.0, 3.0])
    grad = timed(jax.grad(lambda v: jnp.sum(lax.top_k(v, 2)[0] * jnp.array([10.0, 1.0]))), x)
    np.testing.assert_array_equal(np.asarray(grad), [0.0, 10.0, 0.0, 0.0, 1.0])
