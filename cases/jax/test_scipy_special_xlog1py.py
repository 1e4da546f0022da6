"""jax.scipy.special.xlog1py: x * log1p(y) (0 where x == 0) against scipy.special.xlog1py in float64 on the
same (cast) inputs, over dtypes, shapes and broadcasting, the x == 0 convention, NaN/inf/-1 edge values,
integer promotion and the gradient against the analytic partials."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special
from jax.scipy.special import xlog1py

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 2e-6, "float64": 1e-13, "float16": 2e-3, "bfloat16": 1.6e-2}
SHAPES = [(0,), (7, 3), (3, 1, 5), (1 << 18,)]


def reference(x, y):
    return scipy.special.xlog1py(np.asarray(x).astype(np.float64), np.asarray(y).astype(np.float64))


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_xlog1py_matches_scipy(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-5, 5, shape), dtype=dtype)
    # y spans the domain (-1, inf) on a log scale so log1p sees tiny, moderate and large arguments
    y = jnp.asarray(np.expm1(rng.uniform(-6, 6, shape)), dtype=dtype)
    out = timed(xlog1py, x, y)
    assert out.dtype == jnp.dtype(dtype) and out.shape == shape
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), reference(x, y), rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "xshape,yshape", [((4,), (3, 4)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 1, 4), (5, 1))], ids=str
)
def test_xlog1py_broadcasts(device, timed, xshape, yshape):
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.uniform(-3, 3, xshape))
    y = jnp.asarray(rng.uniform(-0.9, 10, yshape))
    out = timed(xlog1py, x, y)
    expected = reference(x, y)
    assert out.shape == expected.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_xlog1py_edge_values(device, timed, dtype):
    # (x, y) pairs: x == 0 gives 0 for every y except NaN (also y == -1, y == inf, y < -1)
    pairs = [
        (0.0, -1.0),
        (0.0, np.inf),
        (0.0, -3.0),
        (-0.0, 2.0),
        (0.0, np.nan),
        (1.0, -1.0),
        (-2.0, -1.0),
        (1.0, np.inf),
        (-1.0, np.inf),
        (1.0, -2.0),
        (np.nan, 1.0),
        (np.inf, 0.0),
        (-np.inf, 1.0),
        (3.0, 0.0),
        (3.0, -0.0),
    ]
    x = jnp.asarray(np.array([p[0] for p in pairs]), dtype=dtype)
    y = jnp.asarray(np.array([p[1] for p in pairs]), dtype=dtype)
    out = np.asarray(timed(xlog1py, x, y)).astype(np.float64)
    # assert_array_equal treats NaN == NaN positionally and checks +/-inf exactly
    np.testing.assert_array_equal(out, reference(x, y))


def test_xlog1py_small_y_keeps_precision(device, timed):
    # log1p, not log(1 + y): for |y| below float64 epsilon the result is x * y, not 0
    x = jnp.asarray(np.array([2.0, -3.0, 1.0, 5.0]))
    y = jnp.asarray(np.array([1e-20, 1e-18, -1e-300, 3e-17]))
    out = timed(xlog1py, x, y)
    np.testing.assert_allclose(np.asarray(out), np.asarray(x) * np.asarray(y), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(out), reference(x, y), rtol=1e-15)


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_xlog1py_promotes_integers(device, timed, dtype):
    x = jnp.asarray(np.array([0, 1, 2, 1, 0, 1]), dtype=dtype)
    y = jnp.asarray(np.array([0, 1, 3, 0, 1, 1]), dtype=dtype)
    out = timed(xlog1py, x, y)
    # JAX's documented promotion to inexact: 64-bit ints to float64, narrower ints and bool to float32
    assert out.dtype == (jnp.float64 if dtype == "int64" else jnp.float32)
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), reference(x, y), rtol=2e-7, atol=0)


def test_xlog1py_gradient(device, timed):
    rng = np.random.default_rng(2)
    x = jnp.asarray(np.concatenate([rng.uniform(-3, 3, 11), [0.0]]))
    y = jnp.asarray(np.concatenate([rng.uniform(-0.9, 9, 11), [3.0]]))
    dx, dy = timed(jax.vmap(jax.grad(xlog1py, argnums=(0, 1))), x, y)
    nx, ny = np.asarray(x), np.asarray(y)
    # d/dx = log1p(y), d/dy = x / (1 + y); at x == 0 (a regular y) the y-partial is exactly 0
    np.testing.assert_allclose(np.asarray(dx), np.log1p(ny), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(dy), nx / (1 + ny), rtol=1e-14)
    assert np.asarray(dy)[-1] == 0.0
