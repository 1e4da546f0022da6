"""PyTorch's census manifests (cases/torch/census/<source>.yaml, frameworks/manifest.py): what the
census runs, harvested from the installed wheel's own test databases (OpInfo, ModuleInfo, OptimizerInfo;
the NumPy namesakes its OpInfo declares are namesakes.py's).

For PyTorch's OpInfo database (op_db): one entry per OpInfo entry, with the public function it
tests (the declared table's mapping: entries.opinfo_function), every dtype it knows of on
any device type (cpu and cuda lists are readable without a GPU), the dtypes declared supported on
cpu, whether it has a NumPy reference, and the per-dtype tolerance policy of params.yaml. Entries
that map to no public function are listed apart with the reason (counted, never dropped). The
runner reads the manifest with PyYAML only (runner/census_rows.py), so a bare device machine needs
neither pandas nor this module.
"""

from __future__ import annotations

import collections
import re
from typing import Any

import pandas as pd

from portability_data.pipeline.api_names import public_names
from portability_data.pipeline.frameworks.manifest import HarvestError, manifest_document
from portability_data.pipeline.frameworks.torch import namesakes
from portability_data.pipeline.frameworks.torch.databases import opinfo_refs, read_decorator
from portability_data.pipeline.frameworks.torch.entries import class_function, dtype_name
from portability_data.runner.census_rows import census_case_id, entry_id

OPINFO_SOURCE = "torch.testing._internal.common_methods_invocations.op_db"
MODULE_SOURCE = "torch.testing._internal.common_modules.module_db"
OPTIMIZER_SOURCE = "torch.testing._internal.common_optimizers.optim_db"
DEVICE_TYPES = ("cpu", "cuda")  # whose dtype lists OpInfo answers without the device
# The upstream test that makes the comparison each census mode makes: PyTorch's own tolerance
# overrides for that test (toleranceOverride, precisionOverride on cpu) loosen the census's policy
# for the entry and dtype, as they loosen upstream's assertEqual (the larger atol and rtol win).
OPINFO_ORACLE_TESTS = {
    "eager": ("TestCommon", "test_numpy_ref"),  # the NumPy reference
    "compiled": ("TestInductorOpInfo", "test_comprehensive"),  # compiled vs eager
}
MODULE_ORACLE_TESTS = {"eager": ("TestModule", "test_forward")}  # the input's reference_fn
# The upstream tests that compare two executions of one op (device vs cpu, variants, composite
# compliance): an entry-wide skip of one of them whose reason says the values cannot be compared
# ("output is non-deterministic", "Expected: empty is not comparable", "undefined outputs") makes the
# census compare no two executions of the entry either (compiled vs eager: oracle none). PyTorch's
# bare "Skipped!" says nothing about the values and is not read so.
OPINFO_COMPARABLE_TESTS = (
    ("TestCommon", "test_compare_cpu"),
    ("TestCommon", "test_variant_consistency_eager"),
    ("TestCompositeCompliance", "test_operator"),
)
MODULE_COMPARABLE_TESTS = (("TestModule", "test_cpu_gpu_parity"),)
NOT_COMPARABLE = re.compile(r"not comparable|non-deterministic|undefined", re.IGNORECASE)


def opinfo_manifest(
    api: pd.DataFrame,
    tolerances: dict[str, dict[str, float]],
    compiled: dict[str, Any],
    eager_max_samples: int | None = None,
) -> dict[str, Any]:
    """The manifest of the installed torch's op_db; `compiled` is params.yaml's census.compiled
    (the dtypes and samples per entry compiled mode runs)."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    public = public_names(api, "torch", torch.__version__, HarvestError)
    found = [
        (
            entry_id(op.name, op.variant_test_name),
            ref.function,
            ref.unmapped_reason,
            op,
            {"has_reference": op.ref is not None},
        )
        for op, ref in zip(op_db, opinfo_refs(op_db, public), strict=True)
    ]
    oracle_tests = (OPINFO_ORACLE_TESTS, OPINFO_COMPARABLE_TESTS)
    return _manifest(
        "opinfo",
        OPINFO_SOURCE,
        found,
        tolerances,
        compiled,
        oracle_tests=oracle_tests,
        eager_max_samples=eager_max_samples,
    )


def module_manifest(
    api: pd.DataFrame,
    tolerances: dict[str, dict[str, float]],
    compiled: dict[str, Any],
    eager_max_samples: int | None = None,
) -> dict[str, Any]:
    """The manifest of the installed torch's module_db (torch.nn modules, ModuleInfo)."""
    import torch
    from torch.testing._internal.common_modules import module_db

    public = public_names(api, "torch", torch.__version__, HarvestError)
    found = []
    for info in module_db:
        candidates = [f"torch.{info.name}", f"torch.nn.{info.module_cls.__name__}"]
        function, unmapped = class_function(info.module_cls, candidates, public)
        found.append((info.name, function, unmapped, info, {}))
    oracle_tests = (MODULE_ORACLE_TESTS, MODULE_COMPARABLE_TESTS)
    return _manifest(
        "module",
        MODULE_SOURCE,
        found,
        tolerances,
        compiled,
        oracle_tests=oracle_tests,
        eager_max_samples=eager_max_samples,
    )


