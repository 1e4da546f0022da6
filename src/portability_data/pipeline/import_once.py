"""Imports write once: an import run again never rewrites a file an earlier import wrote.

What `portability reference import` and `portability published import` write (the study's shards
and runs rows, data/results/mince2023 and data/runs/mince2023; its printed numbers, data/published)
is source data, committed once and immutable. Run again, an import either makes what is there
(nothing to write: "already imported") or something else (today's failure rules read the study's
messages otherwise, a changed importer or transcription), and then it refuses, naming each file and
what differs, and writes nothing. It does not write a second, uniquely named shard instead: the run
ids are the study's own names (mince2023-<framework>-<machine>-<device>), which the reproduction and
the report key on, and two shards of one study run would count its rows twice in every pooled table.
Replacing an import on purpose is a reviewed change: `git rm` the files, say why, import again.

"What is there" is compared as rows the current contract reads (tableio.read_file: declared types,
the columns added since the file's schema version as nulls) plus the metadata the importer sets, not
as bytes: a file written under an older schema is not rewritten to gain null columns.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from portability_data.tables.tableio import TableValidationError, read_file, write_table


@dataclass(frozen=True)
class Planned:
    """One file an import would write: its table, rows, path and the metadata the importer sets."""

    table: str
    frame: pd.DataFrame
    path: Path
    metadata: dict[str, str] = field(default_factory=dict)


class ImportConflictError(ValueError):
    """Files already there hold something else than the import makes; nothing was written."""

    def __init__(self, conflicts: list[str], fix: str) -> None:
        self.conflicts = conflicts
        lines = [
            f"{len(conflicts)} file(s) already imported hold something else than this import makes; "
            "nothing written (an import never rewrites what an earlier one wrote):"
        ]
        super().__init__("\n".join([*lines, *(f"  - {c}" for c in conflicts), f"fix: {fix}"]))


@dataclass(frozen=True)
class Imported:
    """What an import did: the files it wrote, and those already there as it would write them."""

    written: list[Path]
    unchanged: list[Path]

    def summary(self, what: str) -> str:
        if not self.written:
            there = len(self.unchanged)
            return f"already imported, nothing written: the {there} {what} hold what this import makes"
        kept = f"; {len(self.unchanged)} already imported, left as they are" if self.unchanged else ""
        return f"{len(self.written)} {what} written{kept}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _changed_rows(old: pa.ChunkedArray, new: pa.ChunkedArray) -> int:
    return sum(not _same(a, b) for a, b in zip(old.to_pylist(), new.to_pylist()))


def difference(planned: Planned, scratch: Path) -> str | None:
    """None when the file at `planned.path` holds what the import makes; else what differs (the
    import's rows are written to `scratch` and read back, so both sides go through one reader)."""
    candidate = write_table(planned.table, planned.frame, scratch / planned.path.name, planned.metadata)
    try:
        there = read_file(planned.table, planned.path)
    except TableValidationError as exc:
        return f"cannot be read as table {planned.table!r} ({str(exc).splitlines()[-1].strip()})"
    made = read_file(planned.table, candidate)
    if there.num_rows != made.num_rows:
        return f"{there.num_rows} row(s) there, {made.num_rows} from this import"
    changed = [(name, _changed_rows(there[name], made[name])) for name in made.column_names]
    found = [f"{name} in {n} row(s)" for name, n in changed if n]
    recorded = pq.read_schema(planned.path).metadata or {}
    for key, value in planned.metadata.items():
        if recorded.get(key.encode(), b"").decode() != value:
            found.append(f"metadata {key!r}")
    return ", ".join(found) or None


def import_once(planned: list[Planned], fix: str) -> Imported:
    """Write the planned files that are not there yet (each atomically, refusing to replace); files
    already there must hold what the import makes, else nothing at all is written."""
    unchanged: list[Path] = []
    conflicts: list[str] = []
    missing: list[Planned] = []
    with tempfile.TemporaryDirectory(prefix="portability-import-") as scratch:
        for index, plan in enumerate(planned):
            if not plan.path.exists():
                missing.append(plan)
                continue
            differs = difference(plan, Path(scratch) / str(index))
            if differs is None:
                unchanged.append(plan.path)
            else:
                conflicts.append(f"{plan.path}: {differs}")
    if conflicts:
        raise ImportConflictError(conflicts, fix)
    written = [write_table(p.table, p.frame, p.path, p.metadata, exclusive=True) for p in missing]
    return Imported(written, unchanged)
