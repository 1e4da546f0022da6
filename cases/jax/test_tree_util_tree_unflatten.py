"""jax.tree_util.tree_unflatten: rebuilding pytrees (containers, None, namedtuples, registered classes) from a
treedef and leaves; round trips with tree_flatten; leaf-count errors."""

import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

jax.config.update("jax_enable_x64", True)

Point = collections.namedtuple("Point", ["x", "y"])


@tree_util.register_pytree_node_class
class Box:
    def __init__(self, value, label):
        self.value, self.label = value, label

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)


TREES = {
    "flat_list": lambda a: [a, a + 1, a + 2],
    "nested": lambda a: {"w": (a, [a * 2, None]), "b": {"c": a - 1}},
    "namedtuple": lambda a: Point(a, (a, a)),
    "custom": lambda a: [Box(a, "first"), Box(a * 3, "second")],
    "empty": lambda a: ((), {}, []),
    "leaf": lambda a: a,
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("shape", [(), (0,), (7, 3), (512, 1024)], ids=str)
@pytest.mark.parametrize("kind", list(TREES))
def test_tree_unflatten_round_trip(device, timed, kind, dtype, shape):
    tree = TREES[kind](jnp.ones(shape, dtype))
    leaves, treedef = tree_util.tree_flatten(tree)
    new_leaves = [leaf * 0 + i for i, leaf in enumerate(leaves)]
    rebuilt = timed(tree_util.tree_unflatten, treedef, new_leaves)
    assert tree_util.tree_structure(rebuilt) == treedef
    for i, leaf in enumerate(tree_util.tree_leaves(rebuilt)):
        assert leaf.shape == shape and leaf.dtype == jnp.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(leaf, np.float64), np.full(shape, float(i)))


def test_tree_unflatten_custom_aux_data(device, timed):
    _, treedef = tree_util.tree_flatten(Box(jnp.arange(3), "tag"))
    out = timed(tree_util.tree_unflatten, treedef, [jnp.arange(3) * 5])
    assert isinstance(out, Box) and out.label == "tag"
    np.testing.assert_array_equal(np.asarray(out.value), [0, 5, 10])


def test_tree_unflatten_arbitrary_objects(device, timed):
    _, treedef = tree_util.tree_flatten({"a": 1, "b": (2, 3)})
    # Not routed: the leaves are Python strings, which no jax.jit can return (only array leaves can).
    with timed.region() as region:
        out = tree_util.tree_unflatten(treedef, ["x", "y", "z"])
        region.result = None
    assert out == {"a": "x", "b": ("y", "z")}


@pytest.mark.parametrize("count", [1, 3])
def test_tree_unflatten_wrong_leaf_count(device, timed, count):
    _, treedef = tree_util.tree_flatten([1, (2,)])
    with pytest.raises(ValueError):
        timed(tree_util.tree_unflatten, treedef, list(range(count)))
