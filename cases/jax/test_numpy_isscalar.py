"""jax.numpy.isscalar: True for Python and NumPy scalars and 0-d arrays, False for containers and n-d
arrays."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "bool", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_isscalar_zero_dim_array(device, timed, dtype):
    x = jnp.zeros((), dtype=dtype)
    assert bool(timed(jnp.isscalar, x)) is True


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (1,), (3, 1), (1 << 18,)], ids=str)
def test_isscalar_nd_array(device, timed, dtype, shape):
    x = jnp.zeros(shape, dtype=dtype)
    assert bool(timed(jnp.isscalar, x)) is False


@pytest.mark.parametrize(
    "value,expected",
    [
        (3, True),
        (2.5, True),
        (1 + 2j, True),
        (True, True),
        (np.float32(1.0), True),
        (np.int8(4), True),
        (np.array(3.0), True),
        ([1.0], False),
        ((1, 2), False),
        ("abc", True),  # as numpy.isscalar: a str is a scalar
        (None, False),
    ],
    ids=repr,
)
def test_isscalar_python_values(device, timed, value, expected):
    # Non-array values are bound as constants in compiled mode.
    assert bool(timed(jnp.isscalar, value)) is expected
