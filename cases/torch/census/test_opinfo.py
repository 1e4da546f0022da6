"""The PyTorch census: every OpInfo entry of the installed wheel on its own sample inputs, one
subtest per entry x dtype, through the same harness as the curated cases (`device`, `timed`).

What runs comes from `opinfo.yaml` beside this file (harvested from the wheel by
`portability census-harvest`: the entries, the public function each tests, every dtype the entry
knows of on any device, the per-dtype tolerance policy of params.yaml). Every dtype runs on every
device, declared supported there or not: "declared unsupported but works" and "declared supported
but fails" are findings.

Per sample (seeded: torch.manual_seed(0) before the generator): the function under test is called
through `timed` (warm-up, then the timed call, routed through the mode). The oracle:
- eager: the entry's NumPy reference (`op.ref` on `sample.numpy()`) where it has one, else none
  (the sample passes if the op runs);
- compiled: the eager result of the same function on a fresh copy of the same sample.
A sample fails when the op raises, or when its values leave the dtype's tolerance
(|actual - expected| <= atol + rtol * |expected| with the tolerance of the output's dtype, NaN
matching NaN; dtypes themselves are not compared, as test_numpy_ref does not).
The subtest reports its oracle, samples, samples failed and the largest absolute and relative
deviations over the samples compared (`record_property`, kept as results columns), and fails if any
sample failed, re-raising the first error as itself so the failure rules read the framework's own
exception. Where upstream tests the same: test/test_ops.py (TestCommon.test_numpy_ref,
test_compare_cpu), test/inductor/test_torchinductor_opinfo.py (compiled vs eager).
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import yaml

MANIFEST = Path(__file__).with_name("opinfo.yaml")
TEST_NAME = "test_entry"


@cache
def manifest() -> dict[str, Any]:
    """The harvested entries and tolerances (read once per worker process)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(MANIFEST.read_text(encoding="utf-8"), Loader=loader)


@cache
def ops_by_entry() -> dict[str, Any]:
    """entry id -> OpInfo, from the wheel's database (imported once per worker: ~7 s)."""
    from torch.testing._internal.common_methods_invocations import op_db

    return {(f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name): op for op in op_db}


def pair_id(entry: str, dtype: str) -> str:
    return f"{entry}-{dtype}"


def all_pairs() -> list[tuple[str, str]]:
    return [(e["entry"], dtype) for e in manifest()["entries"] for dtype in e["dtypes"]]


def requested_pairs(args: list[str]) -> set[str] | None:
    """The pair ids named by node ids on the command line (the runner sends one entry's); None
    when the module is run whole. Generating only those keeps a request from building 6,000 items."""
    marker = f"::{TEST_NAME}["
    found = {arg.split(marker, 1)[1].rstrip("]") for arg in args if marker in arg}
    return found or None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "census_pair" not in metafunc.fixturenames:
        return
    wanted = requested_pairs(list(metafunc.config.args))
    pairs = [p for p in all_pairs() if wanted is None or pair_id(*p) in wanted]
    metafunc.parametrize("census_pair", pairs, ids=[pair_id(*p) for p in pairs])


# --------------------------------------------------------------------------- values


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in _leaves(value[key])]
    return [value]


def _as_array(value: Any) -> np.ndarray:
    """A result leaf as a float64/complex128 (or bool/int) NumPy array on the host."""
    if isinstance(value, torch.Tensor):
        value = value.detach().to("cpu")
        if value.is_sparse or value.layout != torch.strided:
            value = value.to_dense()
        if value.dtype in (torch.bfloat16, torch.float16) or value.dtype.is_floating_point:
            value = value.to(torch.float64)
        elif value.is_complex():
            value = value.to(torch.complex128)
        value = value.resolve_conj().resolve_neg().numpy()
    array = np.asarray(value)
    if array.dtype.kind in "fc":
        return array.astype(np.complex128 if array.dtype.kind == "c" else np.float64)
    return array


class ValuesOffOracle(AssertionError):
    """A sample whose values left the tolerance (or whose shape or structure differs)."""


def _dtype_of(value: Any) -> str:
    """The dtype name whose tolerance applies to an output leaf: the op's output dtype (erfcx of an
    int16 input is float32), NumPy's for non-tensor leaves."""
    if isinstance(value, torch.Tensor):
        return str(value.dtype).removeprefix("torch.")
    return str(np.asarray(value).dtype)


