"""jax.numpy.sum: reductions against NumPy over axes, dtypes and options."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-5, "float64": 1e-12, "float16": 2e-2, "bfloat16": 5e-2, "int32": 0, "bool": 0}


def _data(shape, dtype):
    rng = np.random.default_rng(1)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype == "int32":
        return rng.integers(-100, 100, shape).astype(np.int32)
    return rng.uniform(-1, 1, shape)


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)], ids=["all", "first", "last", "pair"])
@pytest.mark.parametrize("shape", [(0, 3, 2), (3, 5, 7), (64, 33, 129)], ids=["empty", "odd", "large"])
def test_sum_matches_numpy(device, timed, dtype, axis, shape):
    data = _data(shape, dtype)
    x = jnp.asarray(data, dtype=dtype)
    out = timed(jnp.sum, x, axis=axis)
    expected = np.sum(
        np.asarray(x).astype(np.float64 if dtype not in ("int32", "bool") else np.int64), axis=axis
    )
    assert out.shape == expected.shape
    tol = TOLERANCE[dtype] * max(1, int(np.prod(shape)) ** 0.5)
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


def test_sum_keepdims_where_initial(device, timed):
    x = jnp.arange(12.0).reshape(3, 4)
    mask = np.arange(12).reshape(3, 4) % 2 == 0
    out = timed(jnp.sum, x, axis=1, keepdims=True, where=jnp.asarray(mask), initial=10.0)
    expected = np.sum(np.arange(12.0).reshape(3, 4), axis=1, keepdims=True, where=mask, initial=10.0)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_sum_dtype_argument(device, timed):
    out = timed(jnp.sum, jnp.ones(300, dtype=jnp.int8), dtype=jnp.int32)
    assert out.dtype == jnp.int32 and int(out) == 300


def test_sum_gradient_is_ones(device, timed):
    x = jnp.linspace(0.0, 1.0, 17)
    grad = timed(jax.grad(lambda v: jnp.sum(v * v)), x)
    np.testing.assert_allclose(np.asarray(grad), 2 * np.asarray(x), rtol=1e-12)
