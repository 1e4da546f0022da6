"""jax.numpy.flip: reversing along axes against numpy.flip over dtypes, shapes, axis None/int/tuple/
negative, out-of-range axes and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "bool", "complex64"]
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (512, 512)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_flip_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(
        rng.integers(0, 2, shape) if dtype == "bool" else rng.integers(0, 200, shape), dtype=dtype
    )
    out = timed(jnp.flip, x)
    assert out.dtype == x.dtype and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), np.flip(np.asarray(x)))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, (0, 2), (1, -1), ()], ids=str)
def test_flip_axes(device, timed, axis):
    x = jnp.arange(2 * 3 * 4, dtype=jnp.float32).reshape(2, 3, 4)
    out = timed(jnp.flip, x, axis)
    np.testing.assert_array_equal(np.asarray(out), np.flip(np.asarray(x), axis))


def test_flip_twice_is_identity(device, timed):
    x = jnp.asarray(np.random.default_rng(1).normal(size=(5, 6)))
    once = timed(jnp.flip, x, 1)
    np.testing.assert_array_equal(np.asarray(jnp.flip(once, 1)), np.asarray(x))


def test_flip_rejects_out_of_range_axis(device, timed):
    with pytest.raises(ValueError):
        timed(jnp.flip, jnp.ones((2, 3)), 2)


def test_flip_gradient(device, timed):
    x = jnp.arange(4.0)
    weights = jnp.array([1.0, 10.0, 100.0, 1000.0])
    grad = timed(jax.grad(lambda v: jnp.sum(jnp.flip(v) * weights)), x)
    np.testing.assert_array_equal(np.asarray(grad), [1000.0, 100.0, 10.0, 1.0])