# OptimizerInfo declares no dtypes: the census runs the floating ones (complex where supported).
OPTIMIZER_DTYPES = ("bfloat16", "float16", "float32", "float64")


class _Undeclared:
    """An optimizer's dtypes as the census runs them, declared on no device (OptimizerInfo has none)."""

    def __init__(self, dtypes: list[Any]) -> None:
        self.dtypes = dtypes

    def supported_dtypes(self, device_type: str) -> list[Any]:
        return self.dtypes if device_type == "census" else []


def optimizer_manifest(
    api: pd.DataFrame,
    tolerances: dict[str, dict[str, float]],
    compiled: dict[str, Any],
    eager_max_samples: int | None = None,
) -> dict[str, Any]:
    """The manifest of the installed torch's optim_db (torch.optim, OptimizerInfo)."""
    import torch
    from torch.testing._internal.common_optimizers import optim_db

    public = public_names(api, "torch", torch.__version__, HarvestError)
    found = []
    for info in optim_db:
        name = info.optim_cls.__name__
        function, unmapped = class_function(info.optim_cls, [f"torch.optim.{name}"], public)
        dtypes = [getattr(torch, d) for d in OPTIMIZER_DTYPES] + (
            [torch.complex64] if info.supports_complex else []
        )
        found.append((name, function, unmapped, _Undeclared(dtypes), {}))
    return _manifest(
        "optimizer",
        OPTIMIZER_SOURCE,
        found,
        tolerances,
        compiled,
        ("census",),
        eager_max_samples=eager_max_samples,
    )


def _manifest(
    origin: str,
    source: str,
    found: list[tuple[str, str | None, str | None, Any, dict[str, Any]]],
    tolerances: dict[str, dict[str, float]],
    compiled: dict[str, Any],
    device_types: tuple[str, ...] = DEVICE_TYPES,
    oracle_tests: tuple[dict[str, tuple[str, str]], tuple[tuple[str, str], ...]] | None = None,
    eager_max_samples: int | None = None,
) -> dict[str, Any]:
    """A manifest from (entry, public function or None, why none, database item, extra fields):
    every dtype the item knows of on `device_types`, those declared on cpu, the policy; with
    `oracle_tests` (per mode the upstream test of the same comparison, and the test comparing two
    executions), what the item declares for the oracle (oracle_declarations)."""
    import torch

    entries, unmapped = [], []
    for name, function, unmapped_reason, item, extra in found:
        if function is None:
            unmapped.append({"entry": name, "reason": unmapped_reason})
            continue
        known = {dtype_name(d) for device in device_types for d in item.supported_dtypes(device)}
        cpu = {dtype_name(d) for d in item.supported_dtypes("cpu")}
        entries.append(
            {
                "entry": name,
                "case_id": census_case_id("torch", origin, name),
                "function": function,
                "dtypes": sorted(known),
                "declared_cpu": sorted(cpu),
                **extra,
                **(oracle_declarations(item, sorted(known), *oracle_tests) if oracle_tests else {}),
            }
        )
    return manifest_document(
        ("torch", str(torch.__version__), origin, source),
        entries,
        unmapped,
        tolerances,
        compiled,
        eager_max_samples=eager_max_samples,
    )


