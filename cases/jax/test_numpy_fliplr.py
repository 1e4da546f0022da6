"""jax.numpy.fliplr: reversing the second axis against numpy.fliplr over dtypes, 2-D and 3-D shapes,
empty input, the 2-D requirement and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "bool", "complex64"]
SHAPES = [(0, 0), (3, 0), (1, 1), (7, 3), (3, 5, 2), (512, 512)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fliplr_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(
        rng.integers(0, 2, shape) if dtype == "bool" else rng.integers(0, 200, shape), dtype=dtype
    )
    out = timed(jnp.fliplr, x)
    assert out.dtype == x.dtype and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), np.fliplr(np.asarray(x)))


def test_fliplr_reverses_columns(device, timed):
    x = jnp.array([[1, 2, 3], [4, 5, 6]], dtype=jnp.int32)
    np.testing.assert_array_equal(np.asarray(timed(jnp.fliplr, x)), [[3, 2, 1], [6, 5, 4]])


def test_fliplr_requires_2d(device, timed):
    with pytest.raises(ValueError):
        timed(jnp.fliplr, jnp.ones(4))


def test_fliplr_gradient(device, timed):
    x = jnp.zeros((2, 3))
    weights = jnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    grad = timed(jax.grad(lambda v: jnp.sum(jnp.fliplr(v) * weights)), x)
    np.testing.assert_array_equal(np.asarray(grad), [[3.0, 2.0, 1.0], [6.0, 5.0, 4.0]])
