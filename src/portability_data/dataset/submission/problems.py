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
    warnings: list[Problem] = field(default_factory=list)  # for the reviewer: evidence, not refusals
    subtests_expected: int = 0  # (subtest, repeat) rows the runs were held to (accounting)

    def add(self, where: str, rule: str, issue: str, fix: str) -> None:
        problem = Problem(where, rule, issue, fix)
        if problem not in self.problems:
            self.problems.append(problem)

    def warn(self, where: str, rule: str, issue: str, fix: str) -> None:
        """A finding the reviewer weighs (plausibility): shown, but the check still passes."""
        warning = Problem(where, rule, issue, fix)
        if warning not in self.warnings:
            self.warnings.append(warning)

    def lines(self) -> list[str]:
        return [p.render() for p in self.problems]

    def warning_lines(self) -> list[str]:
        return [f"WARNING {p.render()}" for p in self.warnings]

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
            f"of a commit; {self.subtests_expected} (subtest, repeat) row(s) expected; "
            f"{len(self.warnings)} warning(s))",
            *lines,
        ]


def listed_values(values: Any) -> str:
    values = sorted(str(v) for v in values)
    more = f", ... ({len(values)} in all)" if len(values) > LISTED else ""
    return ", ".join(values[:LISTED]) + more
