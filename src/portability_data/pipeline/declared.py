"""Pipeline step `declared`: what the installed PyTorch wheel itself declares about devices and dtypes.

PyTorch generates much of its own test suite from databases it ships in the wheel
(``torch/testing/_internal``): the OpInfo entries of ``op_db``, the ModuleInfo entries of
``module_db`` and the OptimizerInfo entries of ``optim_db``, each with per-device expected failures,
skips and tolerance overrides (``DecorateInfo``), and for OpInfo the dtypes it supports per device
type; and ``common_mps.py``'s lists of what the MPS backend is expected to fail. These are code, not
data. This step reads them into the ``declared`` table (issue 19), so that what we measure on a
device can be set beside what PyTorch itself says about it. The choices:

- Declarations are read from the live objects, so what the table says is what the test suite
  applies. The MPS lists are the exception: ``common_mps.py`` defines them only when an MPS device is
  present, so they are read from the file with ``ast`` (literal dicts and sets, their comments as
  the reason) and the modifier's two blanket rules (no float64/complex128; complex only for the ops
  in ``SUPPORTED_COMPLEX_OPS``) are applied to every OpInfo entry, once the file shows them (the
  sparse tests' blanket complex128 skip is not: complex128 is already declared absent on MPS).
- Nothing is dropped: a declaration the harvester cannot read (a malformed ``DecorateInfo``, a
  decorator it has no rule for, an MPS list it does not know) becomes an ``unknown`` row that says
  what was found, and an entry whose name maps to no public function keeps ``function`` null with
  the reason (``private_name``, ``not_in_api``).
- Conditions are recorded, not applied: ``DecorateInfo.active_if`` and a ``skipIf`` dependency are
  evaluated where the wheel is read (``active``); a callable condition is decided per test (null).
- Supported dtypes are spelled out per device type as the wheel names it (``cpu`` plus the keys
  of ``OpInfo.dtypesIf``: cuda, rocm, xpu, mps, hpu), with the dtypes the entry does not support
  beside them: forward over the wheel's own universe (``get_all_dtypes()``, what
  ``OpDTypes.unsupported`` tests), backward over the differentiable dtypes
  (``supported_backward_dtypes``' own filter). ModuleInfo declares supported dtypes only (no test
  claims the others fail), OptimizerInfo none.
- ``OpInfo.decorators`` already holds its ``skips`` (``OpInfo.__post_init__`` merges them), so only
  ``decorators`` is read; ModuleInfo and OptimizerInfo merge them the same way.
"""

from __future__ import annotations

import ast
import importlib.util
import logging
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.tables.contracts import arrow_schema

log = logging.getLogger(__name__)

FRAMEWORK = "torch"
OPINFO_FILE = "common_methods_invocations.py"
MODULE_FILE = "common_modules.py"
OPTIMIZER_FILE = "common_optimizers.py"
MPS_MODULE = "torch.testing._internal.common_mps"
MPS_FILE = "common_mps.py"

# Where an OpInfo name may be public, tried in this order; the first in the api table wins. The
# in-place method comes after the method (OpInfo "uniform" tests Tensor.uniform_), and the aten op
# namespace last (OpInfo "slice" tests torch.ops.aten.slice), since the api table lists both.
OPINFO_CANDIDATES = (
    "torch.{}",
    "torch.nn.functional.{}",
    "torch.linalg.{}",
    "torch.special.{}",
    "torch.fft.{}",
    "torch.Tensor.{}",
    "torch.Tensor.{}_",
    "torch.ops.aten.{}",
)
# Device types whose module dtypes are spelled out (ModuleInfo.supported_dtypes knows mps and hpu,
# every other device type gets its `dtypes`).
MODULE_DEVICE_TYPES = ("cpu", "cuda", "xpu", "mps", "hpu")
# The OpInfo attribute each device type's backward dtypes come from (supported_backward_dtypes;
# rocm is OpInfo's own name for CUDA on ROCm); any other device type uses `backward_dtypes`.
BACKWARD_ATTRIBUTES = {
    "cuda": "backward_dtypesIfCUDA",
    "rocm": "backward_dtypesIfROCM",
    "mps": "backward_dtypesIfMPS",
    "hpu": "backward_dtypesIfHpu",
}
# Test-configuration decorators: not a failure or a skip, kept as `other` with their name.
CONFIGURATION_DECORATORS = frozenset({"with_tf32_off", "slowTest", "disablecuDNN", "onlyNativeDeviceTypes"})
# A device named inside a decorator's name: skipCUDAIf..., expectedFailureMPS, skipIfRocm.
DEVICE_IN_NAME = re.compile(r"(CPU|CUDA|XPU|Xpu|MPS|Mps|Meta|XLA|HPU|Lazy|PRIVATEUSE1|MTIA|Rocm)")


