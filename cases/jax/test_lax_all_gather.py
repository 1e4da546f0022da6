"""jax.lax.all_gather: gathering a value over a named axis (vmap on one device), against a NumPy stack/concat;
axis, tiled and gradient."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "bool", "complex64"]


def _gathered(axis=0, tiled=False):
    return jax.vmap(functools.partial(lax.all_gather, axis_name="i", axis=axis, tiled=tiled), axis_name="i")


def _data(shape, dtype):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.uniform(-10, 10, shape).astype(jnp.dtype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 3), (4, 5, 6), (3, 0), (8, 1 << 15)], ids=str)
def test_all_gather_stacks_members(device, timed, dtype, shape):
    x = _data(shape, dtype)
    out = timed(_gathered(), jnp.asarray(x))
    n = shape[0]
    assert out.shape == (n, n, *shape[1:]) and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(x[None], (n, *shape)))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_all_gather_axis(device, timed, axis):
    x = _data((3, 4, 5), "float32")
    out = timed(_gathered(axis=axis), jnp.asarray(x))
    member = np.moveaxis(x, 0, axis)  # what each member sees, gathered at `axis`
    assert out.shape == (3, *member.shape)
    for k in range(3):
        np.testing.assert_array_equal(np.asarray(out[k]), member)


def test_all_gather_tiled(device, timed):
    x = _data((4, 2, 3), "float64")
    out = timed(_gathered(tiled=True), jnp.asarray(x))
    assert out.shape == (4, 8, 3)
    for k in range(4):
        np.testing.assert_array_equal(np.asarray(out[k]), x.reshape(8, 3))


def test_all_gather_gradient(device, timed):
    x = jnp.arange(6.0).reshape(3, 2)
    weights = jnp.arange(1.0, 7.0).reshape(3, 2)
    grad = timed(jax.grad(lambda v: jnp.sum(_gathered()(v) * weights)), x)
    # every member's gathered copy weights row j by weights[j]; three members sum it.
    np.testing.assert_allclose(np.asarray(grad), 3 * np.asarray(weights))
