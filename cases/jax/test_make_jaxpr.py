"""jax.make_jaxpr: the traced jaxpr of a function: equations, input/output avals per dtype and shape, static
arguments, return_shape, pytrees, and evaluation of the jaxpr against NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import core

jax.config.update("jax_enable_x64", True)

# Timed with timed.region(), not timed(): make_jaxpr returns a ClosedJaxpr (host-side tracing), which no
# jax.jit can return; a jitted wrapper would time only its cached executable, not the tracing.

DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (7, 3), (512, 1024)], ids=str)
def test_make_jaxpr_sin_mul(device, timed, dtype, shape):
    def f(x):
        return jnp.sin(x) * 2

    x = jnp.ones(shape, dtype)
    with timed.region() as region:
        closed = jax.make_jaxpr(f)(x)
        region.result = closed.consts
    names = [e.primitive.name for e in closed.eqns]
    assert "sin" in names and "mul" in names
    assert closed.in_avals[0].shape == shape and closed.in_avals[0].dtype == jnp.dtype(dtype)
    assert closed.out_avals[0].shape == shape and closed.out_avals[0].dtype == jnp.dtype(dtype)
    if shape == (7, 3):
        v = jnp.asarray(np.random.default_rng(0).uniform(-2, 2, shape), dtype)
        (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, v)
        wide = np.complex128 if dtype.startswith("complex") else np.float64
        tol = {"float16": 1e-2, "bfloat16": 5e-2}.get(dtype, 1e-5)
        np.testing.assert_allclose(
            np.asarray(out).astype(wide), np.sin(np.asarray(v).astype(wide)) * 2, rtol=tol, atol=tol
        )


def test_make_jaxpr_static_argnums(device, timed):
    def f(x, n):
        for _ in range(n):
            x = x * 2
        return x

    with timed.region() as region:
        closed = jax.make_jaxpr(f, static_argnums=1)(jnp.ones(3), 3)
        region.result = closed.consts
    assert [e.primitive.name for e in closed.eqns] == ["mul", "mul", "mul"]
    assert len(closed.in_avals) == 1


def test_make_jaxpr_return_shape_and_pytrees(device, timed):
    def f(tree):
        return {"s": tree["a"] + tree["b"][0], "p": tree["b"][1].astype(jnp.float32)}

    tree = {"a": jnp.ones((2, 3)), "b": (jnp.zeros((2, 3)), jnp.arange(4))}
    with timed.region() as region:
        closed, shapes = jax.make_jaxpr(f, return_shape=True)(tree)
        region.result = closed.consts
    assert len(closed.in_avals) == 3
    assert shapes["s"].shape == (2, 3) and shapes["s"].dtype == jnp.float64
    assert shapes["p"].shape == (4,) and shapes["p"].dtype == jnp.float32


def test_make_jaxpr_of_grad(device, timed):
    with timed.region() as region:
        closed = jax.make_jaxpr(jax.grad(lambda x: jnp.sum(jnp.sin(x))))(jnp.ones(5))
        region.result = closed.consts
    assert "cos" in [e.primitive.name for e in closed.eqns]
    x = jnp.linspace(0, 1, 5)
    (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, x)
    np.testing.assert_allclose(np.asarray(out), np.cos(np.asarray(x)), rtol=1e-12)


def test_make_jaxpr_shape_dtype_struct_input(device, timed):
    with timed.region() as region:
        closed = jax.make_jaxpr(lambda x: x.T @ x)(jax.ShapeDtypeStruct((6, 4), jnp.float32))
        region.result = closed.consts
    assert closed.out_avals[0].shape == (4, 4) and closed.out_avals[0].dtype == jnp.float32
