"""What a run did, per case: counts of outcomes, and which case files could not run at all.

Two kinds of "not passed" are kept apart on purpose. A subtest that fails is the framework's
result (data: the function does not work there). A case file that cannot be collected (a syntax
error, an import that fails, the harness itself breaking) measured nothing: that is an error of
the run, so `portability run` and `portability case check --run` exit non-zero on it and say
which file and line. Light like the runner: pyarrow only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COLLECTION_MARK = "::<collection>"  # curated: a file suffix; census: ::<collection>[case id]
# Outcomes beside the four columns of the table: the worker's faults and the unknown.
OTHER_OUTCOMES = ("timeout", "crashed", "memory", "unknown")

_SYNTAX_LOCATION = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)')
_TRACE_LOCATION = re.compile(r"^(?P<path>\S+\.py):(?P<line>\d+): in ")
_ERROR_LINE = re.compile(r"^E\s+(?P<error>[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b.*)$")


def cannot_run(row: dict[str, Any]) -> bool:
    """True for a row that says its case file never ran: a collection (import) error, or the
    harness failing rather than the function (category `harness`, the runner's HarnessError)."""
    return (
        COLLECTION_MARK in str(row.get("test_id", ""))
        or row.get("failure_category") == "harness"
        or row.get("error_type") == "HarnessError"
    )


def why_not_run(row: dict[str, Any]) -> str:
    """`could not be collected: file:line: Type: message` (or `harness error: ...`, or
    `crashed while collecting: ...`) for a row that `cannot_run`."""
    test_file = str(row.get("test_id", "")).split("::", 1)[0]
    detail = describe_collection_error(row.get("error_message") or "", test_file)
    if row.get("error_type") and row["error_type"] not in detail:
        detail = f"{detail} ({row['error_type']})"
    if row.get("error_type") == "HarnessError" or row.get("failure_category") == "harness":
        return f"harness error: {detail}"
    if row.get("outcome") == "error":
        return f"could not be collected: {detail}"
    return f"{row.get('outcome')} while collecting: {detail}"


def describe_collection_error(text: str, test_file: str) -> str:
    """`file:line: Type: message` from pytest's collection report, so the author sees the
    exception type and the line without reading a traceback; the file alone where no line shows."""
    lines = [line.rstrip() for line in (text or "").splitlines()]
    error = next(
        (m.group("error").strip() for m in map(_ERROR_LINE.match, reversed(lines)) if m is not None),
        next((line.strip() for line in reversed(lines) if line.strip()), "unknown error"),
    )
    name = Path(test_file).name
    line_number = None
    for line in lines:
        found = _SYNTAX_LOCATION.search(line) or _TRACE_LOCATION.match(line.strip())
        if found is not None and Path(found.group("path")).name == name:
            line_number = found.group("line")  # the last frame in the case file is the one that broke
    return f"{test_file}:{line_number}: {error}" if line_number else f"{test_file}: {error}"


@dataclass
class CaseCounts:
    """Outcome counts of one case over every repeat, and why it could not run, if it could not."""

    case_id: str
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    host_fallback: int = 0
    other: int = 0
    not_run: list[str] = field(default_factory=list)

    def add(self, row: dict[str, Any]) -> None:
        outcome = row.get("outcome")
        if outcome == "passed":
            self.passed += 1
        elif outcome == "failed":
            self.failed += 1
        elif outcome == "error":
            self.errors += 1
        elif outcome == "skipped":
            self.skipped += 1
        elif outcome == "host_fallback":
            self.host_fallback += 1
        else:
            self.other += 1
        if cannot_run(row):
            reason = why_not_run(row)
            if reason not in self.not_run:
                self.not_run.append(reason)

    def short(self) -> str:
        """The counts in words, for a progress line."""
        text = f"{self.passed} passed, {self.failed} failed, {self.errors} errors, {self.skipped} skipped"
        text += f", {self.host_fallback} host fallback" if self.host_fallback else ""
        return text + (f", {self.other} timeout/crashed/memory" if self.other else "")


@dataclass
class RunSummary:
    """Per-case counts of a whole run (every repeat), built from its shard rows."""

    run_id: str
    cases: dict[str, CaseCounts] = field(default_factory=dict)

    @classmethod
    def of_rows(cls, run_id: str, rows: Iterable[dict[str, Any]]) -> RunSummary:
        summary = cls(run_id)
        for row in rows:
            summary.cases.setdefault(row["case_id"], CaseCounts(row["case_id"])).add(row)
        return summary

    @classmethod
    def of_shard(cls, run_id: str, shard: Path) -> RunSummary:
        import pyarrow.parquet as pq

        columns = ["case_id", "test_id", "outcome", "failure_category", "error_type", "error_message"]
        return cls.of_rows(run_id, pq.read_table(shard, columns=columns).to_pylist())

    @property
    def not_run(self) -> list[CaseCounts]:
        """The cases that could not run (collection or harness errors)."""
        return [counts for counts in self.cases.values() if counts.not_run]

    def total(self) -> CaseCounts:
        total = CaseCounts("total")
        for counts in self.cases.values():
            total.passed += counts.passed
            total.failed += counts.failed
            total.errors += counts.errors
            total.skipped += counts.skipped
            total.host_fallback += counts.host_fallback
            total.other += counts.other
        return total

    def table(self) -> list[str]:
        """A plain-text table (readable in a terminal and in a log): one line per case, a total."""
        header = ("case", "passed", "failed", "errors", "skipped", "host_fallback", "other")
        body = [
            (c.case_id, c.passed, c.failed, c.errors, c.skipped, c.host_fallback, c.other)
            for c in sorted(self.cases.values(), key=lambda c: c.case_id)
        ]
        total = self.total()
        footer = (
            "total", total.passed, total.failed, total.errors, total.skipped, total.host_fallback, total.other
        )  # fmt: skip
        width = max(len(str(r[0])) for r in [header, *body, footer])
        numbers = [max(len(str(r[i])) for r in [header, *body, footer]) for i in range(1, len(header))]

        def line(cells: tuple[Any, ...]) -> str:
            return "  ".join(
                [str(cells[0]).ljust(width)] + [str(v).rjust(w) for v, w in zip(cells[1:], numbers)]
            )

        rule = "-" * len(line(header))
        return [line(header), rule, *map(line, body), rule, line(footer)]

    def verdict(self) -> str:
        """The last line: did every case run (exit 0, failures are data) or not (exit 1), and why."""
        broken = self.not_run
        failing = self.total()
        if broken:
            return (
                f"FAILED: {len(broken)} of {len(self.cases)} case file(s) could not run (not collected, "
                f"or a harness error: listed above; errors of the run, not the framework's failures) "
                f"- run {self.run_id}"
            )
        not_passed = failing.failed + failing.errors + failing.host_fallback + failing.other
        return (
            f"OK: all {len(self.cases)} case(s) ran; {not_passed} subtest run(s) did not pass, "
            f"which is the framework's result (data), not an error of the run - run {self.run_id}"
        )

    def report(self) -> list[str]:
        """The table, the cases that could not run with their file, line and error, the verdict."""
        lines = [f"run {self.run_id}: outcomes of every subtest run, per case", *self.table()]
        for counts in self.not_run:
            lines += [f"{counts.case_id}: {reason}" for reason in counts.not_run]
        return [*lines, self.verdict()]
