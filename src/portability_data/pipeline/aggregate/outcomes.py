"""Outcome classification (aggregate.py's docstring, "Outcomes"): a function group's outcome from
its subtests' statuses, and which groups are `unavailable` (the function does not exist in that
framework version), from the results rows or from the cases table's removed functions.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from portability_data.readings.frames import column_values, typed_frame
from portability_data.readings.subtests import GROUP, Subtest, most_common_value
from portability_data.tables.contracts import OUTCOMES


def function_outcome(statuses: Counter) -> str:
    """success / partial_failure / complete_failure / host_fallback / unknown from subtest status
    counts. A subtest that ran with ops on the host ran: beside failures it makes a partial failure;
    without any, the function is host_fallback (it runs, not all of it on the device)."""
    ran, failed, unknown = (
        statuses["passed"] + statuses["host_fallback"],
        statuses["failed"],
        statuses["unknown"],
    )
    if ran and failed:
        return "partial_failure"
    if unknown or not (ran or failed):
        return "unknown"
    if not ran:
        return "complete_failure"
    return "host_fallback" if statuses["host_fallback"] else "success"


def compute_outcomes(
    groups: dict[tuple, dict[tuple[str, str], Subtest]], unavailable_groups: set[tuple] | None = None
) -> pd.DataFrame:
    rows = []
    for group, all_subtests in sorted(groups.items()):
        subtests = {k: s for k, s in all_subtests.items() if not s.not_compiled}
        statuses = Counter(s.status() for s in subtests.values())
        failed = [s.dominant_category() for s in subtests.values() if s.status() == "failed"]
        outcome = function_outcome(statuses)
        if not subtests and all_subtests:
            outcome = "not_compiled"
        if unavailable_groups and group in unavailable_groups:
            outcome = "unavailable"
        rows.append(
            {
                **dict(zip(GROUP, group)),
                "outcome": outcome,
                "n_subtests": statuses["passed"]
                + statuses["host_fallback"]
                + statuses["failed"]
                + statuses["unknown"],
                "n_passed": statuses["passed"],
                "n_failed": statuses["failed"],
                "n_skipped": statuses["skipped"],
                "dominant_failure_category": most_common_value(c for c in failed if c),
                "n_order_dependent": sum(s.order_dependent for s in subtests.values()),
                "n_not_compiled": len(all_subtests) - len(subtests),
                "n_host_fallback": statuses["host_fallback"],
            }
        )
    return typed_frame(OUTCOMES, rows)


UNAVAILABLE_ERROR = "FunctionUnavailable"


def unavailable_from_results(results: pd.DataFrame) -> set[tuple]:
    """Groups whose every row is skipped with error_type FunctionUnavailable."""
    verdict: dict[tuple, bool] = {}
    columns = {name: column_values(results[name]) for name in (*GROUP, "outcome", "error_type")}
    for i in range(len(results)):
        group = tuple(columns[name][i] for name in GROUP)
        marked = columns["outcome"][i] == "skipped" and columns["error_type"][i] == UNAVAILABLE_ERROR
        verdict[group] = verdict.get(group, True) and marked
    return {group for group, all_marked in verdict.items() if all_marked}


def _version_at_least(version: str, since: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) >= Version(since)
    except InvalidVersion:
        return False


def removed_groups(cases: pd.DataFrame, runs: pd.DataFrame) -> set[tuple]:
    """Function groups of every run group in which a removed case's function no longer exists."""
    removed = [
        (framework, function, since)
        for framework, function, status, since in zip(
            column_values(cases["framework"]),
            column_values(cases["function"]),
            column_values(cases["status"]),
            column_values(cases["removed_since"]),
        )
        if status == "removed" and since
    ]
    run_columns = ("source", "framework", "framework_version", "device", "device_model", "mode")
    run_groups = set(zip(*(column_values(runs[c]) for c in run_columns))) if len(runs) else set()
    found = set()
    for source, framework, version, device, device_model, mode in run_groups:
        for case_framework, function, since in removed:
            if case_framework == framework and _version_at_least(version, since):
                found.add((source, framework, version, function, device, device_model, mode))
    return found
