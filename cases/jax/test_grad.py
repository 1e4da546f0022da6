"""jax.grad: reverse-mode gradients of scalar functions against their analytic derivatives computed
in NumPy (float64), per dtype and shape; argnums, has_aux, pytrees and holomorphic inputs; edge
points with infinite or NaN slopes; the refusals JAX documents (integer inputs, non-scalar outputs)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-2, "bfloat16": 1e-1}
SHAPES = [(1,), (7,), (5, 3), (3, 1, 4), (1 << 18,)]


def sum_sin(x):
    return jnp.sum(jnp.sin(x))


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_grad_of_sum_sin_is_cos(device, timed, dtype, shape):
    x = jnp.asarray(np.random.default_rng(0).uniform(-3, 3, shape), dtype=dtype)
    out = timed(jax.grad(sum_sin), x)
    assert out.dtype == x.dtype and out.shape == shape  # a gradient has its input's type
    expected = np.cos(np.asarray(x).astype(np.float64))
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out).astype(np.float64), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_grad_of_a_quadratic_form(device, timed, dtype):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(9, 9))
    x = rng.normal(size=9)
    out = timed(jax.grad(lambda v, m: v @ m @ v), jnp.asarray(x, dtype=dtype), jnp.asarray(a, dtype=dtype))
    tol = TOLERANCE[dtype] * 10
    np.testing.assert_allclose(np.asarray(out), (a + a.T) @ x, rtol=tol, atol=tol)


def test_grad_of_logsumexp_is_softmax(device, timed):
    x = np.random.default_rng(2).normal(size=(4, 33)) * 20  # large enough to overflow a naive exp in float32
    out = timed(jax.grad(lambda v: jnp.sum(jax.nn.logsumexp(v, axis=-1))), jnp.asarray(x, dtype=jnp.float32))
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(out), shifted / shifted.sum(axis=-1, keepdims=True), atol=1e-6)


def test_grad_argnums_and_has_aux(device, timed):
    def weighted(x, y, z):
        return jnp.sum(x * y**2 + z), jnp.max(x)

    x, y, z = (jnp.asarray(v) for v in ([1.0, 2.0], [3.0, -4.0], [0.5, 0.5]))
    (gx, gy), aux = timed(jax.grad(weighted, argnums=(0, 1), has_aux=True), x, y, z)
    np.testing.assert_allclose(np.asarray(gx), [9.0, 16.0])  # d/dx = y**2
    np.testing.assert_allclose(np.asarray(gy), [6.0, -16.0])  # d/dy = 2xy
    assert float(aux) == 2.0


def test_grad_over_a_pytree_of_parameters(device, timed):
    params = {"w": jnp.asarray([[1.0, -2.0], [0.5, 3.0]]), "b": jnp.asarray([0.25, -1.0])}
    x = jnp.asarray([2.0, -1.0])

    def loss(p, v):
        return jnp.sum((p["w"] @ v + p["b"]) ** 2)

    out = timed(jax.grad(loss), params, x)
    residual = np.asarray(params["w"]) @ np.asarray(x) + np.asarray(params["b"])
    np.testing.assert_allclose(np.asarray(out["b"]), 2 * residual)
    np.testing.assert_allclose(np.asarray(out["w"]), 2 * np.outer(residual, np.asarray(x)))


def test_grad_holomorphic_complex(device, timed):
    z = jnp.asarray(1.5 - 0.5j, dtype=jnp.complex128)
    out = timed(jax.grad(lambda v: v**3 + jnp.exp(v), holomorphic=True), z)
    expected = 3 * complex(z) ** 2 + np.exp(complex(z))
    assert out.dtype == jnp.complex128
    np.testing.assert_allclose(complex(out), expected, rtol=1e-12)


def test_grad_at_edge_points(device, timed):
    x = np.array([0.0, 4.0, -1.0, np.inf])
    out = np.asarray(timed(jax.grad(lambda v: jnp.sum(jnp.sqrt(v))), jnp.asarray(x)))
    assert out[0] == np.inf  # d sqrt(x)/dx = 1 / (2 sqrt(x)): infinite at 0
    assert out[1] == 0.25
    assert np.isnan(out[2])  # sqrt of a negative number is NaN, and so is its slope
    assert out[3] == 0.0


def test_grad_refuses_integer_input(device, timed):
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        timed(jax.grad(sum_sin), jnp.arange(3))


def test_grad_refuses_non_scalar_output(device, timed):
    with pytest.raises(TypeError, match="scalar"):
        timed(jax.grad(jnp.sin), jnp.ones(3))
