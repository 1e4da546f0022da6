"""jax.numpy.delete: removing entries by index, slice or mask along an axis, against numpy.delete."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "bool", "complex64"]


def _data(shape, dtype):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.uniform(-10, 10, shape).astype(jnp.dtype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape,obj,axis",
    [
        ((7,), 3, None),
        ((5, 4), -1, 0),
        ((5, 4), 0, 1),
        ((3, 4, 5), 2, None),
        ((6, 5), [0, 2, 5], 0),
        ((6, 5), slice(1, None, 2), 1),
        ((1024, 300), [0, 7, 299], 1),
    ],
    ids=str,
)
def test_delete_matches_numpy(device, timed, dtype, shape, obj, axis):
    x = _data(shape, dtype)
    if isinstance(obj, list):
        # index arrays are bound (static), as NumPy-style deletion needs concrete indices under jit
        obj = np.asarray(obj)
    out = timed(functools.partial(jnp.delete, obj=obj, axis=axis), jnp.asarray(x))
    expected = np.delete(x, obj, axis=axis)
    assert out.shape == expected.shape and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_delete_array_indices_assume_unique(device, timed):
    x = np.arange(20.0).reshape(4, 5)
    idx = np.array([4, 1])
    out = timed(jnp.delete, jnp.asarray(x), jnp.asarray(idx), axis=1, assume_unique_indices=True)
    np.testing.assert_array_equal(np.asarray(out), np.delete(x, idx, axis=1))


def test_delete_boolean_mask(device, timed):
    x = np.arange(8.0)
    mask = np.array([True, False, False, True, False, False, False, True])
    out = timed(functools.partial(jnp.delete, obj=mask), jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), np.delete(x, mask))


def test_delete_empty_selection_and_out_of_range(device, timed):
    x = jnp.arange(5.0)
    out = timed(functools.partial(jnp.delete, obj=np.array([], dtype=np.int64)), x)
    np.testing.assert_array_equal(np.asarray(out), np.arange(5.0))
    with pytest.raises((IndexError, ValueError)):  # NumPy raises IndexError; JAX raises ValueError
        timed(jnp.delete, x, 7)
