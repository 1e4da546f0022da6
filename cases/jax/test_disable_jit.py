"""jax.disable_jit: inside the context, jitted functions run op by op on concrete values (Python control
flow and
printing work); the setting nests and is restored on exit; results equal the compiled ones."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import core

jax.config.update("jax_enable_x64", True)

# Timed with timed.region(), not timed(): disable_jit is a host-side config context whose effect is that
# nothing is compiled; under an outer jax.jit the values are tracers anyway, so routing would defeat it.


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("shape", [(), (7, 3), (512, 1024)], ids=str)
def test_disable_jit_concrete_values(device, timed, dtype, shape):
    seen = []

    @jax.jit
    def f(x):
        seen.append(isinstance(x, core.Tracer))
        return x * 2 + 1

    x = jnp.ones(shape, dtype)
    with timed.region() as region:
        with jax.disable_jit():
            out = f(x)
        region.result = out
    assert seen[-1] is False
    assert out.shape == shape and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out, np.float64), np.full(shape, 3.0))


def test_disable_jit_python_control_flow(device, timed):
    @jax.jit
    def relu_sum(x):
        total = 0.0
        for v in x:
            if v > 0:  # would fail on a tracer
                total = total + v
        return total

    x = jnp.array([-1.0, 2.0, -3.0, 4.0])
    with timed.region() as region:
        with jax.disable_jit():
            out = relu_sum(x)
        region.result = out
    assert float(out) == 6.0


def test_disable_jit_restores_and_nests(device, timed):
    before = jax.config.jax_disable_jit
    with timed.region() as region:
        with jax.disable_jit():
            assert jax.config.jax_disable_jit is True
            with jax.disable_jit(False):
                assert jax.config.jax_disable_jit is False
                inner = jax.jit(lambda x: x + 1)(jnp.float32(1.0))
            assert jax.config.jax_disable_jit is True
        region.result = inner
    assert jax.config.jax_disable_jit == before
    assert float(inner) == 2.0


def test_disable_jit_trivial_expression(device, timed):
    with timed.region() as region:
        with jax.disable_jit():
            value = 1 + 1
        region.result = value
    assert value == 2


def test_disable_jit_matches_jit(device, timed):
    def f(x):
        return jnp.tanh(x) @ x.T

    x = jnp.asarray(np.random.default_rng(0).standard_normal((33, 17)))
    with timed.region() as region:
        with jax.disable_jit():
            eager = jax.jit(f)(x)
        region.result = eager
    with jax.disable_jit(False):
        compiled = jax.jit(f)(x)
    np.testing.assert_allclose(np.asarray(eager), np.asarray(compiled), rtol=1e-12)
