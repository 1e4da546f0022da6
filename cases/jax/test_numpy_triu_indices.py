"""jax.numpy.triu_indices: upper-triangle indices against NumPy over n, k, m, empty sizes, their use
for indexing and the index dtype."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize(
    "n,k,m",
    [
        (0, 0, None),
        (1, 0, None),
        (4, 0, None),
        (7, -3, None),
        (7, 1, None),
        (5, 5, None),
        (4, -1, 1),
        (4, 1, 6),
    ],
)
def test_triu_indices_matches_numpy(device, timed, n, k, m):
    rows, cols = timed(jnp.triu_indices, n, k=k, m=m)
    exp_rows, exp_cols = np.triu_indices(n, k=k, m=m)
    assert jnp.issubdtype(rows.dtype, jnp.integer) and rows.shape == exp_rows.shape
    np.testing.assert_array_equal(np.asarray(rows), exp_rows)
    np.testing.assert_array_equal(np.asarray(cols), exp_cols)


def test_triu_indices_large(device, timed):
    # 130,816 pairs: 2 MB of int64 indices
    rows, cols = timed(jnp.triu_indices, 512, k=1)
    exp_rows, exp_cols = np.triu_indices(512, k=1)
    assert rows.shape == (512 * 511 // 2,)
    np.testing.assert_array_equal(np.asarray(rows), exp_rows)
    np.testing.assert_array_equal(np.asarray(cols), exp_cols)


def test_triu_indices_select_upper_triangle(device, timed):
    a = np.arange(30.0).reshape(5, 6)
    rows, cols = timed(jnp.triu_indices, 5, k=0, m=6)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(a)[rows, cols]), a[np.triu_indices(5, 0, 6)])


def test_triu_indices_count(device, timed):
    rows, _ = timed(jnp.triu_indices, 10, k=-2)
    # all 100 entries except the 28 strictly below the second sub-diagonal
    assert rows.shape == (100 - 28,)
