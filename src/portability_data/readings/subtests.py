"""A subtest's rows read as one status: the rule that aggregation pools by (`Subtest.status`) and
that the report applies to the pooled table's rows, so both read a subtest the same way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from portability_data.tables.contracts import FAILING_OUTCOMES

if TYPE_CHECKING:
    import pandas as pd

RAN = frozenset({"passed", "host_fallback"})  # the subtest ran through (host_fallback: partly on the host)
GROUP = ("source", "framework", "framework_version", "function", "device", "device_model", "mode")


@dataclass
class Subtest:
    """Everything aggregation needs about one subtest of one function group."""

    outcomes: list[str] = field(default_factory=list)
    categories: list[str | None] = field(default_factory=list)
    ops: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    order_dependent: bool = False  # a failing row passed alone in a fresh worker
    not_compiled: bool = False  # compiled mode, but some row did not really compile
    unconfirmed: bool = False  # a row failed once in a run closed before confirming it alone

    def status(self) -> str:
        """failed / passed / host_fallback / unknown / harness / skipped, per the rule in
        aggregate.py's docstring."""
        counted = [(o, c) for o, c in zip(self.outcomes, self.categories) if o != "skipped"]
        if any(o in FAILING_OUTCOMES and c != "harness" for o, c in counted):
            return "failed"
        plain = [o for o, c in counted if not (o in FAILING_OUTCOMES and c == "harness")]
        if plain and all(o in RAN for o in plain):
            return "host_fallback" if "host_fallback" in plain else "passed"
        if any(o == "unknown" for o in plain):
            return "unknown"
        if counted:
            return "harness" if not plain else "unknown"
        return "skipped"

    def has_passing_result(self) -> bool:
        """The study's latency filter: kept unless no row passed (unknown and harness rows keep it)."""
        return any(
            o in ("passed", "host_fallback", "unknown") or (o in FAILING_OUTCOMES and c == "harness")
            for o, c in zip(self.outcomes, self.categories)
        )

    def dominant_category(self) -> str | None:
        pairs = zip(self.outcomes, self.categories)
        return most_common_value(c or "other" for o, c in pairs if o in FAILING_OUTCOMES and c != "harness")

    def timed_in_every_run(self, repeats: Mapping[str, int]) -> bool:
        """Operation timings in every repeat of every run the subtest appears in."""
        runs = {run_id for run_id, _ in self.ops}
        return bool(runs) and all(
            self.ops.get((run_id, r)) for run_id in runs for r in range(repeats.get(run_id, 1))
        )

    def pooled(self) -> list[float]:
        return [v for key in sorted(self.ops) for v in self.ops[key]]


def most_common_value(values: Iterable[str]) -> str | None:
    counts = Counter(values)
    if not counts:
        return None
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


# A setting: what one pooled outcome is measured on (the report groups and names them by it).
SETTING = ("source", "framework", "framework_version", "device", "device_model", "mode")


def partial_run_ids(runs: pd.DataFrame | None) -> set[str]:
    """Runs closed partial (runs.status partial): their failures were not all confirmed alone, so
    a failing row of theirs without a confirmation is unknown (aggregation and the report alike)."""
    if runs is None or not len(runs) or "status" not in runs:
        return set()
    return {str(r) for r, status in zip(runs["run_id"], runs["status"]) if status == "partial"}
