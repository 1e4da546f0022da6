"""jax.lax.ge: elementwise greater-or-equal against NumPy over dtypes, NaN/inf/signed zero, scalars
and the same-dtype requirement of lax."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "uint8", "bool"]
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


def _data(rng, shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in ("int32", "int64", "uint8"):
        return rng.integers(0, 5, shape)  # small range: many ties
    return rng.integers(-3, 3, shape) / 2.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_ge_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(_data(rng, shape, dtype), dtype=dtype)
    y = jnp.asarray(_data(rng, shape, dtype), dtype=dtype)
    out = timed(lax.ge, x, y)
    assert out.dtype == jnp.bool_ and out.shape == shape
    wide = np.int64 if dtype == "bool" else np.float64
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x).astype(wide) >= np.asarray(y).astype(wide))


def test_ge_python_scalars(device, timed):
    out = timed(lax.ge, 2, 1)
    assert out.dtype == jnp.bool_ and out.shape == () and bool(out)
    assert not bool(timed(lax.ge, 1.0, 2.0))


def test_ge_special_values(device, timed):
    x = jnp.array([np.nan, 1.0, np.nan, -0.0, np.inf, -np.inf], dtype=jnp.float32)
    y = jnp.array([1.0, np.nan, np.nan, 0.0, np.inf, -np.inf], dtype=jnp.float32)
    out = np.asarray(timed(lax.ge, x, y))
    np.testing.assert_array_equal(out, [False, False, False, True, True, True])


def test_ge_unsigned_extremes(device, timed):
    x = jnp.array([0, 255, 128], dtype=jnp.uint8)
    y = jnp.array([255, 0, 127], dtype=jnp.uint8)
    np.testing.assert_array_equal(np.asarray(timed(lax.ge, x, y)), [False, True, True])


def test_ge_requires_same_dtype(device, timed):
    with pytest.raises(TypeError):
        timed(lax.ge, jnp.ones(3, jnp.int32), jnp.ones(3, jnp.float32))
