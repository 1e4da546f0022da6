"""jax.lax.pmax: all-reduce maximum over a named axis, run on one device through jax.vmap(axis_name=...),
against numpy.max over the mapped axis, over dtypes, shapes, pytrees, nested axes and NaN."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "int64"]
SHAPES = [(1, 3), (4,), (5, 7), (3, 2, 6), (8, 256, 128)]


def vmapped_pmax(axis_name="i"):
    return jax.vmap(functools.partial(lax.pmax, axis_name=axis_name), axis_name=axis_name)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_pmax_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.integers(0, 200, shape), dtype=dtype)
    out = timed(vmapped_pmax(), x)
    expected = np.broadcast_to(np.max(np.asarray(x), axis=0), shape)
    # every member of the mapped axis receives the maximum over the axis
    assert out.dtype == x.dtype and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_pmax_pytree(device, timed):
    tree = {"a": jnp.array([[1.0, 5.0], [3.0, 2.0]]), "b": jnp.array([4, 7], dtype=jnp.int32)}
    out = timed(vmapped_pmax(), tree)
    np.testing.assert_array_equal(np.asarray(out["a"]), [[3.0, 5.0], [3.0, 5.0]])
    np.testing.assert_array_equal(np.asarray(out["b"]), [7, 7])


def test_pmax_nested_axes(device, timed):
    x = jnp.asarray(np.random.default_rng(1).normal(size=(3, 4, 5)))
    inner = jax.vmap(lambda v: lax.pmax(v, ("i", "j")), axis_name="j")
    out = timed(jax.vmap(inner, axis_name="i"), x)
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(np.asarray(x).max(axis=(0, 1)), (3, 4, 5)))


def test_pmax_nan_and_inf(device, timed):
    x = jnp.array([[1.0, -np.inf, 0.0], [np.nan, -np.inf, -0.0], [2.0, -np.inf, 0.0]], dtype=jnp.float32)
    out = np.asarray(timed(vmapped_pmax(), x))
    assert np.isnan(out[:, 0]).all()
    assert (out[:, 1] == -np.inf).all() and (out[:, 2] == 0.0).all()


def test_pmax_unbound_axis_name_rejected(device, timed):
    with pytest.raises(NameError):
        timed(jax.vmap(lambda v: lax.pmax(v, "k"), axis_name="i"), jnp.ones((2, 3)))
