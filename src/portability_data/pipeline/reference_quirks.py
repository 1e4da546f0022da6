"""The reviewed list of reference quirks (runner/rules/reference_quirks.yaml): census entries whose
own reference computes something other than the function does, so that their deviations are the
reference's, not a framework's or a device's (issue 48). Data, like the failure rules: each quirk
says what the reference and the function compute, with its source, and has a test that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from portability_data.tables.contracts import FRAMEWORKS

FIELDS = ("framework", "origin", "entries", "reference", "function", "reason", "source")


class ReferenceQuirksError(ValueError):
    """The quirks file is malformed: names the file, the quirk and the field."""


@dataclass(frozen=True)
class Quirk:
    framework: str
    origin: str
    entries: tuple[str, ...]
    reference: str
    function: str
    reason: str
    source: str

    def describe(self) -> str:
        """One line for a reader: what the reference computes beside the function, and why it differs."""
        return f"reference quirk: {self.reference}; {self.function}: {self.reason}"


def default_path() -> Path:
    return Path(str(resources.files("portability_data.runner") / "rules" / "reference_quirks.yaml"))


def parse_quirks(data: Any, source: str) -> dict[tuple[str, str, str], Quirk]:
    """(framework, origin, entry) -> its quirk; a malformed quirk names the file, its index and field."""
    if (
        not isinstance(data, dict)
        or data.get("schema_version") != 1
        or not isinstance(data.get("quirks"), list)
    ):
        raise ReferenceQuirksError(f"{source}: needs schema_version: 1 and a list `quirks`")
    found: dict[tuple[str, str, str], Quirk] = {}
    for index, item in enumerate(data["quirks"]):
        where = f"{source}: quirks[{index}]"
        if not isinstance(item, dict):
            raise ReferenceQuirksError(f"{where}: a mapping with {', '.join(FIELDS)}")
        for name in FIELDS:
            value = item.get(name)
            valid = isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)
            if not (valid if name == "entries" else isinstance(value, str) and value):
                raise ReferenceQuirksError(f"{where}: field {name} missing or empty")
        if item["framework"] not in FRAMEWORKS:
            raise ReferenceQuirksError(
                f"{where}: field framework: {item['framework']!r} is not one of {FRAMEWORKS}"
            )
        quirk = Quirk(**{**{k: item[k] for k in FIELDS}, "entries": tuple(item["entries"])})
        for entry in quirk.entries:
            key = (quirk.framework, quirk.origin, entry)
            if key in found:
                raise ReferenceQuirksError(f"{where}: entry {entry!r} is listed twice")
            found[key] = quirk
    return found


@cache
def reference_quirks(path: Path | None = None) -> dict[tuple[str, str, str], Quirk]:
    """The quirks of `path` (default: the package's reviewed file)."""
    path = Path(path) if path is not None else default_path()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ReferenceQuirksError(f"{path}: cannot read the reference quirks ({exc})") from None
    return parse_quirks(data, str(path))
