"""jax.nn.glu: gated linear unit a * sigmoid(b) of the two halves of an axis, against a direct NumPy
computation in float64 on the same (cast) inputs (scipy.special.expit as the sigmoid), over dtypes, shapes,
split axes, saturating/NaN/inf/-0.0 inputs, odd axis sizes and the gradient."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-6, "float64": 1e-14, "float16": 2e-3, "bfloat16": 1.6e-2}
# the split axis (last) has even length; the empty one has no rows
SHAPES = [(0, 4), (7, 6), (3, 5, 10), (256, 1024)]


def reference(x, axis=-1):
    a, b = np.split(np.asarray(x).astype(np.float64), 2, axis=axis)
    with np.errstate(invalid="ignore"):  # inf * sigmoid(-inf) = inf * 0 is NaN on purpose
        return a * scipy.special.expit(b)


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_glu_matches_numpy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-8, 8, shape), dtype=dtype)
    out = timed(jax.nn.glu, x)
    expected = reference(x)
    assert out.dtype == x.dtype and out.shape == expected.shape
    assert out.shape == (*shape[:-1], shape[-1] // 2)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("axis", [0, 1, -1, -3])
def test_glu_axis(device, timed, axis):
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.normal(size=(4, 6, 8)))
    out = timed(functools.partial(jax.nn.glu, axis=axis), x)
    expected = reference(x, axis=axis)
    assert out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_glu_edge_values(device, timed, dtype):
    # columns are (value, gate) pairs laid out as the two halves of the last axis
    pairs = [
        (3.0, 0.0),  # gate 0.5
        (3.0, 200.0),  # saturated open
        (3.0, -200.0),  # saturated shut
        (2.0, np.inf),
        (2.0, -np.inf),
        (np.inf, 1.0),
        (np.inf, -np.inf),  # inf * 0 -> NaN
        (np.nan, 1.0),
        (1.0, np.nan),
        (0.0, 5.0),
        (-0.0, 5.0),
    ]
    x = jnp.asarray(np.array([p[0] for p in pairs] + [p[1] for p in pairs]), dtype=dtype)
    out = np.asarray(timed(jax.nn.glu, x)).astype(np.float64)
    expected = reference(x)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    finite = ~np.isnan(expected)
    # a saturated-shut gate may underflow to 0 in the dtype: allow an absolute error of its smallest normal
    tiny = float(jnp.finfo(dtype).tiny)
    np.testing.assert_allclose(out[finite], expected[finite], rtol=TOLERANCE[dtype], atol=tiny)
    np.testing.assert_array_equal(np.signbit(out[finite]), np.signbit(expected[finite]))


def test_glu_upstream_value(device, timed):
    out = timed(functools.partial(jax.nn.glu, axis=0), jnp.array([1.0, 0.0], dtype=jnp.float32))
    assert out.shape == (1,) and out.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(out), [0.5])


@pytest.mark.parametrize("shape,axis", [((5,), -1), ((4, 3), 1), ((3, 4), 0)], ids=str)
def test_glu_rejects_odd_axis(device, timed, shape, axis):
    with pytest.raises((AssertionError, ValueError)):
        timed(functools.partial(jax.nn.glu, axis=axis), jnp.ones(shape, dtype=jnp.float32))


def test_glu_rejects_integer(device, timed):
    # the sigmoid gate is defined on inexact dtypes only
    with pytest.raises(TypeError):
        timed(jax.nn.glu, jnp.arange(4, dtype=jnp.int32))


def test_glu_gradient(device, timed):
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.uniform(-4, 4, (5, 8)))
    w = jnp.asarray(rng.normal(size=(5, 4)))
    grad = timed(jax.grad(lambda v, weights: jnp.sum(jax.nn.glu(v) * weights)), x, w)
    a, b = np.split(np.asarray(x), 2, axis=-1)
    s = scipy.special.expit(b)
    nw = np.asarray(w)
    # d/da = sigmoid(b), d/db = a * sigmoid(b) * (1 - sigmoid(b))
    expected = np.concatenate([nw * s, nw * a * s * (1 - s)], axis=-1)
    np.testing.assert_allclose(np.asarray(grad), expected, rtol=1e-13, atol=1e-15)
