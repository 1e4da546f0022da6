"""jax.numpy.array: construction from Python lists, NumPy arrays and JAX arrays; dtypes, copy, ndmin."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int8", "uint8", "bool", "complex64"]


def test_array_from_python_list(device, timed):
    out = timed(jnp.array, [1, 2, 3])
    assert out.shape == (3,) and jnp.issubdtype(out.dtype, jnp.integer)
    np.testing.assert_array_equal(np.asarray(out), [1, 2, 3])
    assert out.devices() == {device}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (), (7, 3), (3, 1, 5), (1 << 18,)], ids=str)
def test_array_from_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    data = rng.uniform(-50, 50, shape)
    if dtype == "bool":
        data = data > 0
    elif dtype == "uint8":
        data = np.abs(data)
    ref = np.asarray(data).astype(jnp.dtype(dtype))
    out = timed(jnp.array, ref)
    assert out.shape == shape and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), ref)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32"])
def test_array_dtype_argument(device, timed, dtype):
    out = timed(jnp.array, [[1.5, -2.25], [3.0, 4.75]], dtype=dtype)
    assert out.dtype == jnp.dtype(dtype) and out.shape == (2, 2)
    expected = np.array([[1.5, -2.25], [3.0, 4.75]]).astype(jnp.dtype(dtype))
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_array_nested_mixed_and_ndmin(device, timed):
    out = timed(jnp.array, [[1, 2.5], (3, True)], ndmin=4)
    assert out.shape == (1, 1, 2, 2) and jnp.issubdtype(out.dtype, jnp.floating)
    np.testing.assert_array_equal(np.asarray(out)[0, 0], [[1, 2.5], [3, 1]])


def test_array_copy_of_jax_array(device, timed):
    x = jnp.arange(10.0)
    out = timed(jnp.array, x, copy=True)
    np.testing.assert_array_equal(np.asarray(out), np.arange(10.0))
    assert out.dtype == x.dtype


def test_array_scalar_and_special_values(device, timed):
    out = timed(jnp.array, np.array([np.inf, -np.inf, np.nan, -0.0], np.float32))
    res = np.asarray(out)
    assert np.isposinf(res[0]) and np.isneginf(res[1]) and np.isnan(res[2]) and np.signbit(res[3])
