"""jax.lax.slice_in_dim: slicing one dimension against NumPy slicing over dtypes, axes, strides,
None and negative bounds, empty slices and its gradient (zero padding)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "uint8", "bool", "complex64"]
SHAPES = [(0, 4), (1, 1), (7, 3), (3, 5, 6), (512, 512)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_slice_in_dim_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(
        rng.integers(0, 2, shape) if dtype == "bool" else rng.integers(0, 100, shape), dtype=dtype
    )
    n = shape[0]
    start, limit = min(1, n), max(min(1, n), n - 1)
    out = timed(lax.slice_in_dim, x, start, limit, 1, 0)
    expected = np.asarray(x)[start:limit]
    assert out.dtype == x.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize(
    "start,limit,stride,axis",
    [
        (0, 6, 1, 1),
        (1, 6, 2, 1),
        (0, 5, 3, 2),
        (None, None, 1, 0),
        (-4, None, 1, 1),
        (2, -1, 2, -1),
        (3, 3, 1, 1),
    ],
    ids=str,
)
def test_slice_in_dim_options(device, timed, start, limit, stride, axis):
    x = jnp.arange(3 * 6 * 5, dtype=jnp.int32).reshape(3, 6, 5)
    out = timed(lax.slice_in_dim, x, start, limit, stride=stride, axis=axis)
    index = [slice(None)] * 3
    index[axis] = slice(start, limit, stride)
    expected = np.asarray(x)[tuple(index)]
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_slice_in_dim_rejects_out_of_bounds(device, timed):
    with pytest.raises((TypeError, ValueError, IndexError)):
        timed(lax.slice_in_dim, jnp.ones(4), 0, 6)


def test_slice_in_dim_gradient_pads_with_zeros(device, timed):
    x = jnp.arange(8.0)
    grad = timed(jax.grad(lambda v: jnp.sum(lax.slice_in_dim(v, 1, 7, stride=2) * 5.0)), x)
    np.testing.assert_array_equal(np.asarray(grad), [0, 5, 0, 5, 0, 5, 0, 0])