class DeclaredError(ValueError):
    """The harvest cannot be trusted (no api table for the installed torch): says what to run."""


@dataclass(frozen=True)
class EntryRef:
    """One database entry, with the public function it tests (or why there is none)."""

    origin: str
    entry: str
    variant: str | None
    function: str | None
    unmapped_reason: str | None

    def row(self, **values: Any) -> dict[str, Any]:
        """A table row of this entry; `values` fill the declaration's own columns."""
        return {
            "function": self.function,
            "unmapped_reason": self.unmapped_reason,
            "origin": self.origin,
            "entry": self.entry,
            "variant": self.variant,
            "device_type": None,
            "dtype": None,
            "aspect": None,
            "test_class": None,
            "test_name": None,
            "active": True,
            "reason": None,
            **values,
        }


@dataclass(frozen=True)
class Reading:
    """What one decorator declares, before it is spread over device types and dtypes."""

    declared: str
    device_type: str | tuple[str, ...] | None = None
    reason: str | None = None
    active: bool | None = True
    # Declarations that carry their own dtypes (tolerance overrides): dtype -> reason.
    per_dtype: dict[str, str | None] | None = None


@dataclass
class HarvestSummary:
    """What a harvest found, for the log and the command's output."""

    rows: int = 0
    seconds: float = 0.0
    entries: Counter[str] = field(default_factory=Counter)
    declared: Counter[str] = field(default_factory=Counter)
    unmapped: Counter[tuple[str, str]] = field(default_factory=Counter)

    def report(self) -> list[str]:
        """Lines for people: rows, entries per origin, declarations per kind, unmapped entries."""
        lines = [f"{self.rows} declaration row(s) in {self.seconds:.1f} s"]
        by_origin = sorted(self.entries.items())
        lines.append("entries: " + ", ".join(f"{origin} {count}" for origin, count in by_origin))
        by_kind = self.declared.most_common()
        lines.append("declared: " + ", ".join(f"{kind} {count}" for kind, count in by_kind))
        by_reason = sorted(self.unmapped.items())
        unmapped = ", ".join(f"{origin}/{why} {count}" for (origin, why), count in by_reason) or "none"
        lines.append("entries without a public function: " + unmapped)
        return lines


# --------------------------------------------------------------------------- names


def dtype_name(dtype: object) -> str:
    """torch.float32 -> float32 (aliases print their canonical name: torch.half -> float16)."""
    import torch

    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"not a torch.dtype: {dtype!r}")
    return str(dtype).removeprefix("torch.")


def public_function(
    candidates: Iterable[str], public: frozenset[str], private: bool
) -> tuple[str | None, str | None]:
    """The first candidate that is a public name of the api table, else (None, why not)."""
    for name in candidates:
        if name in public:
            return name, None
    return None, "private_name" if private else "not_in_api"


