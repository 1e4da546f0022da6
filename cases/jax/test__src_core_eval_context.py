"""jax._src.core.eval_context: inside the context, operations evaluate eagerly to concrete arrays even while a
transformation (jit, grad, vmap, make_jaxpr) is tracing."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import core

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32"])
def test_eval_context_inside_jit(device, timed, dtype):
    seen = {}

    @jax.jit
    def f(x):
        with core.eval_context():
            y = jnp.add(jnp.ones((3,), dtype), 1)
        seen["y"] = y
        return x + y

    out = timed(f, jnp.zeros((3,), dtype))
    assert not isinstance(seen["y"], core.Tracer)
    np.testing.assert_array_equal(np.asarray(seen["y"], np.float64), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(out, np.float64), [2.0, 2.0, 2.0])


def test_eval_context_inside_make_jaxpr(device, timed):
    seen = []

    def f(x):
        with core.eval_context():
            c = jnp.arange(4.0) * 3
        seen.append(c)
        return x * c

    out = timed(f, jnp.ones(4))
    np.testing.assert_allclose(np.asarray(out), np.arange(4.0) * 3)
    jaxpr = jax.make_jaxpr(f)(jnp.ones(4))
    assert not any(isinstance(c, core.Tracer) for c in seen)
    assert [e.primitive.name for e in jaxpr.eqns] == ["mul"]
    np.testing.assert_allclose(np.asarray(jaxpr.consts[0]), np.arange(4.0) * 3)


def test_eval_context_inside_grad(device, timed):
    seen = {}

    def f(x):
        with core.eval_context():
            scale = jnp.float64(2.0) ** 3
        seen["scale"] = scale
        return jnp.sum(x * x) * scale

    grad = timed(jax.grad(f), jnp.arange(3.0))
    assert not isinstance(seen["scale"], core.Tracer) and float(seen["scale"]) == 8.0
    np.testing.assert_allclose(np.asarray(grad), 16 * np.arange(3.0))


def test_eval_context_inside_vmap(device, timed):
    seen = {}

    def f(x):
        with core.eval_context():
            offset = jnp.ones((2,)) * 5
        seen["offset"] = offset
        return x + offset

    out = timed(jax.vmap(f), jnp.zeros((3, 2)))
    assert not isinstance(seen["offset"], core.Tracer)
    assert seen["offset"].shape == (2,)  # not batched
    np.testing.assert_array_equal(np.asarray(out), np.full((3, 2), 5.0))


def test_eval_context_large_array(device, timed):
    def make():
        with core.eval_context():
            return jnp.ones((512, 1024), jnp.float32) * 2

    big = timed(make)
    assert big.shape == (512, 1024) and float(big.sum()) == 2 * 512 * 1024
