"""jax.lax.stop_gradient: identity in the forward pass for every dtype and shape; zero gradient in reverse and
forward mode; pytree inputs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "bool", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (), (7, 3), (1 << 18,)], ids=str)
def test_stop_gradient_is_identity(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    data = rng.uniform(-5, 5, shape)
    if dtype == "bool":
        data = data > 0
    x = jnp.asarray(data, dtype=dtype)
    out = timed(lax.stop_gradient, x)
    assert out.shape == shape and out.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_stop_gradient_blocks_grad(device, timed, dtype):
    x = jnp.asarray(np.linspace(-2, 2, 5), dtype=dtype)
    grad = timed(jax.grad(lambda v: jnp.sum(v * v + lax.stop_gradient(v) * v)), x)
    # d/dv [v^2 + c*v] with c = v held constant: 2v + v = 3v
    np.testing.assert_allclose(np.asarray(grad, np.float64), 3 * np.asarray(x, np.float64), rtol=1e-2)
    grad_only = jax.grad(lambda v: jnp.sum(lax.stop_gradient(v) ** 2))(x)
    assert not np.asarray(grad_only, np.float64).any()


def test_stop_gradient_forward_mode(device, timed):
    x = jnp.array([1.0, 2.0, 3.0])
    primal, tangent = timed(lambda v, t: jax.jvp(lax.stop_gradient, (v,), (t,)), x, jnp.ones(3))
    np.testing.assert_array_equal(np.asarray(primal), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(tangent), np.zeros(3))


def test_stop_gradient_pytree(device, timed):
    tree = {"a": jnp.arange(3.0), "b": (jnp.ones((2, 2)), jnp.int32(7))}
    out = timed(lax.stop_gradient, tree)
    np.testing.assert_array_equal(np.asarray(out["a"]), np.arange(3.0))
    np.testing.assert_array_equal(np.asarray(out["b"][0]), np.ones((2, 2)))
    assert int(out["b"][1]) == 7
