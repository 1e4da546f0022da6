"""common_mps.py's lists of what the MPS backend is expected to fail, read from the file with `ast`
(the wheel defines them only where an MPS device is present), and the modifier's blanket rules
applied to every OpInfo entry (declared.py's docstring has the choices).
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from portability_data.pipeline.frameworks.torch.entries import EntryRef, dtype_name, opinfo_function

log = logging.getLogger(__name__)

MPS_MODULE = "torch.testing._internal.common_mps"
MPS_FILE = "common_mps.py"


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
