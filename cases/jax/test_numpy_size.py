"""jax.numpy.size: number of elements, in total and along an axis, for arrays, scalars and __jax_array__
objects."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "bool"])
@pytest.mark.parametrize("shape", [(), (0,), (0, 5), (7,), (3, 1, 5), (1 << 18,)], ids=str)
def test_size_total(device, timed, dtype, shape):
    x = jnp.zeros(shape, dtype=dtype)
    out = timed(jnp.size, x)
    assert int(out) == int(np.prod(shape, dtype=np.int64)) == np.size(np.zeros(shape))


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_size_along_axis(device, timed, axis):
    x = jnp.ones((4, 6, 5))
    out = timed(jnp.size, x, axis=axis)
    assert int(out) == np.size(np.ones((4, 6, 5)), axis=axis)


def test_size_axis_tuple(device, timed):
    x = jnp.ones((2, 3, 4))
    out = timed(jnp.size, x, axis=(0, 2))
    assert int(out) == 8


def test_size_of_python_scalar_and_list(device, timed):
    assert int(timed(jnp.size, jnp.asarray(3.5))) == 1
    assert jnp.size([[1, 2, 3], [4, 5, 6]]) == 6


def test_size_of_jax_array_protocol(device, timed):
    class Wrapped:
        def __init__(self, value):
            self.value = value

        def __jax_array__(self):
            return self.value

        shape = property(lambda self: self.value.shape)
        dtype = property(lambda self: self.value.dtype)

    x = jnp.arange(12.0).reshape(3, 4)
    assert int(timed(jnp.size, x)) == jnp.size(Wrapped(x)) == 12
