"""jax.tree.map: a function mapped over the leaves of nested containers of arrays, against the same
function applied leaf by leaf in NumPy, per dtype and leaf size; several trees at once, None as an
empty subtree, is_leaf, an empty tree; the refusal of trees whose structures differ."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

jax.config.update("jax_enable_x64", True)

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int8", "uint8", "bool"]
SIZES = [0, 1, 7, 1 << 18]


def nested(arrays):
    """Three leaves in a dict holding a list and a tuple."""
    return {"weights": [arrays[0], arrays[1]], "bias": (arrays[2],)}


def leaves_of(tree):
    return [tree["weights"][0], tree["weights"][1], tree["bias"][0]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", SIZES)
def test_tree_map_applies_the_function_to_every_leaf(device, timed, dtype, size):
    rng = np.random.default_rng(0)
    host = [rng.integers(0, 5, size).astype(dtype) for _ in range(3)]
    tree = nested([jnp.asarray(a) for a in host])
    out = timed(lambda t: jax.tree.map(lambda leaf: leaf * 2 if leaf.dtype != bool else ~leaf, t), tree)
    assert jax.tree.structure(out) == jax.tree.structure(tree)
    for got, want in zip(leaves_of(out), host, strict=True):
        expected = ~want if want.dtype == bool else want * want.dtype.type(2)
        assert got.dtype == jnp.dtype(dtype) and got.shape == (size,)
        np.testing.assert_array_equal(np.asarray(got), expected)


def test_tree_map_over_two_trees(device, timed):
    first = nested([jnp.arange(3.0), jnp.ones((2, 2)), jnp.asarray(5.0)])
    second = nested([jnp.full(3, 0.5), jnp.eye(2), jnp.asarray(-1.0)])
    out = timed(lambda a, b: jax.tree.map(jnp.subtract, a, b), first, second)
    np.testing.assert_array_equal(np.asarray(out["weights"][0]), [-0.5, 0.5, 1.5])
    np.testing.assert_array_equal(np.asarray(out["weights"][1]), [[0.0, 1.0], [1.0, 0.0]])
    assert float(out["bias"][0]) == 6.0


def test_tree_map_keeps_none_as_an_empty_subtree(device, timed):
    tree = {"a": jnp.asarray([1.0, -2.0]), "b": None, "c": [None, jnp.asarray(3.0)]}
    out = timed(lambda t: jax.tree.map(jnp.abs, t), tree)
    assert out["b"] is None and out["c"][0] is None
    np.testing.assert_array_equal(np.asarray(out["a"]), [1.0, 2.0])
    assert float(out["c"][1]) == 3.0


def test_tree_map_with_is_leaf(device, timed):
    tree = {"pair": (jnp.asarray(2.0), jnp.asarray(3.0)), "single": (jnp.asarray(4.0),)}

    def product(t):
        return jax.tree.map(lambda pair: pair[0] * pair[-1], t, is_leaf=lambda node: isinstance(node, tuple))

    out = timed(product, tree)
    assert float(out["pair"]) == 6.0 and float(out["single"]) == 16.0


def test_tree_map_keeps_nan_inf_and_signed_zero(device, timed):
    tree = [jnp.asarray(np.array([np.nan, np.inf, -0.0], dtype=np.float32))]
    out = np.asarray(timed(lambda t: jax.tree.map(jnp.negative, t), tree)[0])
    assert np.isnan(out[0]) and out[1] == -np.inf and out[2] == 0.0 and not np.signbit(out[2])


def test_tree_map_over_an_empty_tree(device, timed):
    out = timed(lambda t: jax.tree.map(jnp.sin, t), {"nothing": [], "empty": ()})
    assert out == {"nothing": [], "empty": ()}


def test_tree_map_refuses_trees_of_different_structure(device, timed):
    with pytest.raises(ValueError):
        timed(lambda a, b: jax.tree.map(jnp.add, a, b), [jnp.ones(2), jnp.ones(2)], [jnp.ones(2)])
