"""jax.nn.one_hot: one-hot encoding against an independent NumPy encoding over output dtypes, index
dtypes, shapes, the axis option and out-of-range (negative, too large) indices."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "bool"]
SHAPES = [(0,), (1,), (7,), (3, 5), (1 << 16,)]


def _reference(indices, num_classes, axis=-1):
    out = indices[..., None] == np.arange(num_classes)
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_one_hot_matches_reference(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    indices = rng.integers(0, 10, shape)
    out = timed(jax.nn.one_hot, jnp.asarray(indices, dtype=jnp.int32), 10, dtype=dtype)
    assert out.dtype == jnp.dtype(dtype) and out.shape == (*shape, 10)
    np.testing.assert_array_equal(np.asarray(out).astype(np.float64), _reference(indices, 10))


def test_one_hot_default_dtype_and_doc_example(device, timed):
    out = timed(jax.nn.one_hot, jnp.array([0, 1, 2]), 3)
    assert jnp.issubdtype(out.dtype, jnp.floating)
    np.testing.assert_array_equal(np.asarray(out), np.eye(3))


def test_one_hot_out_of_range_is_all_zeros(device, timed):
    out = timed(jax.nn.one_hot, jnp.array([-1, 0, 3, 4, 100]), 4)
    np.testing.assert_array_equal(np.asarray(out), _reference(np.array([-1, 0, 3, 4, 100]), 4))
    assert np.asarray(out)[[0, 3, 4]].sum() == 0


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_one_hot_axis(device, timed, axis):
    indices = np.array([[0, 2, 1], [1, 1, 0]])
    out = timed(jax.nn.one_hot, jnp.asarray(indices), 3, axis=axis)
    expected = _reference(indices, 3, axis=axis)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("index_dtype", ["int8", "uint8", "int64", "uint32"])
def test_one_hot_index_dtypes(device, timed, index_dtype):
    indices = np.array([0, 4, 2, 7], dtype=index_dtype)
    out = timed(jax.nn.one_hot, jnp.asarray(indices), 8, dtype=jnp.float32)
    np.testing.assert_array_equal(np.asarray(out), _reference(indices, 8))
