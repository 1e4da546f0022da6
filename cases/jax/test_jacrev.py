"""jax.jacrev: reverse-mode Jacobians against analytic Jacobians computed in NumPy (float64), per
dtype and size: an elementwise map (diagonal), a linear map (its matrix), softmax; argnums, has_aux,
pytree inputs and outputs, an infinite slope; the refusal of integer inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-2, "bfloat16": 1e-1}
SIZES = [1, 5, 33, 512]  # 512 x 512 float32 Jacobian: 1 MB


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("size", SIZES)
def test_jacobian_of_an_elementwise_map_is_diagonal(device, timed, dtype, size):
    x = jnp.asarray(np.random.default_rng(0).uniform(-2, 2, size), dtype=dtype)
    out = timed(jax.jacrev(jnp.tanh), x)
    assert out.shape == (size, size) and out.dtype == x.dtype
    slope = 1.0 - np.tanh(np.asarray(x).astype(np.float64)) ** 2
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), np.diag(slope), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jacobian_of_a_linear_map_is_its_matrix(device, timed, dtype):
    matrix = np.random.default_rng(1).normal(size=(4, 7))
    out = timed(jax.jacrev(lambda v, m: m @ v), jnp.ones(7, dtype=dtype), jnp.asarray(matrix, dtype=dtype))
    np.testing.assert_allclose(np.asarray(out), matrix.astype(dtype), rtol=TOLERANCE[dtype])


def test_jacobian_of_softmax(device, timed):
    x = np.array([0.5, -1.0, 2.0, 0.0])
    out = np.asarray(timed(jax.jacrev(jax.nn.softmax), jnp.asarray(x)))
    s = np.exp(x) / np.exp(x).sum()
    np.testing.assert_allclose(out, np.diag(s) - np.outer(s, s), atol=1e-14)


def test_jacrev_argnums_and_has_aux(device, timed):
    def product(x, y):
        return x * y, jnp.sum(x)

    x, y = jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([4.0, 5.0, 6.0])
    (jx, jy), aux = timed(jax.jacrev(product, argnums=(0, 1), has_aux=True), x, y)
    np.testing.assert_array_equal(np.asarray(jx), np.diag([4.0, 5.0, 6.0]))
    np.testing.assert_array_equal(np.asarray(jy), np.diag([1.0, 2.0, 3.0]))
    assert float(aux) == 6.0


def test_jacrev_over_pytrees(device, timed):
    def f(p):
        return {"sum": p["a"] + p["b"][0], "square": p["a"] ** 2}

    out = timed(jax.jacrev(f), {"a": jnp.asarray([3.0]), "b": jnp.asarray([1.0, 2.0])})
    np.testing.assert_array_equal(np.asarray(out["sum"]["a"]), [[1.0]])
    np.testing.assert_array_equal(np.asarray(out["sum"]["b"]), [[1.0, 0.0]])
    np.testing.assert_array_equal(np.asarray(out["square"]["a"]), [[6.0]])
    np.testing.assert_array_equal(np.asarray(out["square"]["b"]), [[0.0, 0.0]])


def test_jacrev_infinite_slope(device, timed):
    out = np.asarray(timed(jax.jacrev(jnp.cbrt), jnp.asarray([0.0, 8.0])))
    assert out[0, 0] == np.inf  # d cbrt(x)/dx = x**(-2/3) / 3: infinite at 0
    np.testing.assert_allclose(out[1, 1], 1.0 / 12.0, rtol=1e-12)


def test_jacrev_off_diagonal_beside_an_infinite_slope_is_zero(device, timed):
    """cbrt(x[1]) does not depend on x[0], so that entry is 0 whatever the slope at x[0]; a pullback
    that multiplies a zero cotangent by the infinite slope gives NaN there instead."""
    out = np.asarray(timed(jax.jacrev(jnp.cbrt), jnp.asarray([0.0, 8.0])))
    np.testing.assert_array_equal([out[0, 1], out[1, 0]], [0.0, 0.0])


def test_jacrev_refuses_integer_input(device, timed):
    with pytest.raises(TypeError, match="real- or complex-valued inputs"):
        timed(jax.jacrev(jnp.sin), jnp.arange(3))
