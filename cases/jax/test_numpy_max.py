"""jax.numpy.max: maximum reduction against NumPy over axes, dtypes, keepdims, initial/where, NaN
propagation, empty input and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "bool"]
AXES = [None, 0, -1, (0, 2)]
SHAPES = [(3, 5, 7), (1, 1, 1), (64, 33, 129)]


def _data(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.05
    if dtype in ("int32", "uint8"):
        return rng.integers(0, 255, shape)
    return rng.normal(size=shape) * 100


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", AXES, ids=["all", "first", "last", "pair"])
@pytest.mark.parametrize("shape", SHAPES, ids=["odd", "ones", "large"])
def test_max_matches_numpy(device, timed, dtype, axis, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(_data(rng, shape, dtype), dtype=dtype)
    out = timed(jnp.max, x, axis=axis)
    expected = np.max(np.asarray(x).astype(np.float64), axis=axis)
    assert out.shape == expected.shape and out.dtype == x.dtype
    # max selects an element: it is exact in every dtype
    np.testing.assert_array_equal(np.asarray(out).astype(np.float64), expected)


def test_max_keepdims_initial_where(device, timed):
    data = np.arange(12.0).reshape(3, 4) - 6
    mask = np.arange(12).reshape(3, 4) % 2 == 0
    out = timed(jnp.max, jnp.asarray(data), axis=1, keepdims=True, initial=-1.0, where=jnp.asarray(mask))
    assert out.shape == (3, 1)
    np.testing.assert_array_equal(
        np.asarray(out), np.max(data, axis=1, keepdims=True, initial=-1.0, where=mask)
    )


def test_max_propagates_nan(device, timed):
    x = jnp.array([[1.0, np.nan, 3.0], [np.inf, 2.0, -np.inf]], dtype=jnp.float32)
    out = np.asarray(timed(jnp.max, x, axis=1))
    assert np.isnan(out[0]) and out[1] == np.inf


def test_max_empty(device, timed):
    out = timed(jnp.max, jnp.zeros((0, 4), jnp.float32), axis=0, initial=-5.0)
    np.testing.assert_array_equal(np.asarray(out), np.full(4, -5.0))
    with pytest.raises(ValueError):
        timed(jnp.max, jnp.zeros((0,), jnp.float32))


def test_max_gradient_selects_argmax(device, timed):
    x = jnp.array([[0.5, 3.0, -1.0], [2.0, 1.0, 7.0]])
    grad = timed(jax.grad(lambda v: jnp.sum(jnp.max(v, axis=1))), x)
    np.testing.assert_array_equal(np.asarray(grad), [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
