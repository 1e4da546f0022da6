"""jax.numpy.reshape (and the jax.Array.reshape method): new shapes, -1 inference, C/F order, errors,
gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "bool", "complex64"]
CASES = [
    ((6,), (3, 2)),
    ((3, 2), (-1,)),
    ((0, 4), (2, 0, 5)),
    ((2, 3, 4), (4, -1)),
    ((1,), ()),
    ((1024, 512), (512, 2, -1)),
]


def _data(shape, dtype):
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.uniform(-10, 10, shape).astype(jnp.dtype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,newshape", CASES, ids=str)
def test_reshape_matches_numpy(device, timed, dtype, shape, newshape):
    x = _data(shape, dtype)
    out = timed(jnp.reshape, jnp.asarray(x), newshape)
    expected = np.reshape(x, newshape)
    assert out.shape == expected.shape and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_array_reshape_method(device, timed):
    x = jnp.arange(6)
    out = timed(lambda a: a.reshape(3, 2), x)
    np.testing.assert_array_equal(np.asarray(out), np.arange(6).reshape(3, 2))


@pytest.mark.parametrize("order", ["C", "F"])
def test_reshape_order(device, timed, order):
    x = np.arange(24.0).reshape(2, 3, 4)
    out = timed(jnp.reshape, jnp.asarray(x), (4, 6), order=order)
    np.testing.assert_array_equal(np.asarray(out), np.reshape(x, (4, 6), order=order))


def test_reshape_incompatible_raises(device, timed):
    with pytest.raises(TypeError):
        timed(jnp.reshape, jnp.arange(6.0), (4, 2))


def test_reshape_gradient(device, timed):
    x = jnp.arange(6.0)
    w = jnp.arange(6.0).reshape(2, 3) + 1.0
    grad = timed(jax.grad(lambda a: jnp.sum(jnp.reshape(a, (2, 3)) * w)), x)
    np.testing.assert_array_equal(np.asarray(grad), np.arange(6.0) + 1.0)