def _is_private(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


def opinfo_function(names: Sequence[str], public: frozenset[str]) -> tuple[str | None, str | None]:
    """An OpInfo name (then its aten_name) as torch.<name>, torch.nn.functional.<name>, ...,
    torch.Tensor.<name>[_], torch.ops.aten.<name>: the first that the api table has."""
    unique = [name.removeprefix("torch.") for name in dict.fromkeys(names) if name]
    candidates = [pattern.format(name) for name in unique for pattern in OPINFO_CANDIDATES]
    return public_function(candidates, public, _is_private(unique[0]))


def class_function(
    cls: type, candidates: Sequence[str], public: frozenset[str]
) -> tuple[str | None, str | None]:
    """A module or optimizer class by its public spellings, then where it is defined."""
    defined = f"{cls.__module__}.{cls.__qualname__}"
    return public_function([*candidates, defined], public, cls.__name__.startswith("_"))


# --------------------------------------------------------------------------- decorators


def _closure_value(function: object, name: str) -> object:
    """A variable a closure captured (unittest.skip keeps its reason there), or None."""
    code = getattr(function, "__code__", None)
    cells = getattr(function, "__closure__", None) or ()
    if code is None:
        return None
    for variable, cell in zip(code.co_freevars, cells, strict=False):
        if variable == name:
            try:
                return cell.cell_contents
            except ValueError:
                return None
    return None


def _short_repr(value: object, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _device_in_name(name: str) -> str | None:
    found = DEVICE_IN_NAME.search(name)
    return found.group(1).lower() if found else None


def read_decorator(decorator: object) -> Reading:
    """Classify one decorator; one with no rule is `unknown`, never an error."""
    import unittest

    from torch.testing._internal import common_device_type as cdt

    if decorator is unittest.expectedFailure:
        return Reading("expected_failure")
    if isinstance(decorator, cdt.expectedFailure):
        per_dtype = None if decorator.dtype is None else {dtype_name(decorator.dtype): None}
        return Reading("expected_failure", decorator.device_type, per_dtype=per_dtype)
    if isinstance(decorator, cdt.skipIf):
        active = decorator.dep if isinstance(decorator.dep, bool) else None
        device = decorator.device_type
        device = tuple(device) if isinstance(device, (list, tuple, set)) else device
        return Reading("skip", device, str(decorator.reason), active)
    if isinstance(decorator, cdt.toleranceOverride):
        tolerances = {dtype_name(k): f"atol={v.atol:g}, rtol={v.rtol:g}" for k, v in decorator.d.items()}
        return Reading("tolerance_override", per_dtype=tolerances)
    if isinstance(decorator, cdt.precisionOverride):
        precisions = {dtype_name(k): f"precision={v:g}" for k, v in decorator.d.items()}
        return Reading("tolerance_override", per_dtype=precisions)
    if isinstance(decorator, cdt.onlyOn):
        return Reading("other", reason=f"onlyOn: runs only on {decorator.device_type}")
    qualname = getattr(decorator, "__qualname__", None)
    if not callable(decorator) or not isinstance(qualname, str):
        return Reading("unknown", reason=f"not a decorator: {_short_repr(decorator)}", active=None)
    module = getattr(decorator, "__module__", None) or ""
    base = qualname.split(".<locals>")[0]
    if module == "unittest.case":
        if qualname == "skip.<locals>.decorator":
            return Reading("skip", reason=str(_closure_value(decorator, "reason")))
        if qualname == "skip":
            return Reading("skip", reason="unittest.skip applied without a reason")
        if qualname == "_id":
            return Reading(
                "skip",
                reason="unittest.skipIf/skipUnless whose condition was false where the wheel was read",
                active=False,
            )
    if base.startswith("expectedFailure"):
        return Reading("expected_failure", _device_in_name(base), reason=base)
    if base.startswith("skip"):
        message = _closure_value(decorator, "msg")
        reason = base if message is None else f"{base}: {message}"
        # skipCPUIfNoLapack, skipIfRocm: a condition checked when the test runs; skipMPS: none.
        return Reading("skip", _device_in_name(base), reason=reason, active=None if "If" in base else True)
    if base in CONFIGURATION_DECORATORS or base.startswith("only"):
        return Reading("other", reason=base)
    return Reading("unknown", reason=f"no rule for decorator {module}.{qualname}", active=None)


def _both(first: bool | None, second: bool | None) -> bool | None:
    """Two conditions together: false if either is, unknown if either is, else true."""
    if first is False or second is False:
        return False
    if first is None or second is None:
        return None
    return True


def _condition(active_if: object) -> bool | None:
    """A DecorateInfo.active_if where the wheel is read: a bool (or LazyVal) now, a callable later."""
    if isinstance(active_if, bool):
        return active_if
    if callable(active_if):
        return None
    try:
        return bool(active_if)
    except Exception:  # a lazy condition that cannot be evaluated here
        return None


def _as_names(value: object) -> list[str | None]:
    """A DecorateInfo's device_type as a list (None: every device type)."""
    if value is None:
        return [None]
    if isinstance(value, str):
        return [value]
    return [str(item) for item in value]  # type: ignore[attr-defined]


def _optional_text(value: object) -> str | None:
    return None if value is None else value if isinstance(value, str) else _short_repr(value)


def declaration_rows(ref: EntryRef, item: object, source: str) -> list[dict[str, Any]]:
    """Rows for one item of an entry's `decorators`: a DecorateInfo spread over its device types,
    dtypes and decorators, or a bare decorator that applies to every test of the entry. Whatever
    cannot be read is one `unknown` row saying what was found."""
    try:
        if hasattr(item, "decorators"):
            decorators = list(item.decorators)  # type: ignore[attr-defined]
            device_types = _as_names(item.device_type)  # type: ignore[attr-defined]
            dtypes = item.dtypes  # type: ignore[attr-defined]
            dtype_names = None if dtypes is None else [dtype_name(d) for d in dtypes]
            scope = {
                "test_class": _optional_text(item.cls_name),  # type: ignore[attr-defined]
                "test_name": _optional_text(item.test_name),  # type: ignore[attr-defined]
            }
            active = _condition(item.active_if)  # type: ignore[attr-defined]
            sources = [f"{source}.decorators[{index}]" for index in range(len(decorators))]
        else:
            decorators, device_types, dtype_names, scope, active = [item], [None], None, {}, True
            sources = [source]
    except Exception as exc:
        reason = f"unreadable declaration {_short_repr(item)} ({type(exc).__name__}: {exc})"
        return [ref.row(declared="unknown", reason=reason, active=None, source=source)]
    if decorators and all(isinstance(d, str) for d in decorators):
        # DecorateInfo("TestX", "test_y", ...) without a decorator: the string is split into letters.
        reading = Reading("unknown", reason=f"names no decorator, only {''.join(decorators)!r}", active=None)
        readings = [(reading, f"{source}.decorators")]
    else:
        readings = []
        for decorator, decorator_source in zip(decorators, sources, strict=True):
            try:
                readings.append((read_decorator(decorator), decorator_source))
            except Exception as exc:
                reason = f"unreadable decorator {_short_repr(decorator)} ({type(exc).__name__}: {exc})"
                readings.append((Reading("unknown", reason=reason, active=None), decorator_source))
    rows = []
    for reading, decorator_source in readings:
        devices = device_types
        if devices == [None] and reading.device_type is not None:
            devices = _as_names(reading.device_type)
        per_dtype: dict[str | None, str | None]
        if reading.per_dtype is None:
            per_dtype = {name: reading.reason for name in dtype_names or [None]}
        else:
            per_dtype = {
                name: reason
                for name, reason in reading.per_dtype.items()
                if dtype_names is None or name in dtype_names
            }
            if not per_dtype:  # e.g. an override for float16 limited to float32: it applies nowhere
                reason = f"{reading.declared} for {sorted(reading.per_dtype)} limited to {dtype_names}"
                reading = replace(reading, declared="unknown", active=None)
                per_dtype = {None: reason}
        for device_type in devices:
            for dtype, reason in per_dtype.items():
                rows.append(
                    ref.row(
                        device_type=device_type,
                        dtype=dtype,
                        declared=reading.declared,
                        active=_both(active, reading.active),
                        reason=reason,
                        source=decorator_source,
                        **scope,
                    )
                )
    return rows


# --------------------------------------------------------------------------- dtype lists


def dtype_list_rows(
    ref: EntryRef,
    device_type: str,
    aspect: str | None,
    supported: Iterable[object],
    universe: Iterable[object] | None,
    source: str,
    reason: str | None = None,
) -> list[dict[str, Any]]:
    """supported_dtype rows for a declared list, and unsupported_dtype rows for the rest of the
    universe (no universe: the list makes no claim about other dtypes)."""
    supported_names = sorted({dtype_name(d) for d in supported})
    rows = [
        ref.row(device_type=device_type, dtype=name, declared="supported_dtype", aspect=aspect, source=source)
        for name in supported_names
    ]
    if universe is not None:
        for name in sorted({dtype_name(d) for d in universe} - set(supported_names)):
            rows.append(
                ref.row(
                    device_type=device_type,
                    dtype=name,
                    declared="unsupported_dtype",
                    aspect=aspect,
                    reason=reason,
                    source=source,
                )
            )
    return rows


def opinfo_dtype_rows(ref: EntryRef, op: Any, source: str) -> list[dict[str, Any]]:
    """Forward and backward dtypes of one OpInfo per device type it names, supported and not."""
    import torch
    from torch.testing._internal.common_dtype import floating_and_complex_types_and, get_all_dtypes

    forward_universe = get_all_dtypes()
    backward_universe = floating_and_complex_types_and(torch.bfloat16, torch.float16, torch.complex32)
    rows = []
    for device_type in ["cpu", *sorted(set(op.dtypesIf) - {"cpu"})]:
        attribute = f"dtypesIf[{device_type!r}]" if device_type in op.dtypesIf else "dtypes"
        forward = op.dtypesIf.get(device_type, op.dtypes)
        rows += dtype_list_rows(
            ref, device_type, "forward", forward, forward_universe, f"{source}.{attribute}"
        )
        if op.supports_autograd:
            attribute = BACKWARD_ATTRIBUTES.get(device_type, "backward_dtypes")
            backward = set(getattr(op, attribute)) & set(backward_universe)
            reason = None
        else:
            attribute, backward, reason = "supports_autograd", set(), "the entry does not support autograd"
        rows += dtype_list_rows(
            ref, device_type, "backward", backward, backward_universe, f"{source}.{attribute}", reason
        )
    return rows


# --------------------------------------------------------------------------- databases


def _entry_failed(ref: EntryRef, source: str, exc: Exception) -> dict[str, Any]:
    reason = f"entry could not be read ({type(exc).__name__}: {exc})"
    return ref.row(declared="unknown", reason=reason, active=None, source=source)


def opinfo_refs(op_db: Sequence[Any], public: frozenset[str]) -> list[EntryRef]:
    """Every OpInfo entry with its public function, in op_db order."""
    refs = []
    for op in op_db:
        function, unmapped = opinfo_function([op.name, op.aten_name], public)
        refs.append(EntryRef("opinfo", op.name, op.variant_test_name or None, function, unmapped))
    return refs


def opinfo_rows(op_db: Sequence[Any], refs: Sequence[EntryRef]) -> Iterator[dict[str, Any]]:
    """Dtype lists and decorations of every OpInfo entry."""
    for index, (op, ref) in enumerate(zip(op_db, refs, strict=True)):
        source = f"{OPINFO_FILE}:op_db[{index}]"
        try:
            yield from opinfo_dtype_rows(ref, op, source)
        except Exception as exc:
            yield _entry_failed(ref, source, exc)
        for position, item in enumerate(op.decorators):
            yield from declaration_rows(ref, item, f"{source}.decorators[{position}]")


def module_rows(module_db: Sequence[Any], public: frozenset[str]) -> Iterator[dict[str, Any]]:
    """Supported dtypes per device type and decorations of every ModuleInfo entry."""
    attributes = {"mps": "dtypesIfMPS", "hpu": "dtypesIfHpu"}
    for index, info in enumerate(module_db):
        cls = info.module_cls
        candidates = [f"torch.{info.name}", f"torch.nn.{cls.__name__}"]
        ref = EntryRef("module", info.name, None, *class_function(cls, candidates, public))
        source = f"{MODULE_FILE}:module_db[{index}]"
        try:
            for device_type in MODULE_DEVICE_TYPES:
                attribute = attributes.get(device_type, "dtypes")
                supported = info.supported_dtypes(device_type)
                yield from dtype_list_rows(ref, device_type, None, supported, None, f"{source}.{attribute}")
        except Exception as exc:
            yield _entry_failed(ref, source, exc)
        for position, item in enumerate(info.decorators):
            yield from declaration_rows(ref, item, f"{source}.decorators[{position}]")


def optimizer_rows(optim_db: Sequence[Any], public: frozenset[str]) -> Iterator[dict[str, Any]]:
    """Decorations of every OptimizerInfo entry (it declares no dtypes)."""
    for index, info in enumerate(optim_db):
        cls = info.optim_cls
        ref = EntryRef(
            "optimizer", info.name, None, *class_function(cls, [f"torch.optim.{info.name}"], public)
        )
        source = f"{OPTIMIZER_FILE}:optim_db[{index}]"
        for position, item in enumerate(info.decorators):
            yield from declaration_rows(ref, item, f"{source}.decorators[{position}]")


# --------------------------------------------------------------------------- MPS lists


@dataclass(frozen=True)
class MpsList:
    """What a list of common_mps.py declares for the ops it names."""

    declared: str
    aspect: str
    meaning: str
    active: bool | None = True


MPS_LISTS: dict[tuple[str, str], MpsList] = {
    ("mps_ops_modifier", "UNIMPLEMENTED_XFAILLIST"): MpsList(
        "expected_failure", "forward", "not implemented on MPS"
    ),
    ("mps_ops_modifier", "UNIMPLEMENTED_XFAILLIST_SPARSE"): MpsList(
        "expected_failure", "forward", "not implemented on MPS (sparse tests)"
    ),
    ("mps_ops_modifier", "UNDEFINED_XFAILLIST"): MpsList(
        "expected_failure", "forward", "result undefined or unlike the CPU's"
    ),
    ("mps_ops_modifier", "ON_MPS_XFAILLIST"): MpsList("expected_failure", "forward", "fails on MPS"),
    ("mps_ops_modifier", "EMPTY_OPS_SKIPLIST"): MpsList(
        "skip", "forward", "uninitialized output, cannot match the CPU's"
    ),
    ("mps_ops_modifier", "SKIPLIST"): MpsList("skip", "forward", "skipped on MPS"),
    ("mps_ops_modifier", "MACOS_BEFORE_14_4_XFAILLIST"): MpsList(
        "expected_failure", "forward", "fails before macOS 14.4", active=None
    ),
    ("mps_ops_grad_modifier", "XFAILLIST_GRAD"): MpsList(
        "expected_failure", "backward", "gradient not implemented or wrong on MPS"
    ),
    ("mps_ops_grad_modifier", "SKIPLIST_GRAD"): MpsList("skip", "backward", "gradient skipped on MPS"),
    ("mps_ops_grad_modifier", "ON_MPS_XFAILLIST"): MpsList(
        "expected_failure", "backward", "gradient fails on MPS"
    ),
    ("mps_ops_error_inputs_modifier", "XFAILLIST"): MpsList(
        "expected_failure", "error_inputs", "does not raise the expected error on MPS"
    ),
}
# An allow list, read by the complex rule below rather than as declarations of its own.
MPS_COMPLEX_ALLOW_LIST = "SUPPORTED_COMPLEX_OPS"


@dataclass(frozen=True)
class MpsRule:
    """A DecorateInfo mps_ops_modifier adds to many ops at once, found by the dtypes it lists."""

    dtypes: frozenset[str]
    declared: str
    reason: str
    only_outside_allow_list: bool = False


MPS_RULES = (
    MpsRule(
        frozenset({"float64", "complex128"}), "expected_failure", "every op: MPS has no float64, complex128"
    ),
    MpsRule(
        frozenset({"complex32", "complex64"}),
        "expected_failure",
        f"not in {MPS_COMPLEX_ALLOW_LIST}: complex dtypes expected to fail on MPS",
        only_outside_allow_list=True,
    ),
)
# Not expanded: the `if sparse:` skip of complex128 for every op (sparse tests only); every OpInfo's
# dtypesIf['mps'] and the float64/complex128 rule above already declare complex128 absent on MPS.


def _literal_dtypes(node: ast.expr) -> list[str | None]:
    """An MPS list value: None (every dtype) or a literal list of torch.<dtype> attributes."""
    import torch

    if isinstance(node, ast.Constant) and node.value is None:
        return [None]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        names = []
        for element in node.elts:
            if not (isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name)):
                raise ValueError(f"not a torch dtype: {ast.unparse(element)}")
            if element.value.id != "torch":
                raise ValueError(f"not a torch dtype: {ast.unparse(element)}")
            names.append(dtype_name(getattr(torch, element.attr)))
        return names
    raise ValueError(f"dtypes are not a literal list: {ast.unparse(node)}")


def _comment_for(lines: Sequence[str], first: int, last: int) -> str | None:
    """The comments that explain a list key: the block right above it and any on its own lines."""
    above = []
    line = first - 2
    while line >= 0 and lines[line].strip().startswith("#"):
        above.insert(0, lines[line].strip().lstrip("#").strip())
        line -= 1
    trailing = [lines[i].split("#", 1)[1].strip() for i in range(first - 1, last) if "#" in lines[i]]
    text = " ".join(part for part in [*above, *trailing] if part)
    return text or None


def _mps_literals(tree: ast.AST) -> Iterator[tuple[str, str, ast.Dict | ast.Set]]:
    """(function, name, literal) for every upper-case dict or set literal assigned in a function."""
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        for node in ast.walk(function):
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign):
                target, value = node.target, node.value
            if (
                isinstance(target, ast.Name)
                and target.id.isupper()
                and isinstance(value, (ast.Dict, ast.Set))
            ):
                yield function.name, target.id, value


