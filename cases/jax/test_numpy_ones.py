"""jax.numpy.ones: construction against numpy.ones over shapes (scalar, empty, large), dtypes (the
default float type included), shape spellings and invalid shapes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "uint32", "bool", "complex64"]
SHAPES = [(), (0,), (1,), (7, 3), (3, 0, 5), (512, 1024)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_ones_matches_numpy(device, timed, dtype, shape):
    out = timed(jnp.ones, shape, dtype)
    assert out.dtype == jnp.dtype(dtype) and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out).astype(np.complex128), np.ones(shape))


def test_ones_default_dtype_is_default_float(device, timed):
    out = timed(jnp.ones, (2, 3))
    # with jax_enable_x64 the default float type is float64, as in NumPy
    assert out.dtype == jnp.float64 and out.shape == (2, 3)


@pytest.mark.parametrize("shape", [5, (5,), [2, 3], np.int64(4)], ids=["int", "tuple", "list", "np_int"])
def test_ones_shape_spellings(device, timed, shape):
    out = timed(jnp.ones, shape, jnp.int32)
    assert out.shape == np.ones(shape).shape
    assert int(jnp.sum(out)) == int(np.prod(np.ones(shape).shape))


def test_ones_rejects_negative_dimension(device, timed):
    with pytest.raises((ValueError, TypeError)):
        timed(jnp.ones, (2, -1))
