"""jax.vmap: a function mapped over a batch axis against the same computation done slice by slice in
NumPy, per dtype and batch size; in_axes / out_axes (None, negative), nesting, pytrees, an empty
batch, and the refusal of batch axes of different sizes."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float64": 1e-12, "float32": 1e-4, "float16": 5e-2, "bfloat16": 3e-1, "int32": 0, "int64": 0}
BATCHES = [1, 7, 64, 4096]  # 4096 x 64 x 64 float32: past 1 MB


def row_times_vector(matrix, vector):
    return matrix @ vector


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("batch", BATCHES)
def test_vmap_matches_a_loop_over_slices(device, timed, dtype, batch):
    rng = np.random.default_rng(0)
    size = 64 if batch == 4096 else 5
    matrices = rng.integers(-3, 4, (batch, size, size)).astype(dtype)
    vector = rng.integers(-3, 4, size).astype(dtype)
    batched = jax.vmap(row_times_vector, in_axes=(0, None))
    out = timed(batched, jnp.asarray(matrices), jnp.asarray(vector))
    assert out.shape == (batch, size) and out.dtype == jnp.dtype(dtype)
    expected = np.stack([m.astype(np.float64) @ vector.astype(np.float64) for m in matrices])
    tol = TOLERANCE[dtype] * np.abs(expected).max(initial=1.0)
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=0, atol=tol)


def test_vmap_in_and_out_axes(device, timed):
    x = np.arange(24.0).reshape(2, 3, 4)
    # map over axis 1 of x, put the mapped axis last in the result
    swapped = jax.vmap(lambda a: a * 2.0 + a.sum(), in_axes=1, out_axes=-1)
    out = np.asarray(timed(swapped, jnp.asarray(x)))
    expected = np.stack([x[:, i, :] * 2.0 + x[:, i, :].sum() for i in range(3)], axis=-1)
    assert out.shape == (2, 4, 3)
    np.testing.assert_array_equal(out, expected)


def test_vmap_negative_in_axis(device, timed):
    x = np.random.default_rng(1).normal(size=(3, 5))
    out = np.asarray(timed(jax.vmap(jnp.cumsum, in_axes=-1), jnp.asarray(x)))
    np.testing.assert_allclose(out, np.stack([np.cumsum(x[:, j]) for j in range(5)]), rtol=1e-12)


def test_nested_vmap_is_a_matrix_product(device, timed):
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(6, 4)), rng.normal(size=(4, 3))
    matvec = jax.vmap(jnp.vdot, in_axes=(0, None))
    matmat = jax.vmap(matvec, in_axes=(None, 1), out_axes=1)
    out = np.asarray(timed(matmat, jnp.asarray(a), jnp.asarray(b)))
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)


def test_vmap_over_a_pytree(device, timed):
    batch = {"scale": jnp.asarray([1.0, 2.0, -1.0]), "values": jnp.asarray(np.arange(12.0).reshape(3, 4))}
    out = timed(jax.vmap(lambda p: {"total": p["scale"] * p["values"].sum()}), batch)
    expected = np.array([1.0, 2.0, -1.0]) * np.arange(12.0).reshape(3, 4).sum(axis=1)
    np.testing.assert_array_equal(np.asarray(out["total"]), expected)


def test_vmap_over_an_empty_batch(device, timed):
    out = timed(jax.vmap(functools.partial(jnp.sum, axis=0)), jnp.zeros((0, 4), dtype=jnp.float32))
    assert out.shape == (0,) and out.dtype == jnp.float32


def test_vmap_keeps_nan_and_inf_per_slice(device, timed):
    x = jnp.asarray([[1.0, np.nan], [np.inf, 2.0], [-0.0, 0.0]])
    out = np.asarray(timed(jax.vmap(jnp.max), x))
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == 0.0


def test_vmap_refuses_batches_of_different_sizes(device, timed):
    with pytest.raises(ValueError, match="vmap got inconsistent sizes for array axes to be mapped"):
        timed(jax.vmap(jnp.add), jnp.ones(3), jnp.ones(4))
