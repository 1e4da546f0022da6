"""jax.numpy.arange: ranges against numpy.arange over stop-only, start/stop/step, negative and float
steps, dtypes, empty ranges and a large range."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

ARGS = [
    (10,),
    (0,),
    (3, 17),
    (17, 3),
    (-5, 20, 3),
    (20, -5, -4),
    (0.0, 1.0, 0.1),
    (1.5, -2.0, -0.25),
    (1 << 18,),
]


@pytest.mark.parametrize("args", ARGS, ids=lambda a: "_".join(map(str, a)))
def test_arange_matches_numpy(device, timed, args):
    out = timed(jnp.arange, *args)
    expected = np.arange(*args)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "int32", "uint8"])
def test_arange_dtype(device, timed, dtype):
    out = timed(jnp.arange, 0, 100, 3, dtype=dtype)
    assert out.dtype == jnp.dtype(dtype) and out.shape == (34,)
    np.testing.assert_array_equal(np.asarray(out).astype(np.float64), np.arange(0, 100, 3))


def test_arange_float_step_accumulation(device, timed):
    out = timed(jnp.arange, 0.0, 100.0, 0.01, dtype=jnp.float32)
    expected = np.arange(0.0, 100.0, 0.01, dtype=np.float32)
    assert out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-4)


def test_arange_rejects_zero_step(device, timed):
    with pytest.raises((ValueError, ZeroDivisionError)):
        timed(jnp.arange, 0, 10, 0)
