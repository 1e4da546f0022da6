"""jax.lax.pmin: all-reduce minimum over a named axis, run on one device through jax.vmap(axis_name=...),
against numpy.min over the mapped axis, over dtypes, shapes, pytrees, nested axes, NaN/inf and complex."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8", "uint32", "bool"]
SHAPES = [(1, 3), (4,), (3, 0), (5, 7), (3, 2, 6), (8, 256, 128)]


def vmapped_pmin(axis_name="i"):
    return jax.vmap(functools.partial(lax.pmin, axis_name=axis_name), axis_name=axis_name)


def sample(rng, shape, dtype):
    if dtype == "bool":
        return np.asarray(rng.integers(0, 2, shape), dtype=bool)
    if dtype.startswith("uint"):
        return rng.integers(0, 200, shape)
    return rng.integers(-100, 100, shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_pmin_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(sample(rng, shape, dtype), dtype=dtype)
    out = timed(vmapped_pmin(), x)
    expected = np.broadcast_to(np.min(np.asarray(x), axis=0), shape)
    # every member of the mapped axis receives the minimum over the axis
    assert out.dtype == x.dtype and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_pmin_upstream_identity(device, timed):
    # x - pmin(x) is zero at the argmin of every column and non-negative elsewhere
    x = jnp.asarray(np.random.default_rng(2).normal(size=(6, 9)), dtype=jnp.float32)
    out = timed(jax.vmap(lambda v: v - lax.pmin(v, "i"), axis_name="i"), x)
    expected = np.asarray(x) - np.asarray(x).min(axis=0)
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert (np.asarray(out) >= 0).all()


def test_pmin_pytree(device, timed):
    tree = {"a": jnp.array([[1.0, 5.0], [3.0, 2.0]]), "b": jnp.array([4, -7], dtype=jnp.int32)}
    out = timed(vmapped_pmin(), tree)
    assert out["a"].dtype == jnp.float64 and out["b"].dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(out["a"]), [[1.0, 2.0], [1.0, 2.0]])
    np.testing.assert_array_equal(np.asarray(out["b"]), [-7, -7])


@pytest.mark.parametrize("axes", [("i", "j"), "j", "i"], ids=str)
def test_pmin_nested_axes(device, timed, axes):
    x = jnp.asarray(np.random.default_rng(1).normal(size=(3, 4, 5)))
    inner = jax.vmap(lambda v: lax.pmin(v, axes), axis_name="j")
    out = timed(jax.vmap(inner, axis_name="i"), x)
    reduce_over = {("i", "j"): (0, 1), "j": (1,), "i": (0,)}[axes]
    expected = np.broadcast_to(np.asarray(x).min(axis=reduce_over, keepdims=True), (3, 4, 5))
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_pmin_nan_and_inf(device, timed, dtype):
    x = np.array([[1.0, np.inf, 0.0, -np.inf], [np.nan, np.inf, -0.0, 5.0], [2.0, np.inf, 0.0, 7.0]])
    out = np.asarray(timed(vmapped_pmin(), jnp.asarray(x, dtype=dtype))).astype(np.float64)
    assert out.shape == (3, 4)
    assert np.isnan(out[:, 0]).all()  # NaN propagates, as in numpy.min
    assert (out[:, 1] == np.inf).all() and (out[:, 2] == 0.0).all() and (out[:, 3] == -np.inf).all()


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_pmin_complex_lexicographic(device, timed, dtype):
    # numpy orders complex numbers lexicographically (real part, then imaginary part)
    x = np.array([[1 + 5j, 2 - 1j], [1 - 3j, 2 - 4j], [4 + 0j, 3 - 9j]], dtype=dtype)
    out = timed(vmapped_pmin(), jnp.asarray(x))
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(np.min(x, axis=0), x.shape))


def test_pmin_unbound_axis_name_rejected(device, timed):
    with pytest.raises(NameError):
        timed(jax.vmap(lambda v: lax.pmin(v, "k"), axis_name="i"), jnp.ones((2, 3)))
