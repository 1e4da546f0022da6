"""jax.vjp: primal outputs and vector-Jacobian products against analytic derivatives for dtypes and shapes;
several arguments, pytrees, has_aux, complex inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

TOLERANCE = {"float32": 1e-5, "float64": 1e-12, "float16": 1e-2, "bfloat16": 5e-2}


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("shape", [(), (0,), (7, 3), (1 << 18,)], ids=str)
def test_vjp_sin(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-3, 3, shape), dtype)
    out, vjp_fn = timed(jax.vjp, jnp.sin, x)
    ct = jnp.asarray(rng.uniform(-1, 1, shape), dtype)
    (grad,) = vjp_fn(ct)
    assert out.shape == shape and grad.shape == shape and grad.dtype == x.dtype
    xs, cts = np.asarray(x, np.float64), np.asarray(ct, np.float64)
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(np.asarray(out, np.float64), np.sin(xs), rtol=tol, atol=tol)
    np.testing.assert_allclose(np.asarray(grad, np.float64), cts * np.cos(xs), rtol=tol, atol=tol)


def test_vjp_two_arguments(device, timed):
    def f(a, b):
        return a @ b

    rng = np.random.default_rng(1)
    a, b = jnp.asarray(rng.standard_normal((3, 4))), jnp.asarray(rng.standard_normal((4, 2)))
    out, vjp_fn = timed(jax.vjp, f, a, b)
    ct = jnp.asarray(rng.standard_normal((3, 2)))
    ga, gb = vjp_fn(ct)
    np.testing.assert_allclose(np.asarray(out), np.asarray(a) @ np.asarray(b), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ga), np.asarray(ct) @ np.asarray(b).T, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gb), np.asarray(a).T @ np.asarray(ct), rtol=1e-12)


def test_vjp_pytree_and_has_aux(device, timed):
    def f(params):
        y = params["w"] * params["x"][0] + params["x"][1]
        return y, {"norm": jnp.sum(y * y)}

    params = {"w": jnp.float64(2.0), "x": (jnp.arange(3.0), jnp.ones(3))}
    out, vjp_fn, aux = timed(jax.vjp, f, params, has_aux=True)
    np.testing.assert_allclose(np.asarray(out), 2 * np.arange(3.0) + 1)
    np.testing.assert_allclose(float(aux["norm"]), np.sum((2 * np.arange(3.0) + 1) ** 2))
    (g,) = vjp_fn(jnp.ones(3))
    np.testing.assert_allclose(float(g["w"]), np.sum(np.arange(3.0)))
    np.testing.assert_allclose(np.asarray(g["x"][0]), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(np.asarray(g["x"][1]), [1.0, 1.0, 1.0])


def test_vjp_complex(device, timed):
    z = jnp.array([1 + 2j, -0.5 + 0.25j], dtype=jnp.complex128)
    out, vjp_fn = timed(jax.vjp, lambda v: v * v, z)
    (g,) = vjp_fn(jnp.ones_like(z))
    np.testing.assert_allclose(np.asarray(out), np.asarray(z) ** 2)
    # JAX's convention: the cotangent is pulled back by the transpose (not the conjugate) of the Jacobian.
    np.testing.assert_allclose(np.asarray(g), 2 * np.asarray(z))