def oracle_declarations(
    item: Any,
    dtypes: list[str],
    tests: dict[str, tuple[str, str]],
    comparable_tests: tuple[tuple[str, str], ...],
) -> dict[str, Any]:
    """What a database item declares about judging its values, as manifest fields (none when it
    declares nothing): `oracle_declared.tolerance` (mode -> dtype -> the override's atol and rtol,
    active on cpu for the upstream test of that mode's comparison) and
    `oracle_declared.not_comparable` (the reason of an entry-wide skip of one of `comparable_tests`
    that says the values cannot be compared)."""
    import torch
    from torch.testing._internal import common_device_type as cdt

    tolerance: dict[str, dict[str, dict[str, float]]] = {}
    for mode, (test_class, test_name) in tests.items():
        for name in dtypes:
            dtype = getattr(torch, name)
            limits = [
                (float(d.d[dtype].atol), float(d.d[dtype].rtol))
                if isinstance(d, cdt.toleranceOverride)
                else (float(d.d[dtype]), 0.0)
                for d in _decorators_for(item, test_class, test_name, dtype)
                if isinstance(d, (cdt.toleranceOverride, cdt.precisionOverride)) and dtype in d.d
            ]
            if limits:
                atol, rtol = (max(column) for column in zip(*limits, strict=True))
                tolerance.setdefault(mode, {})[name] = {"atol": atol, "rtol": rtol}
    declared: dict[str, Any] = {"tolerance": tolerance} if tolerance else {}
    reason = _not_comparable(item, comparable_tests)
    if reason:
        declared["not_comparable"] = reason
    return {"oracle_declared": declared} if declared else {}


def _decorators_for(item: Any, test_class: str, test_name: str, dtype: Any) -> list[Any]:
    """The item's decorators active for one upstream test on cpu (DecorateInfo.is_active, as
    PyTorch resolves them); a condition on the test's parameters is not known here: inactive."""
    found: list[Any] = []
    for info in item.decorators:
        if not hasattr(info, "is_active"):  # undirected: applies to every test
            found.append(info)
            continue
        try:
            active = info.is_active(test_class, test_name, "cpu", dtype, {})
        except Exception:
            active = False
        if active:
            found.extend(info.decorators)
    return found


def _not_comparable(item: Any, comparable_tests: tuple[tuple[str, str], ...]) -> str | None:
    """The reason of a skip the item puts on one of `comparable_tests` for every device and dtype
    that says its values cannot be compared, or None."""
    for info in item.decorators:
        test = (getattr(info, "cls_name", None), getattr(info, "test_name", None))
        if test not in comparable_tests or info.device_type is not None or info.dtypes is not None:
            continue
        if info.active_if is not True:
            continue
        for decorator in info.decorators:
            reading = read_decorator(decorator)
            if reading.declared == "skip" and reading.active and NOT_COMPARABLE.search(reading.reason or ""):
                return reading.reason
    return None


def summary_lines(manifest: dict[str, Any]) -> list[str]:
    """Counts for the command's output (and the note): entries, functions, pairs, unmapped."""
    entries = manifest["entries"]
    pairs = sum(len(e["dtypes"]) for e in entries)
    declared = sum(len(e["declared_cpu"]) for e in entries)
    reasons = collections.Counter(u["reason"] for u in manifest["unmapped"])
    references = any("has_reference" in e for e in entries)
    return [
        f"{manifest['origin']} ({manifest['framework']} {manifest['framework_version']}): "
        f"{len(entries) + len(manifest['unmapped'])} entries, {len(entries)} mapped to "
        f"{len({e['function'] for e in entries})} public functions",
        f"(entry, dtype) pairs: {pairs} ({declared} declared supported on cpu, {pairs - declared} not)",
        "unmapped: " + (", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) or "none"),
    ] + (
        [f"entries with a NumPy reference: {sum(e['has_reference'] for e in entries)}"] if references else []
    )


MANIFESTS = {"opinfo": opinfo_manifest, "module": module_manifest, "optimizer": optimizer_manifest}


def torch_manifests(api: pd.DataFrame, census_params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """origin -> manifest of each torch database's census source (OpInfo, ModuleInfo, OptimizerInfo;
    the NumPy namesakes on the generator's inputs are namesakes.py's)."""
    tolerances, compiled = census_params["tolerances"], census_params["compiled"]
    cap = census_params.get("eager", {}).get("max_samples", {}).get("torch")
    return {origin: make(api, tolerances, compiled, cap) for origin, make in MANIFESTS.items()}


def census_manifests(api: pd.DataFrame, census_params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every torch census manifest by origin (cases/torch/census/<origin>.yaml): its databases'
    (torch_manifests) and the NumPy namesakes its OpInfo declares (namesakes.py)."""
    manifests = torch_manifests(api, census_params)
    manifests[namesakes.ORIGIN] = namesakes.torch_numpy_manifest(api, census_params)
    return manifests
