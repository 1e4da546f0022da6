"""What the submission check says: one Problem per broken rule, gathered in a CheckReport, about
the Submitted files it read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

LISTED = 5  # examples named in one problem line


@dataclass(frozen=True)
class Problem:
    """One reason to refuse a submission: where, which rule, what is wrong and what to do."""

    where: str
    rule: str
    issue: str
    fix: str

    def render(self) -> str:
        return f"{self.where}: [{self.rule}] {self.issue}; {self.fix}"


@dataclass
class Submitted:
    """One file of the submission, and what it holds once read."""

    path: Path
    shown: str
    table: str
    source: str
    run_id: str
    data: pa.Table | None = None


@dataclass
class CheckReport:
    """What the check refused (problems) and, for the summary, what it read."""

    problems: list[Problem] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    files: int = 0
    matched: dict[str, str] = field(default_factory=dict)  # harness digest -> commit it is from
    cases_matched: int = 0  # case digests found in a commit
    warnings: list[str] = field(default_factory=list)  # said, not refused (e.g. a run without a chain)

    def add(self, where: str, rule: str, issue: str, fix: str) -> None:
        problem = Problem(where, rule, issue, fix)
        if problem not in self.problems:
            self.problems.append(problem)

    def lines(self) -> list[str]:
        return [p.render() for p in self.problems]

    def summary(self) -> list[str]:
        lines = [
            f"  {r['run_id']}: {r['source']} · {r['framework']} {r['framework_version']} · {r['device']} "
            f"{r['device_model']} · {r['mode']} · {r['status']} · {r['n_results']} row(s)"
            for r in self.runs
        ]
        commits = ", ".join(f"{commit[:10]}" for commit in sorted(set(self.matched.values())))
        return [
            f"OK: {len(self.runs)} run(s) in {self.files} file(s) pass the submission check "
            f"(harness digest of commit(s) {commits or '-'}; {self.cases_matched} case digest(s), each "
            "of a commit)",
            *lines,
            *(f"WARNING: {warning}" for warning in self.warnings),
        ]


def listed_values(values: Any) -> str:
    values = sorted(str(v) for v in values)
    more = f", ... ({len(values)} in all)" if len(values) > LISTED else ""
    return ", ".join(values[:LISTED]) + more
