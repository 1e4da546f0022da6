"""How the JAX export paths (onnxruntime's jax2onnx, iree's jax.export) hand a function's arrays to
a model and take its results back. Not a path (no PATH): a path module that imports it has these
bytes in its harness digest.

- An array goes in as jax.jit takes it in this x64 mode (without x64 a float64 NumPy array runs as
  float32), so the model is typed as the function's own jit would be.
- A PRNG key array (`jax.random.key`, dtype key<fry>) goes in and comes out as its key data (uint32),
  wrapped back into a key of the same implementation on each side: a model's tensors have no key
  type, and jax.export lowers a key argument to its data the same way (its StableHLO `main` takes
  tensor<2xui32>). Until 2026-12-07 the harness typed a key array as a plain dtype and raised before
  anything was exported (66 subtests of JAX's curated cases on onnxruntime; rule
  harness_jax_key_dtype_canonicalized reads those rows).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def is_key(jax: Any, dtype: Any) -> bool:
    """Whether a dtype is a PRNG key type (key<fry>, key<rbg>, ...)."""
    return bool(jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key))


def jit_dtype(jax: Any, dtype: Any) -> Any:
    """The dtype jax.jit gives an array of `dtype` in this x64 mode (a key type stays itself)."""
    return jax.dtypes.canonicalize_dtype(dtype, allow_extended_dtype=True)


class KeyedFunction:
    """A function over the flat leaves of its arguments, with every key array as its key data on
    both sides, so that an exporter sees plain arrays only. `out_keys` (the implementation of each
    result leaf that is a key, else None) is filled when the function is traced."""

    def __init__(self, jax: Any, fn: Callable[..., Any], leaves: list[Any], tree: Any) -> None:
        self.jax, self.fn, self.tree = jax, fn, tree
        self.in_keys = [jax.random.key_impl(a) if is_key(jax, a.dtype) else None for a in leaves]
        self.out_keys: list[Any] = []

    def __call__(self, *values: Any) -> Any:
        jax = self.jax
        args = [v if k is None else jax.random.wrap_key_data(v, impl=k) for v, k in zip(values, self.in_keys)]
        called = self.fn(*jax.tree_util.tree_unflatten(self.tree, args))
        results, out_tree = jax.tree_util.tree_flatten(called)
        self.out_keys = [jax.random.key_impl(r) if is_key(jax, r.dtype) else None for r in results]
        plain = [r if impl is None else jax.random.key_data(r) for r, impl in zip(results, self.out_keys)]
        return jax.tree_util.tree_unflatten(out_tree, plain)

    def specs(self, leaves: list[Any]) -> list[Any]:
        """The model's input types: each leaf as jax.jit takes it, a key as its data's."""
        jax = self.jax
        return [
            jax.ShapeDtypeStruct(a.shape, jit_dtype(jax, a.dtype))
            if impl is None
            else jax.eval_shape(jax.random.key_data, a)
            for a, impl in zip(leaves, self.in_keys)
        ]

    def feeds(self, leaves: list[Any]) -> list[Any]:
        """The leaves as NumPy arrays of the model's input types."""
        import numpy as np

        jax = self.jax
        return [
            np.asarray(a, jit_dtype(jax, a.dtype)) if impl is None else np.asarray(jax.random.key_data(a))
            for a, impl in zip(leaves, self.in_keys)
        ]

    def results(self, outputs: list[Any]) -> list[Any]:
        """The model's flat outputs (JAX arrays), a key's data wrapped back into its key."""
        jax = self.jax
        keys = self.out_keys or [None] * len(outputs)
        return [o if k is None else jax.random.wrap_key_data(o, impl=k) for o, k in zip(outputs, keys)]
