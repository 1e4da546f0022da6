"""jax.lax.dynamic_update_index_in_dim: writes one slice along an axis, against a NumPy copy with that
slice assigned (index wrapped if negative, then clamped into range), over dtypes, shapes, axes, index
dtypes, static and traced indices, out-of-range and negative indices, special values and gradients."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8", "bool", "complex64"]
# (operand shape, axis): an empty operand (updated along its non-empty axis), odd shapes, a negative
# axis and a 1 MB float32 operand
SHAPES = [((1,), 0), ((7,), 0), ((3, 0), 0), ((5, 3), 1), ((4, 5, 6), -1), ((2, 5, 3), 1), ((256, 1024), 0)]


def shape_id(case):
    shape, axis = case
    return "x".join(map(str, shape)) + f"-axis{axis}"


def sample(rng, shape, dtype):
    if dtype == "bool":
        return np.asarray(rng.integers(0, 2, shape), dtype=bool)
    if dtype.startswith("uint"):
        return rng.integers(0, 250, shape)
    if dtype.startswith("int"):
        return rng.integers(-100, 100, shape)
    if dtype.startswith("complex"):
        return rng.normal(size=shape) + 1j * rng.normal(size=shape)
    return rng.normal(size=shape)


def reference(operand, update, index, axis):
    """NumPy: copy the operand and assign the slice at the wrapped, then clamped, index."""
    out = np.array(operand, copy=True)
    axis = axis % out.ndim
    size = out.shape[axis]
    index = int(index)
    if index < 0:
        index += size
    index = min(max(index, 0), size - 1)
    where = [slice(None)] * out.ndim
    where[axis] = index
    out[tuple(where)] = np.reshape(update, out[tuple(where)].shape)
    return out


def update_shape(shape, axis):
    return tuple(d for i, d in enumerate(shape) if i != axis % len(shape))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", SHAPES, ids=shape_id)
def test_update_matches_numpy(device, timed, dtype, case):
    shape, axis = case
    rng = np.random.default_rng(0)
    operand = jnp.asarray(sample(rng, shape, dtype), dtype=dtype)
    update = jnp.asarray(sample(rng, update_shape(shape, axis), dtype), dtype=dtype)
    index = shape[axis] // 2
    out = timed(functools.partial(lax.dynamic_update_index_in_dim, index=index, axis=axis), operand, update)
    assert out.dtype == operand.dtype and out.shape == shape
    expected = reference(np.asarray(operand), np.asarray(update), index, axis)
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("index", [0, 2, 4, -1, -5, 5, 100, -6, -100], ids=lambda i: f"index{i}")
@pytest.mark.parametrize("traced", [False, True], ids=["static_index", "array_index"])
def test_index_wraps_and_clamps(device, timed, index, traced):
    # negative indices count from the end; out-of-range indices are clamped to the first/last slice
    operand = jnp.zeros((5, 3), dtype=jnp.float32)
    update = jnp.array([1.0, 2.0, 3.0], dtype=jnp.float32)
    if traced:
        out = timed(
            functools.partial(lax.dynamic_update_index_in_dim, axis=0), operand, update, jnp.int32(index)
        )
    else:
        out = timed(functools.partial(lax.dynamic_update_index_in_dim, index=index, axis=0), operand, update)
    np.testing.assert_array_equal(
        np.asarray(out), reference(np.zeros((5, 3), np.float32), [1, 2, 3], index, 0)
    )


@pytest.mark.parametrize("index_dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32"])
def test_index_dtypes(device, timed, index_dtype):
    operand = jnp.arange(24, dtype=jnp.int32).reshape(4, 6)
    update = jnp.full((4,), -1, dtype=jnp.int32)
    index = jnp.asarray(3, dtype=index_dtype)
    out = timed(functools.partial(lax.dynamic_update_index_in_dim, axis=1), operand, update, index)
    expected = np.arange(24, dtype=np.int32).reshape(4, 6)
    expected[:, 3] = -1
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_update_with_kept_dimension(device, timed):
    # an update of the operand's rank (size 1 along the axis) is written as is
    operand = jnp.zeros((3, 4), dtype=jnp.float64)
    update = jnp.array([[1.0], [2.0], [3.0]])
    out = timed(functools.partial(lax.dynamic_update_index_in_dim, index=2, axis=1), operand, update)
    expected = np.zeros((3, 4))
    expected[:, 2] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_special_values_written_bit_exact(device, timed, dtype):
    operand = jnp.asarray(np.ones((3, 5)), dtype=dtype)
    update = jnp.asarray(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0]), dtype=dtype)
    out = np.asarray(
        timed(functools.partial(lax.dynamic_update_index_in_dim, index=1, axis=0), operand, update)
    )
    row = out[1].astype(np.float64)
    assert np.isnan(row[0]) and row[1] == np.inf and row[2] == -np.inf
    assert row[3] == 0.0 and np.signbit(row[3]) and not np.signbit(row[4])
    np.testing.assert_array_equal(out[[0, 2]].astype(np.float64), np.ones((2, 5)))


def test_mismatched_dtype_rejected(device, timed):
    with pytest.raises(TypeError):
        timed(
            functools.partial(lax.dynamic_update_index_in_dim, index=0, axis=0),
            jnp.zeros((3, 2), dtype=jnp.float32),
            jnp.ones((2,), dtype=jnp.float64),
        )


def test_gradient(device, timed):
    # d(sum(w * out))/d operand is w with the written slice zeroed; d/d update is that slice of w
    w = np.random.default_rng(3).normal(size=(4, 3))

    def loss(operand, update):
        return jnp.sum(jnp.asarray(w) * lax.dynamic_update_index_in_dim(operand, update, 2, 0))

    g_operand, g_update = timed(jax.grad(loss, argnums=(0, 1)), jnp.ones((4, 3)), jnp.ones((3,)))
    expected = w.copy()
    expected[2] = 0.0
    np.testing.assert_allclose(np.asarray(g_operand), expected, rtol=0, atol=0)
    np.testing.assert_allclose(np.asarray(g_update), w[2], rtol=0, atol=0)
