"""jax.numpy.tril_indices_from: lower-triangle indices of an array's shape against NumPy over shapes,
dtypes, k, the 2-D requirement, and use for indexing."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

SHAPES = [(0, 0), (1, 1), (1, 2), (3, 3), (2, 5), (6, 4), (512, 512)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("k", [-1, 0, 2])
def test_tril_indices_from_matches_numpy(device, timed, shape, k):
    arr = jnp.zeros(shape, dtype=jnp.float32)
    rows, cols = timed(jnp.tril_indices_from, arr, k=k)
    exp_rows, exp_cols = np.tril_indices_from(np.zeros(shape), k=k)
    assert jnp.issubdtype(rows.dtype, jnp.integer) and rows.shape == exp_rows.shape
    np.testing.assert_array_equal(np.asarray(rows), exp_rows)
    np.testing.assert_array_equal(np.asarray(cols), exp_cols)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int8", "bool", "complex64"])
def test_tril_indices_from_depends_only_on_shape(device, timed, dtype):
    arr = jnp.ones((4, 6), dtype=dtype)
    rows, cols = timed(jnp.tril_indices_from, arr)
    exp_rows, exp_cols = np.tril_indices(4, 0, 6)
    np.testing.assert_array_equal(np.asarray(rows), exp_rows)
    np.testing.assert_array_equal(np.asarray(cols), exp_cols)


def test_tril_indices_from_selects_lower_triangle(device, timed):
    a = jnp.arange(20.0).reshape(4, 5)
    rows, cols = timed(jnp.tril_indices_from, a, k=-1)
    np.testing.assert_array_equal(np.asarray(a[rows, cols]), np.asarray(a)[np.tril_indices(4, -1, 5)])


@pytest.mark.parametrize("shape", [(4,), (2, 3, 4)], ids=["1d", "3d"])
def test_tril_indices_from_requires_2d(device, timed, shape):
    with pytest.raises(ValueError):
        timed(jnp.tril_indices_from, jnp.zeros(shape))
