"""The census oracle: how far a framework's result is from what it is compared with (a NumPy
reference, eager, the CPU), under the per-dtype tolerance policy of params.yaml, for every
framework alike (torch tensors, JAX and TensorFlow arrays, NumPy).

Shared by the census modules (cases/<framework>/census/), so one function name is judged the
same way in every framework. NumPy only at import (a bare device machine has it); a framework's
arrays are read through their own conversion when one is handed in. Its bytes are part of every
census case's digest (runner/provenance.py): a changed oracle supersedes the census runs.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

EXACT = {"atol": 0.0, "rtol": 0.0}


class ValuesOffOracle(AssertionError):
    """A sample whose values left the tolerance (or whose shape or structure differs)."""


class _NoOracle:
    """Nothing can judge the sample (no reference, or the reference cannot take it)."""

    def __repr__(self) -> str:
        return "NO_ORACLE"


NO_ORACLE = _NoOracle()


def leaves(value: Any) -> list[Any]:
    """Nested lists, tuples (named ones too) and dicts flattened in a stable order."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in leaves(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in leaves(value[key])]
    return [value]


def _is_torch(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def dtype_of(value: Any) -> str:
    """The dtype name whose tolerance applies to an output: the output's own (erfcx of an int16
    input is float32): torch.float32 -> float32, tf.float32 -> float32, NumPy's name otherwise."""
    if _is_torch(value):
        return str(value.dtype).removeprefix("torch.")
    dtype = getattr(value, "dtype", None)
    name = getattr(dtype, "name", None)
    if isinstance(name, str):
        return name
    return str(np.asarray(value).dtype)


def as_array(value: Any) -> np.ndarray:
    """An output as a host NumPy array: floating types as float64, complex as complex128."""
    if _is_torch(value):
        import torch

        value = value.detach().to("cpu")
        if value.is_sparse or value.layout != torch.strided:
            value = value.to_dense()
        if value.is_complex():
            value = value.to(torch.complex128)
        elif value.dtype.is_floating_point:
            value = value.to(torch.float64)
        value = value.resolve_conj().resolve_neg().numpy()
    elif hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()  # TensorFlow eager tensors
    array = np.asarray(value)
    if array.dtype.kind == "c":
        return array.astype(np.complex128)
    if array.dtype.kind == "f" or array.dtype.name == "bfloat16":
        return array.astype(np.float64)
    return array


def tolerance_for(actual: Any, expected: Any, tolerances: dict[str, dict[str, float]]) -> dict[str, float]:
    """The tolerance of the less precise of the two dtypes (the larger atol and rtol), as
    torch.testing.assert_close picks it: NumPy computes some references in a narrower dtype than
    the framework (np.arccos of int8 is float16, torch's float32), and the reference's precision
    bounds what can be asserted. Exact only when both dtypes are exact (integers, bool)."""
    own = tolerances.get(dtype_of(actual), EXACT)
    theirs = tolerances.get(dtype_of(expected), EXACT)
    return {"atol": max(own["atol"], theirs["atol"]), "rtol": max(own["rtol"], theirs["rtol"])}


def _wrapped(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """An integer reference of a wider type brought into the output's integer type, wrapping as
    fixed-width arithmetic does (torch's int8 addbmm wraps, NumPy's reference computed in int64
    does not): sums and products modulo 2**bits are the same whichever step wraps."""
    if (
        actual.dtype.kind in "iu"
        and expected.dtype.kind in "iu"
        and expected.dtype.itemsize > actual.dtype.itemsize
    ):
        return expected.astype(actual.dtype)
    return expected


def deviation(
    actual: Any, expected: Any, tolerances: dict[str, dict[str, float]]
) -> tuple[float, float, str | None]:
    """(max abs error, max rel error, what is off or None) of `actual` against `expected`, with the
    tolerance of the less precise of each output's and its reference's dtype (tolerance_for).
    NaN matches NaN, equal infinities match; a NaN where a number is due is an infinite error.
    The relative error divides by |expected| but never by less than the tolerance's atol (1 for
    exact dtypes): where the reference is ~0 it reads as error / atol instead of exploding."""
    got, want = leaves(actual), leaves(expected)
    if len(got) != len(want):
        return 0.0, 0.0, f"{len(got)} outputs, the oracle has {len(want)}"
    worst_abs = worst_rel = 0.0
    problem = None
    for a_value, b_value in zip(got, want):
        if a_value is None or b_value is None:
            if (a_value is None) != (b_value is None):
                problem = problem or "an output is None where the oracle's is not"
            continue
        tolerance = tolerance_for(a_value, b_value, tolerances)
        a, b = as_array(a_value), as_array(b_value)
        if a.shape != b.shape:
            problem = problem or f"shape {a.shape}, the oracle's {b.shape}"
            continue
        if a.size == 0:
            continue
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            kind = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
            a, b = a.astype(kind), b.astype(kind)
            same = (a == b) | (np.isnan(a) & np.isnan(b))
            with np.errstate(invalid="ignore", over="ignore"):
                diff = np.where(same, 0.0, np.abs(a - b))
            diff = np.where(np.isnan(diff), np.inf, diff)
            scale = np.abs(np.where(np.isnan(b), 0, b))
        else:
            b = _wrapped(a, b)
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            scale = np.abs(b.astype(np.float64))
        bad = diff > tolerance["atol"] + tolerance["rtol"] * scale
        worst_abs = max(worst_abs, float(diff.max()))
        floor = tolerance["atol"] or 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(diff == 0, 0.0, diff / np.maximum(scale, floor))
        worst_rel = max(worst_rel, float(rel.max()))
        if bad.any() and problem is None:
            where = int(np.flatnonzero(bad.ravel())[0])
            problem = (
                f"{int(bad.sum())} of {bad.size} values off the oracle ({dtype_of(a_value)} against "
                f"{dtype_of(b_value)}: atol {tolerance['atol']:g}, rtol {tolerance['rtol']:g}); first "
                f"at flat index {where}: {a.ravel()[where].item()!r} vs {b.ravel()[where].item()!r}"
            )
    return worst_abs, worst_rel, problem


def kept(value: float) -> float:
    """A deviation as the results table keeps it: NaN becomes inf (never NaN)."""
    return math.inf if math.isnan(value) else value


class Judgement:
    """The samples of one census subtest: counted, judged, the first error kept to re-raise."""

    def __init__(self, tolerances: dict[str, dict[str, float]]) -> None:
        self.tolerances = tolerances
        self.samples = self.failed = self.compared = 0
        self.worst_abs = self.worst_rel = 0.0
        self.first_error: BaseException | None = None

    def judge(self, actual: Any, expected: Any, label: str | None = None) -> None:
        """Compare one sample's result (no-op without an oracle); raises ValuesOffOracle if off,
        its message led by the sample's label when there is one."""
        if expected is NO_ORACLE:
            return
        abs_error, rel_error, problem = deviation(actual, expected, self.tolerances)
        self.compared += 1
        self.worst_abs, self.worst_rel = max(self.worst_abs, abs_error), max(self.worst_rel, rel_error)
        if problem:
            raise ValuesOffOracle(f"{label}: {problem}" if label else problem)

    def run(
        self,
        samples: list[Any],
        run_one: Callable[[Any], tuple[Any, Any]],
        label: Callable[[Any], str] | None = None,
    ) -> None:
        """The loop every census module runs: each sample through `run_one` (which calls the
        function under test through `timed` and returns (result, what it is compared with)),
        judged; a sample that raises or leaves the tolerance is counted and the first error kept.
        With `label`, an error carries the sample's label (which input it was): in a values-off
        message, or as a note on the framework's own exception."""
        self.samples = len(samples)
        for sample in samples:
            named = label(sample) if label else None
            try:
                actual, expected = run_one(sample)
                self.judge(actual, expected, named)
            except Exception as error:  # the function raised, or its values left the tolerance
                if named and not isinstance(error, ValuesOffOracle):
                    error.add_note(named)
                self.failed_with(error)

    def failed_with(self, error: BaseException) -> None:
        self.failed += 1
        self.first_error = self.first_error or error

    def record(self, record_property: Any, oracle: str) -> None:
        """Report the measures (harness.MEASURES) and re-raise the first error as itself, so the
        failure rules read the framework's own exception."""
        record_property("oracle", oracle if self.compared else "none")
        record_property("samples", self.samples)
        record_property("samples_failed", self.failed)
        record_property("max_abs_error", kept(self.worst_abs) if self.compared else None)
        record_property("max_rel_error", kept(self.worst_rel) if self.compared else None)
        if self.first_error is not None:
            raise self.first_error
