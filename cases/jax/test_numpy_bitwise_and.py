"""jax.numpy.bitwise_and (the study printed jax.lax.bitwise_and): elementwise AND against NumPy over
integer and boolean dtypes, broadcasting, negative numbers and rejection of floats."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
SHAPES = [(0,), (1,), (7, 3), (3, 1, 5), (1 << 18,)]


def _data(rng, shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_bitwise_and_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    a, b = _data(rng, shape, dtype), _data(rng, shape, dtype)
    out = timed(jnp.bitwise_and, jnp.asarray(a), jnp.asarray(b))
    assert out.dtype == jnp.dtype(dtype) and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), np.bitwise_and(a, b))


def test_bitwise_and_negative_twos_complement(device, timed):
    x = jnp.array([-1, -2, -128, 127, -1], dtype=jnp.int8)
    y = jnp.array([0x55, -1, -1, -128, 0], dtype=jnp.int8)
    out = timed(jnp.bitwise_and, x, y)
    np.testing.assert_array_equal(np.asarray(out), np.array([0x55, -2, -128, 0, 0], dtype=np.int8))


def test_bitwise_and_broadcasts_masks(device, timed):
    x = jnp.arange(16, dtype=jnp.uint32).reshape(16, 1)
    masks = jnp.array([[1, 2, 4, 8]], dtype=jnp.uint32)
    out = timed(jnp.bitwise_and, x, masks)
    assert out.shape == (16, 4)
    np.testing.assert_array_equal(np.asarray(out) != 0, ((np.arange(16)[:, None] >> np.arange(4)) & 1) == 1)


def test_bitwise_and_mixed_int_promotion(device, timed):
    out = timed(jnp.bitwise_and, jnp.array([0xFF, 0x0F], dtype=jnp.uint8), jnp.array([0x3C, 0xF0], jnp.int32))
    assert out.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(out), [0x3C, 0x00])


def test_bitwise_and_rejects_floats(device, timed):
    with pytest.raises(TypeError):
        timed(jnp.bitwise_and, jnp.ones(3, jnp.float32), jnp.ones(3, jnp.float32))
