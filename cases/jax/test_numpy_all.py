"""jax.numpy.all: logical-AND reduction against NumPy over axes, dtypes (truthiness of NaN and -0.0),
keepdims, where and empty input."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["bool", "int32", "uint8", "float32", "float64", "float16", "bfloat16", "complex64"]
AXES = [None, 0, -1, (0, 2)]
SHAPES = [(3, 5, 7), (1, 1, 1), (64, 33, 129)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", AXES, ids=["all", "first", "last", "pair"])
@pytest.mark.parametrize("shape", SHAPES, ids=["odd", "ones", "large"])
def test_all_matches_numpy(device, timed, dtype, axis, shape):
    rng = np.random.default_rng(0)
    # mostly non-zero so that some reductions are True; zeros sprinkled sparsely
    data = np.where(rng.random(shape) < 0.002, 0, rng.integers(1, 5, shape))
    x = jnp.asarray(data, dtype=dtype)
    out = timed(jnp.all, x, axis=axis)
    expected = np.all(data != 0, axis=axis)
    assert out.dtype == jnp.bool_ and out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_all_truthiness_of_special_floats(device, timed):
    x = jnp.array([[np.nan, 1.0], [-0.0, 1.0], [np.inf, -np.inf]], dtype=jnp.float32)
    out = np.asarray(timed(jnp.all, x, axis=1))
    np.testing.assert_array_equal(out, [True, False, True])


def test_all_keepdims_where(device, timed):
    data = np.array([[1, 0, 1], [1, 1, 1]], dtype=bool)
    mask = np.array([[True, False, True], [False, True, True]])
    out = timed(jnp.all, jnp.asarray(data), axis=1, keepdims=True, where=jnp.asarray(mask))
    assert out.shape == (2, 1)
    np.testing.assert_array_equal(np.asarray(out), np.all(data, axis=1, keepdims=True, where=mask))


def test_all_empty_is_true(device, timed):
    out = timed(jnp.all, jnp.zeros((0, 4), jnp.float32), axis=0)
    np.testing.assert_array_equal(np.asarray(out), np.ones(4, bool))
    assert bool(timed(jnp.all, jnp.zeros((0,), jnp.bool_)))