def deviation(
    actual: Any, expected: Any, tolerances: dict[str, dict[str, float]]
) -> tuple[float, float, str | None]:
    """(max abs error, max rel error, what is off or None) of `actual` against `expected`, with the
    tolerance of each output's own dtype (exact for integers and bool)."""
    got, want = _leaves(actual), _leaves(expected)
    if len(got) != len(want):
        return 0.0, 0.0, f"{len(got)} outputs, the oracle has {len(want)}"
    worst_abs = worst_rel = 0.0
    problem = None
    for a_value, b_value in zip(got, want):
        if a_value is None or b_value is None:
            if (a_value is None) != (b_value is None):
                problem = problem or "an output is None where the oracle's is not"
            continue
        tolerance = tolerances.get(_dtype_of(a_value), {"atol": 0.0, "rtol": 0.0})
        a, b = _as_array(a_value), _as_array(b_value)
        if a.shape != b.shape:
            problem = problem or f"shape {a.shape}, the oracle's {b.shape}"
            continue
        if a.size == 0:
            continue
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            kind = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
            a, b = a.astype(kind), b.astype(kind)
            same = (a == b) | (np.isnan(a) & np.isnan(b))  # equal infinities and NaN against NaN
            with np.errstate(invalid="ignore", over="ignore"):
                diff = np.where(same, 0.0, np.abs(a - b))
            diff = np.where(np.isnan(diff), np.inf, diff)
            scale = np.abs(np.where(np.isnan(b), 0, b))
        else:
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
            scale = np.abs(b.astype(np.float64))
        bad = diff > tolerance["atol"] + tolerance["rtol"] * scale
        worst_abs = max(worst_abs, float(diff.max()))
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(diff == 0, 0.0, diff / np.maximum(scale, np.finfo(np.float64).tiny))
        worst_rel = max(worst_rel, float(rel.max()))
        if bad.any() and problem is None:
            where = int(np.flatnonzero(bad.ravel())[0])
            problem = (
                f"{int(bad.sum())} of {bad.size} values off the oracle ({_dtype_of(a_value)}: atol "
                f"{tolerance['atol']:g}, rtol {tolerance['rtol']:g}); first at flat index {where}: "
                f"{a.ravel()[where].item()!r} vs {b.ravel()[where].item()!r}"
            )
    return worst_abs, worst_rel, problem


def _finite(value: float) -> float:
    """A deviation as the table keeps it: inf stays inf (NaN against a number), never NaN."""
    return math.inf if math.isnan(value) else value


# --------------------------------------------------------------------------- the test


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    entry, dtype_name = census_pair
    op = ops_by_entry()[entry]
    dtype = getattr(torch, dtype_name)
    tolerances = manifest()["tolerances"]
    compiled = timed.mode == "compiled"
    oracle = "eager" if compiled else ("reference" if op.ref is not None else "none")
    torch.manual_seed(0)
    samples = list(op.sample_inputs(device, dtype, requires_grad=False))
    if compiled:  # compiling every sample costs ~0.5 s: params.yaml census.compiled caps the samples
        samples = samples[: manifest()["compiled"]["max_samples"]]
    failed, compared, first_error = 0, 0, None
    worst_abs = worst_rel = 0.0
    for sample in samples:
        pristine = _copy(sample)
        try:
            actual = timed(op.op, sample.input, *sample.args, **sample.kwargs)
            expected = _expected(op, pristine, oracle, tolerances)
            if expected is not _NO_ORACLE:
                abs_error, rel_error, problem = deviation(actual, expected, tolerances)
                compared += 1
                worst_abs, worst_rel = max(worst_abs, abs_error), max(worst_rel, rel_error)
                if problem:
                    raise ValuesOffOracle(problem)
        except Exception as error:  # the op raised, or its values left the tolerance
            failed += 1
            first_error = first_error or error
    record_property("oracle", oracle if compared else "none")
    record_property("samples", len(samples))
    record_property("samples_failed", failed)
    record_property("max_abs_error", _finite(worst_abs) if compared else None)
    record_property("max_rel_error", _finite(worst_rel) if compared else None)
    if first_error is not None:
        raise first_error


def _copy(sample: Any) -> Any:
    """The sample with every tensor cloned: the oracle must see the inputs as they were."""
    return sample.transform(lambda t: t.clone() if isinstance(t, torch.Tensor) else t)


class _NoOracle:
    pass


_NO_ORACLE = _NoOracle()


def _expected(op: Any, sample: Any, oracle: str, tolerances: dict[str, dict[str, float]]) -> Any:
    """What the sample's result is compared with; _NO_ORACLE when nothing can judge it: no
    reference, a reference that cannot take the sample (NumPy has no bfloat16), or, against eager,
    an op whose eager result changes with the random seed (dropout, normal, ...)."""
    if oracle == "eager":
        results = []
        for seed in (0, 1):
            args, kwargs = _call_args(_copy(sample))
            torch.manual_seed(seed)
            results.append(op.op(*args, **kwargs))
        if deviation(results[0], results[1], tolerances)[2] is not None:
            return _NO_ORACLE
        return results[0]
    if oracle == "reference":
        try:
            host = sample.numpy()  # the same sample with NumPy arrays in place of tensors
            return op.ref(host.input, *host.args, **host.kwargs)
        except Exception:
            return _NO_ORACLE
    return _NO_ORACLE


def _call_args(sample: Any) -> tuple[tuple, dict]:
    return (sample.input, *sample.args), sample.kwargs
