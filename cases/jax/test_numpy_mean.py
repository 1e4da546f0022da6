"""jax.numpy.mean: mean against NumPy over axes, dtypes, keepdims, where, dtype argument, empty input
and its gradient."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {
    "float32": 1e-5,
    "float64": 1e-12,
    "float16": 1e-2,
    "bfloat16": 5e-2,
    "complex64": 1e-5,
    # JAX keeps the width: int32 and bool average in float32 (NumPy would use float64)
    "int32": 2e-6,
    "bool": 2e-6,
}
AXES = [None, 0, -1, (0, 2)]
SHAPES = [(3, 5, 7), (1, 1, 1), (64, 33, 129)]


def _data(rng, shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype == "int32":
        return rng.integers(-1000, 1000, shape)
    data = rng.uniform(-1, 3, shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.uniform(-1, 1, shape)
    return data


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("axis", AXES, ids=["all", "first", "last", "pair"])
@pytest.mark.parametrize("shape", SHAPES, ids=["odd", "ones", "large"])
def test_mean_matches_numpy(device, timed, dtype, axis, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(_data(rng, shape, dtype), dtype=dtype)
    out = timed(jnp.mean, x, axis=axis)
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    expected = np.mean(np.asarray(x).astype(wide), axis=axis)
    assert out.shape == expected.shape
    if dtype in ("int32", "bool"):
        assert jnp.issubdtype(out.dtype, jnp.floating)
    else:
        assert out.dtype == x.dtype
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(wide), expected, rtol=tol, atol=tol)


def test_mean_keepdims_where(device, timed):
    data = np.arange(24.0).reshape(2, 3, 4)
    mask = (np.arange(24).reshape(2, 3, 4) % 5) != 1
    out = timed(jnp.mean, jnp.asarray(data), axis=(0, 2), keepdims=True, where=jnp.asarray(mask))
    assert out.shape == (1, 3, 1)
    np.testing.assert_allclose(
        np.asarray(out), np.mean(data, axis=(0, 2), keepdims=True, where=mask), rtol=1e-14
    )


def test_mean_dtype_argument(device, timed):
    x = jnp.full((4096,), 0.1, dtype=jnp.float16)
    out = timed(jnp.mean, x, dtype=jnp.float32)
    assert out.dtype == jnp.float32
    assert float(out) == pytest.approx(float(np.float16(0.1)), rel=1e-6)


def test_mean_empty_is_nan(device, timed):
    out = timed(jnp.mean, jnp.zeros((0, 3), jnp.float32), axis=0)
    assert out.shape == (3,) and np.isnan(np.asarray(out)).all()


def test_mean_gradient(device, timed):
    x = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    grad = timed(jax.grad(lambda v: jnp.mean(v**2)), x)
    np.testing.assert_allclose(np.asarray(grad), 2 * np.asarray(x) / 12, rtol=1e-12)
