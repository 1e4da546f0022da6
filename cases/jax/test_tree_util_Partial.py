"""jax.tree_util.Partial: a functools.partial that is a pytree, so it passes through jit/vmap; calls,
flattening,
nesting and equality."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("shape", [(), (0,), (7, 3), (512, 1024)], ids=str)
def test_partial_call_and_flatten(device, timed, dtype, shape):
    a = jnp.ones(shape, dtype)
    p = timed(tree_util.Partial, jnp.add, a)
    assert isinstance(p, tree_util.Partial) and p.func is jnp.add
    leaves, treedef = tree_util.tree_flatten(p)
    assert len(leaves) == 1 and leaves[0].shape == shape and leaves[0].dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(leaves[0], np.float64), np.ones(shape))
    # The bound argument itself is the leaf (no copy) when Partial is built outside any transformation.
    assert tree_util.tree_leaves(tree_util.Partial(jnp.add, a))[0] is a
    out = p(jnp.full(shape, 2, dtype))
    assert out.shape == shape and out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out, np.float64), np.full(shape, 3.0))
    rebuilt = tree_util.tree_unflatten(treedef, [a * 2])
    np.testing.assert_array_equal(
        np.asarray(rebuilt(jnp.zeros(shape, dtype)), np.float64), np.full(shape, 2.0)
    )


def test_partial_through_jit(device, timed):
    p = timed(tree_util.Partial, jnp.multiply, jnp.arange(4.0))

    @jax.jit
    def apply(fn, x):
        return fn(x)

    np.testing.assert_array_equal(np.asarray(apply(p, jnp.full(4, 3.0))), np.arange(4.0) * 3)


def test_partial_keywords_and_nesting(device, timed):
    def f(x, y, *, scale):
        return (x - y) * scale

    p = timed(tree_util.Partial, f, jnp.float64(10.0), scale=jnp.float64(2.0))
    # Nested outside the timed call: the outer Partial keeps the inner one (and its arrays) as static
    # aux data, so a nested Partial of traced values cannot be returned from jit.
    q = tree_util.Partial(p)
    assert float(q(4.0)) == 12.0
    assert len(tree_util.tree_leaves(p)) == 2


def test_partial_func_identity_and_vmap(device, timed):
    p = timed(tree_util.Partial, jnp.subtract, jnp.arange(3.0))
    assert p.func is jnp.subtract and isinstance(p, functools.partial)
    out = jax.vmap(lambda fn, y: fn(y), in_axes=(0, None))(p, jnp.float64(1.0))
    np.testing.assert_array_equal(np.asarray(out), np.arange(3.0) - 1.0)
