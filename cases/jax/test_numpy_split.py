"""jax.numpy.split: splitting into equal sections or at indices against numpy.split over dtypes,
axes, empty pieces, uneven sections and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "bool", "complex64"]
CASES = [
    ((0,), 1, 0),
    ((6,), 3, 0),
    ((4, 6), 2, 1),
    ((2, 3, 4), 2, -1),
    ((3, 4), [1, 3], 1),
    ((512, 512), 4, 0),
]


def _check(out, expected, dtype):
    assert isinstance(out, list) and len(out) == len(expected)
    for piece, ref in zip(out, expected):
        assert piece.dtype == jnp.dtype(dtype) and piece.shape == ref.shape
        np.testing.assert_array_equal(np.asarray(piece), ref)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,sections,axis", CASES, ids=lambda c: str(c).replace(" ", ""))
def test_split_matches_numpy(device, timed, dtype, shape, sections, axis):
    rng = np.random.default_rng(0)
    x = jnp.asarray(
        rng.integers(0, 2, shape) if dtype == "bool" else rng.integers(0, 100, shape), dtype=dtype
    )
    out = timed(jnp.split, x, sections, axis=axis)
    _check(out, np.split(np.asarray(x), sections, axis=axis), dtype)


@pytest.mark.parametrize("indices", [[0], [2, 2], [7], [1, 4, 6]], ids=str)
def test_split_at_indices_with_empty_pieces(device, timed, indices):
    x = jnp.arange(7.0, dtype=jnp.float32)
    out = timed(jnp.split, x, indices)
    _check(out, np.split(np.arange(7.0, dtype=np.float32), indices), "float32")


@pytest.mark.parametrize("indices", [[5, 9], [-3]], ids=str)
def test_split_numpy_index_semantics(device, timed, indices):
    # numpy.split slices at the indices, so an index past the end gives an empty piece and a negative
    # index counts from the end; jax.numpy.split documents itself as the JAX implementation of it
    x = jnp.arange(7.0, dtype=jnp.float32)
    out = timed(jnp.split, x, indices)
    _check(out, np.split(np.arange(7.0, dtype=np.float32), indices), "float32")


def test_split_uneven_sections_rejected(device, timed):
    with pytest.raises(ValueError):
        timed(jnp.split, jnp.arange(7), 3)


def test_split_gradient(device, timed):
    x = jnp.arange(6.0)

    def loss(v):
        a, b, c = jnp.split(v, 3)
        return jnp.sum(a) + 2 * jnp.sum(b) + 3 * jnp.sum(c)

    grad = timed(jax.grad(loss), x)
    np.testing.assert_array_equal(np.asarray(grad), [1.0, 1.0, 2.0, 2.0, 3.0, 3.0])
