"""jax.numpy.compress: selection by a boolean condition along an axis, against numpy.compress."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "bool", "complex64"]


def _data(rng, shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.uniform(-10, 10, shape).astype(jnp.dtype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,axis",
    [((0,), None), ((7,), 0), ((5, 3), 0), ((5, 3), 1), ((2, 3, 4), -1), ((3, 5), None), ((512, 1024), 1)],
    ids=str,
)
def test_compress_matches_numpy(device, timed, dtype, shape, axis):
    rng = np.random.default_rng(0)
    x = _data(rng, shape, dtype)
    n = x.size if axis is None else shape[axis]
    cond = rng.integers(0, 2, n).astype(bool)
    # size= (static) makes the output shape known, so the call also compiles under jit
    out = timed(jnp.compress, cond, jnp.asarray(x), axis=axis, size=int(cond.sum()))
    expected = np.compress(cond, x, axis=axis)
    assert out.shape == expected.shape and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_compress_short_condition(device, timed):
    x = np.arange(12.0).reshape(4, 3)
    cond = np.array([False, True])
    out = timed(jnp.compress, cond, jnp.asarray(x), axis=0)
    np.testing.assert_array_equal(np.asarray(out), np.compress(cond, x, axis=0))


def test_compress_integer_condition(device, timed):
    x = np.arange(6.0)
    cond = np.array([0, 2, 0, -1, 0, 1])
    out = timed(jnp.compress, cond, jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), np.compress(cond, x))


def test_compress_all_false(device, timed):
    out = timed(jnp.compress, np.zeros(5, bool), jnp.arange(10.0).reshape(5, 2), axis=0)
    assert out.shape == (0, 2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_compress_traced_condition_with_size(device, timed, dtype):
    x = np.arange(10).astype(dtype)
    cond = x % 3 == 0
    out = timed(jnp.compress, jnp.asarray(cond), jnp.asarray(x), size=6, fill_value=-1)
    assert out.shape == (6,) and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), [0, 3, 6, 9, -1, -1])