def _mps_rule_lines(tree: ast.AST) -> dict[frozenset[str], int]:
    """The line of each DecorateInfo(..., dtypes=[literal]) call of mps_ops_modifier, by its dtypes."""
    found: dict[frozenset[str], int] = {}
    for function in ast.walk(tree):
        if not (isinstance(function, ast.FunctionDef) and function.name == "mps_ops_modifier"):
            continue
        for node in ast.walk(function):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "DecorateInfo"):
                continue
            for keyword in node.keywords:
                if keyword.arg == "dtypes" and isinstance(keyword.value, (ast.List, ast.Tuple)):
                    try:
                        dtypes = frozenset(d for d in _literal_dtypes(keyword.value) if d is not None)
                    except (ValueError, AttributeError):
                        continue
                    found.setdefault(dtypes, node.lineno)
    return found


def mps_rows(source_text: str, refs: dict[str, EntryRef], public: frozenset[str]) -> Iterator[dict[str, Any]]:
    """Rows for common_mps.py: its lists (read as literals, whatever the platform) and its blanket
    rules applied to every OpInfo entry. `refs` maps an MPS key (OpInfo name + variant_test_name,
    as common_mps.py spells it) to its entry."""
    tree = ast.parse(source_text)
    lines = source_text.splitlines()
    allow_list: set[str] | None = None

    def ref_for(key: str) -> EntryRef:
        known = refs.get(key)
        if known is not None:
            return replace(known, origin="mps_list")
        return EntryRef("mps_list", key, None, *opinfo_function([key], public))

    for function, name, literal in _mps_literals(tree):
        if name == MPS_COMPLEX_ALLOW_LIST:
            allow_list = {k.value for k in literal.elts if isinstance(k, ast.Constant)}  # type: ignore[union-attr]
            continue
        meaning = MPS_LISTS.get((function, name))
        keys = literal.keys if isinstance(literal, ast.Dict) else literal.elts
        values: list[ast.expr | None] = (
            list(literal.values) if isinstance(literal, ast.Dict) else [None] * len(keys)
        )
        for key, value in zip(keys, values, strict=True):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue  # a ** unpacking or a computed key: not a declaration of one op
            ref = ref_for(key.value)
            source = f"{MPS_FILE}:{key.lineno}:{function}.{name}[{key.value!r}]"
            comment = _comment_for(lines, key.lineno, (value or key).end_lineno or key.lineno)
            if meaning is None:
                reason = f"{name} of {function}: a list the harvester has no rule for"
                yield ref.row(
                    device_type="mps", declared="unknown", reason=reason, active=None, source=source
                )
                continue
            reason = f"{name}: {meaning.meaning}" + (f" ({comment})" if comment else "")
            try:
                dtypes = [None] if value is None else _literal_dtypes(value)
            except (ValueError, AttributeError) as exc:
                yield ref.row(
                    device_type="mps", declared="unknown", reason=f"{name}: {exc}", active=None, source=source
                )
                continue
            for dtype in dtypes:
                yield ref.row(
                    device_type="mps",
                    dtype=dtype,
                    declared=meaning.declared,
                    aspect=meaning.aspect,
                    active=meaning.active,
                    reason=reason,
                    source=source,
                )

    rule_lines = _mps_rule_lines(tree)
    for rule in MPS_RULES:
        line = rule_lines.get(rule.dtypes)
        if line is None or (rule.only_outside_allow_list and allow_list is None):
            log.warning("%s: the rule %r is not in this wheel; not applied", MPS_FILE, rule.reason)
            continue
        for key, ref in refs.items():
            if rule.only_outside_allow_list and allow_list is not None and key in allow_list:
                continue
            for dtype in sorted(rule.dtypes):
                yield replace(ref, origin="mps_list").row(
                    device_type="mps",
                    dtype=dtype,
                    declared=rule.declared,
                    aspect="forward",
                    reason=rule.reason,
                    source=f"{MPS_FILE}:{line}:mps_ops_modifier",
                )


