"""jax.numpy.stack: joining arrays along a new axis against NumPy over dtypes, axes, shapes,
dtype promotion, mismatched shapes and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "bool", "complex64"]
SHAPES = [(0,), (), (7, 3), (3, 1, 5), (256, 512)]


def stack_arrays(*arrays, axis=0):
    """jnp.stack over the positional arrays, so that compiled mode traces each of them."""
    return jnp.stack(arrays, axis=axis)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)) or "scalar")
def test_stack_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    parts = [
        np.asarray(rng.integers(0, 2, shape) if dtype == "bool" else rng.uniform(0, 100, shape))
        for _ in range(3)
    ]
    arrays = [jnp.asarray(p, dtype=dtype) for p in parts]
    out = timed(stack_arrays, *arrays, axis=0)
    expected = np.stack([np.asarray(a) for a in arrays], axis=0)
    assert out.dtype == jnp.dtype(dtype) and out.shape == (3, *shape)
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
def test_stack_axes(device, timed, axis):
    arrays = [jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4) + 100 * i for i in range(5)]
    out = timed(stack_arrays, *arrays, axis=axis)
    expected = np.stack([np.asarray(a) for a in arrays], axis=axis)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_stack_of_one_array_iterates_leading_axis(device, timed):
    x = jnp.arange(24, dtype=jnp.int32).reshape(2, 3, 4)
    out = timed(jnp.stack, x, axis=1)
    np.testing.assert_array_equal(np.asarray(out), np.stack(list(np.asarray(x)), axis=1))


def test_stack_promotes_dtypes(device, timed):
    out = timed(stack_arrays, jnp.ones(3, jnp.int32), jnp.ones(3, jnp.float32), jnp.ones(3, jnp.bool_))
    assert out.dtype == jnp.float32 and out.shape == (3, 3)


def test_stack_rejects_bad_input(device, timed):
    with pytest.raises(ValueError):
        timed(stack_arrays, jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError):
        timed(jnp.stack, [])


def test_stack_gradient(device, timed):
    a, b = jnp.array([1.0, 2.0]), jnp.array([3.0, 4.0])
    weights = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    ga, gb = timed(jax.grad(lambda u, v: jnp.sum(stack_arrays(u, v, axis=0) * weights), argnums=(0, 1)), a, b)
    np.testing.assert_array_equal(np.asarray(ga), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(gb), [3.0, 4.0])
