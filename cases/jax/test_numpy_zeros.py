"""jax.numpy.zeros: shapes, dtypes and placement of an all-zero array."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool", "complex64"]
SHAPES = [(), (0,), (0, 4), (7,), (3, 1, 5), (1024, 512)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_zeros_shape_dtype(device, timed, dtype, shape):
    out = timed(jnp.zeros, shape, dtype)
    assert out.shape == shape and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), np.zeros(shape, dtype=jnp.dtype(dtype)))
    assert out.devices() == {device}


def test_zeros_int_shape_default_dtype(device, timed):
    out = timed(jnp.zeros, 5)
    assert out.shape == (5,) and out.dtype == jnp.float64
    assert not np.asarray(out).any()


def test_zeros_negative_zero_free(device, timed):
    out = np.asarray(timed(jnp.zeros, (16,), jnp.float32))
    assert not np.signbit(out).any()


def test_zeros_rejects_negative_dimension(device, timed):
    with pytest.raises((TypeError, ValueError)):
        timed(jnp.zeros, (-1, 3))
