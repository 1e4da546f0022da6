"""jax.numpy.tril: lower triangle against NumPy over dtypes, diagonals k, rectangular, batched and
empty matrices, the 2-D requirement and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "bool", "complex64"]
SHAPES = [(0, 0), (1, 1), (5, 5), (3, 7), (7, 3), (2, 3, 4), (512, 512)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_tril_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.integers(1, 10, shape), dtype=dtype)
    out = timed(jnp.tril, x)
    assert out.dtype == x.dtype and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), np.tril(np.asarray(x)))


@pytest.mark.parametrize("k", [-100, -3, -1, 0, 1, 2, 100])
def test_tril_diagonal_offset(device, timed, k):
    x = jnp.arange(1.0, 1 + 6 * 8, dtype=jnp.float32).reshape(6, 8)
    out = timed(jnp.tril, x, k=k)
    np.testing.assert_array_equal(np.asarray(out), np.tril(np.asarray(x), k=k))


def test_tril_keeps_nan_and_zeroes_above(device, timed):
    x = jnp.full((3, 3), np.nan, dtype=jnp.float32)
    out = np.asarray(timed(jnp.tril, x))
    assert np.isnan(out[np.tril_indices(3)]).all()
    assert (out[np.triu_indices(3, 1)] == 0).all()


def test_tril_requires_2d(device, timed):
    # NumPy broadcasts a 1-D input to 2-D; jax.numpy requires at least 2 dimensions
    with pytest.raises(ValueError):
        timed(jnp.tril, jnp.ones(4))


def test_tril_gradient_is_mask(device, timed):
    x = jnp.ones((4, 5))
    grad = timed(jax.grad(lambda v: jnp.sum(jnp.tril(v, k=1) * 3.0)), x)
    np.testing.assert_array_equal(np.asarray(grad), 3.0 * np.tril(np.ones((4, 5)), k=1))
