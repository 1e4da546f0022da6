"""jax.tree_util.tree_map: mapping a function over the leaves of one or several pytrees; None handling,
is_leaf,
structure mismatch errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "complex64"])
@pytest.mark.parametrize("shape", [(), (0,), (7, 3), (512, 1024)], ids=str)
def test_tree_map_two_trees(device, timed, dtype, shape):
    xs = {"a": jnp.ones(shape, dtype), "b": (jnp.full(shape, 2, dtype), [jnp.full(shape, 3, dtype)])}
    ys = {"a": jnp.full(shape, 10, dtype), "b": (jnp.full(shape, 20, dtype), [jnp.full(shape, 30, dtype)])}
    out = timed(tree_util.tree_map, lambda x, y: x + y, xs, ys)
    assert tree_util.tree_structure(out) == tree_util.tree_structure(xs)
    for leaf, expected in zip(tree_util.tree_leaves(out), [11, 22, 33]):
        assert leaf.shape == shape and leaf.dtype == jnp.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(leaf).astype(np.complex128), np.full(shape, expected))


def test_tree_map_single_tree_values(device, timed):
    tree = [jnp.arange(4.0), (jnp.linspace(0, 1, 3), {"k": jnp.float64(2.0)})]
    out = timed(tree_util.tree_map, jnp.square, tree)
    for got, src in zip(tree_util.tree_leaves(out), tree_util.tree_leaves(tree)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(src) ** 2)


def test_tree_map_none_is_empty_subtree(device, timed):
    tree = {"a": jnp.ones(2), "b": None}
    out = timed(tree_util.tree_map, lambda x: x * 3, tree)
    assert out["b"] is None
    np.testing.assert_array_equal(np.asarray(out["a"]), [3.0, 3.0])


def test_tree_map_is_leaf(device, timed):
    tree = [(jnp.ones(2), jnp.ones(2) * 2), (jnp.ones(2) * 3, jnp.ones(2) * 4)]
    out = timed(
        tree_util.tree_map, lambda pair: pair[0] * pair[1], tree, is_leaf=lambda n: isinstance(n, tuple)
    )
    np.testing.assert_array_equal(np.asarray(out[0]), [2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(out[1]), [12.0, 12.0])


def test_tree_map_structure_mismatch(device, timed):
    with pytest.raises(ValueError):
        timed(tree_util.tree_map, lambda x, y: x + y, [jnp.ones(1), jnp.ones(1)], [jnp.ones(1)])