# --------------------------------------------------------------------------- the step


def public_torch_names(api: pd.DataFrame, version: str) -> frozenset[str]:
    """The installed torch's public names from the api table; refuses a table of another version."""
    torch_rows = api[api["framework"] == FRAMEWORK]
    if torch_rows.empty:
        raise DeclaredError("the api table has no torch rows; run `portability enumerate` first")
    versions = set(torch_rows["framework_version"].astype(str))
    if versions != {version}:
        raise DeclaredError(
            f"the api table lists torch {', '.join(sorted(versions))} but torch {version} is installed; "
            "re-run `portability enumerate` so that names are checked against the installed version"
        )
    return frozenset(torch_rows["qualified_name"].astype(str))


def harvest_declared(api: pd.DataFrame) -> tuple[pd.DataFrame, HarvestSummary]:
    """The declared table of the installed torch (validated, declared types) and what it holds."""
    started = time.perf_counter()
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db
    from torch.testing._internal.common_optimizers import optim_db

    from portability_data.tables.tableio import to_arrow, validate

    version = str(torch.__version__)
    public = public_torch_names(api, version)
    refs = opinfo_refs(op_db, public)
    spec = importlib.util.find_spec(MPS_MODULE)
    if spec is None or spec.origin is None:
        raise DeclaredError(f"{MPS_MODULE} is not in the installed torch")
    mps_source = Path(spec.origin).read_text(encoding="utf-8")
    by_mps_key = {op.name + op.variant_test_name: ref for op, ref in zip(op_db, refs, strict=True)}
    rows = [
        *opinfo_rows(op_db, refs),
        *module_rows(module_db, public),
        *optimizer_rows(optim_db, public),
        *mps_rows(mps_source, by_mps_key, public),
    ]
    frame = pd.DataFrame(rows)
    frame.insert(0, "framework_version", version)
    frame.insert(0, "framework", FRAMEWORK)
    frame = frame[arrow_schema("declared").names]
    typed = to_arrow("declared", frame).to_pandas(types_mapper=pd.ArrowDtype)
    typed = validate("declared", typed)
    summary = summarize(typed)
    summary.seconds = time.perf_counter() - started
    return typed, summary


def summarize(frame: pd.DataFrame) -> HarvestSummary:
    """Entries per origin, rows per declared kind, entries without a public function per reason."""
    summary = HarvestSummary(rows=len(frame))
    entries = frame[["origin", "entry", "variant", "unmapped_reason"]].drop_duplicates()
    summary.entries = Counter(entries["origin"].astype(str))
    summary.declared = Counter(frame["declared"].astype(str))
    unmapped = entries[entries["unmapped_reason"].notna()]
    summary.unmapped = Counter(zip(unmapped["origin"].astype(str), unmapped["unmapped_reason"].astype(str)))
    return summary


def run_declared(api_path: Path, out: Path) -> HarvestSummary:
    """Pipeline step `declared`: harvest the installed torch and write the table atomically."""
    from portability_data.tables.tableio import read_table, write_table

    api_path = Path(api_path)
    if not api_path.exists():
        raise DeclaredError(f"{api_path} not found; run `portability enumerate` first")
    frame, summary = harvest_declared(read_table("api", api_path))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write_table("declared", frame, Path(out))
    log.info("declared: %d row(s) from torch %s -> %s", summary.rows, frame["framework_version"].iloc[0], out)
    return summary
