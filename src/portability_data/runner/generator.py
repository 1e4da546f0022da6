"""Framework-neutral census inputs: seeded NumPy arrays of named kinds, the same for every
framework, so one function name is measured on the same inputs in JAX, PyTorch and TensorFlow.

The kinds are chosen to separate devices rather than to exercise one function's semantics:
empty and 0-d arrays (shape corner cases), odd sizes (no vector-width multiple), a square matrix
(linear algebra), broadcasting operands, one array of ~1e6 elements (larger than the caches:
another code path on most devices) and the dtype's edge values (NaN, +/-inf, -0.0, denormals,
extremes), which devices flush, saturate or order differently. Given (function, dtype, kind,
seed) the arrays are always the same: the seed is derived from the four by a stable hash.

NumPy (and ml_dtypes for bfloat16, which JAX ships) only: the runner's bare layer imports it on
a device machine that has nothing else.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

DTYPES = (
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "bool",
)
# Most device-separating first: compiled mode runs only the first few (params census.compiled).
KINDS = ("edge", "scalar", "empty", "odd_vector", "odd_matrix", "square", "broadcast", "large")
# One shape per operand for each kind (the same shape for every operand but in `broadcast`).
SHAPES: dict[str, tuple[tuple[int, ...], ...]] = {
    "empty": ((0,),),
    "scalar": ((),),
    "odd_vector": ((7,),),
    "odd_matrix": ((3, 5),),
    "square": ((5, 5),),
    "broadcast": ((3, 1), (1, 5), (3, 5)),
    "large": ((1001, 999),),  # 999,999 elements: past the caches, odd in both axes
}
MAX_ARITY = 3


class GeneratorError(ValueError):
    """An unknown dtype, kind or arity was asked for."""


@dataclass(frozen=True)
class Sample:
    """One input of the census: what it is (its kind, for the row) and the positional arrays."""

    kind: str
    dtype: str
    args: tuple[np.ndarray, ...]

    def describe(self) -> str:
        """kind and shapes, e.g. `broadcast (3, 1) x (1, 5) float32`: what ran, in words."""
        return f"{self.kind} {' x '.join(str(a.shape) for a in self.args)} {self.dtype}"


def numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of a census dtype name (bfloat16 from ml_dtypes)."""
    if name not in DTYPES:
        raise GeneratorError(f"unknown dtype {name!r}; use one of {', '.join(DTYPES)}")
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def _rng(function: str, dtype: str, kind: str, seed: int) -> np.random.Generator:
    """A generator seeded by the four names (stable across processes, unlike hash())."""
    digest = hashlib.sha256(f"{function}\0{dtype}\0{kind}\0{seed}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _finfo(dtype: np.dtype) -> Any:
    if dtype.name == "bfloat16":
        import ml_dtypes

        return ml_dtypes.finfo(dtype)
    return np.finfo(dtype)


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Values in a range every dtype holds exactly enough: floats in [-3, 3], signed integers in
    [-9, 9], unsigned in [0, 18] (no overflow from the inputs themselves)."""
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "u":
        return rng.integers(0, 19, size=shape).astype(dtype)
    if dtype.kind == "i":
        return rng.integers(-9, 10, size=shape).astype(dtype)
    if dtype.kind == "c":
        parts = rng.uniform(-3, 3, size=(2, *shape))
        return (parts[0] + 1j * parts[1]).astype(dtype)
    return rng.uniform(-3, 3, size=shape).astype(dtype)


def edge_values(dtype_name: str) -> np.ndarray:
    """The dtype's edge values, 1-D: NaN, infinities, signed zeros, denormals, extremes (floats;
    complex: their combinations as real and imaginary parts), the bounds (integers), both (bool)."""
    dtype = numpy_dtype(dtype_name)
    if dtype.kind == "b":
        return np.array([False, True])
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = {info.min, info.min + 1, 0, 1, 2, info.max - 1, info.max}
        if dtype.kind == "i":
            values |= {-1, -2}
        return np.array(sorted(values), dtype=dtype)
    if dtype.kind == "c":
        part_dtype = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        info = np.finfo(part_dtype)
        parts = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, info.smallest_subnormal])
        real, imag = np.meshgrid(parts, parts, indexing="ij")
        values = np.empty(real.size, dtype=dtype)  # set apart: 1j * inf would make the real part NaN
        values.real, values.imag = real.ravel(), imag.ravel()
        return values
    info = _finfo(dtype)
    tiny, sub, big = float(info.tiny), float(info.smallest_subnormal), float(info.max)
    values = [np.nan, np.inf, -np.inf, -0.0, 0.0, sub, -sub, tiny, -tiny, big, -big, 1.0, -1.0, 0.5]
    return np.array(values, dtype=np.float64).astype(dtype)


def sample(function: str, dtype: str, kind: str, arity: int = 1, seed: int = 0) -> Sample:
    """The input of one kind for `function` on `dtype`, with `arity` operands."""
    np_dtype = numpy_dtype(dtype)
    if kind not in KINDS:
        raise GeneratorError(f"unknown input kind {kind!r}; use one of {', '.join(KINDS)}")
    if not 1 <= arity <= MAX_ARITY:
        raise GeneratorError(f"arity {arity} outside 1..{MAX_ARITY}")
    rng = _rng(function, dtype, kind, seed)
    if kind == "edge":
        values = edge_values(dtype)
        if arity == 1:
            return Sample(kind, dtype, (values,))
        # every pair of edge values (the third operand, if any: the first reversed)
        first, second = (grid.ravel() for grid in np.meshgrid(values, values, indexing="ij"))
        args = (first, second, first[::-1].copy())[:arity]
        return Sample(kind, dtype, tuple(args))
    if kind == "broadcast" and arity == 1:
        raise GeneratorError("the broadcast kind needs two operands or more")
    shapes = SHAPES[kind] if kind == "broadcast" else SHAPES[kind] * arity
    return Sample(kind, dtype, tuple(_random(rng, shape, np_dtype) for shape in shapes[:arity]))


def kinds_for(arity: int) -> tuple[str, ...]:
    """The kinds that exist for `arity` operands (broadcasting needs two)."""
    return tuple(k for k in KINDS if arity > 1 or k != "broadcast")


def samples(
    function: str, dtype: str, arity: int = 1, kinds: tuple[str, ...] | list[str] | None = None, seed: int = 0
) -> list[Sample]:
    """The census inputs of `function` on `dtype`: one sample per kind (all that exist for the
    arity unless named), in the order given."""
    return [sample(function, dtype, kind, arity, seed) for kind in kinds or kinds_for(arity)]
