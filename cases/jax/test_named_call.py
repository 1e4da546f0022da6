"""jax.named_call: a named wrapper computes the same values, keeps the name in the lowering,
differentiates."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)


def _step(acc, x):
    return acc + x, acc * x


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "float16", "bfloat16"])
def test_named_call_scan_step(device, timed, dtype):
    step = jax.named_call(_step, name="step")
    xs = jnp.arange(1, 9, dtype=dtype)
    init = jnp.zeros((), dtype=dtype)
    (total, prods) = timed(lambda c, v: lax.scan(step, c, v), init, xs)
    assert total.dtype == xs.dtype and prods.shape == xs.shape
    np.testing.assert_allclose(np.asarray(total, np.float64), 36.0)
    acc = np.concatenate([[0], np.cumsum(np.arange(1, 8))])
    np.testing.assert_allclose(np.asarray(prods, np.float64), acc * np.arange(1, 9), rtol=1e-2)


@pytest.mark.parametrize("shape", [(0,), (7, 3), (1 << 18,)], ids=["empty", "odd", "large"])
def test_named_call_matches_unnamed(device, timed, shape):
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal(shape), jnp.float32)
    b = jnp.asarray(rng.standard_normal(shape), jnp.float32)

    def fn(x, y):
        return jnp.sin(x) * y + 1.0

    named = jax.named_call(fn, name="sin_mul")
    out = timed(named, a, b)
    assert out.shape == shape and out.dtype == jnp.float32
    np.testing.assert_allclose(
        np.asarray(out), np.sin(np.asarray(a)) * np.asarray(b) + 1.0, rtol=1e-6, atol=1e-6
    )


def test_named_call_name_in_lowering(device, timed):
    named = jax.named_call(lambda x: x * 2.0 + 1.0, name="my_named_region")
    x = jnp.arange(4.0)
    out = timed(named, x)
    np.testing.assert_allclose(np.asarray(out), np.arange(4.0) * 2 + 1)
    text = jax.jit(named).lower(x).as_text(debug_info=True)
    assert "my_named_region" in text


def test_named_call_partial_static_arg(device, timed):
    f = jax.named_call(lambda flag, y: y if flag else None, name="test")
    out = timed(functools.partial(f, True), jnp.asarray(5))
    assert int(out) == 5


def test_named_call_gradient(device, timed):
    named = jax.named_call(lambda x: jnp.sum(x**3), name="cube")
    x = jnp.linspace(-2.0, 2.0, 9, dtype=jnp.float64)
    grad = timed(jax.grad(named), x)
    np.testing.assert_allclose(np.asarray(grad), 3 * np.asarray(x) ** 2, rtol=1e-12)
