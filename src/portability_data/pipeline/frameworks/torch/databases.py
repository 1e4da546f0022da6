"""The OpInfo, ModuleInfo and OptimizerInfo databases, read from the live objects (declared.py's
docstring has the choices): each entry's decorations (`read_decorator` classifies one decorator,
`declaration_rows` spreads a DecorateInfo over device types and dtypes) and the dtypes it declares
supported, and not, per device type.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from portability_data.pipeline.frameworks.torch.entries import (
    EntryRef,
    class_function,
    dtype_name,
    opinfo_function,
)

OPINFO_FILE = "common_methods_invocations.py"
MODULE_FILE = "common_modules.py"
OPTIMIZER_FILE = "common_optimizers.py"
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


@dataclass(frozen=True)
class Reading:
    """What one decorator declares, before it is spread over device types and dtypes."""

    declared: str
    device_type: str | tuple[str, ...] | None = None
    reason: str | None = None
    active: bool | None = True
    # Declarations that carry their own dtypes (tolerance overrides): dtype -> reason.
    per_dtype: dict[str, str | None] | None = None


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
