"""The rules one run is held to: its runs row against its shard (pairing, repeats, no duplicate
rows), the device and versions named, plausible values, intact digests and a complete run covering
the cases it lists.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import pyarrow as pa

from portability_data.dataset.submission.problems import CheckReport, Submitted, listed_values
from portability_data.runner.provenance import listed_cases_digest
from portability_data.tables.contracts import DEVICES

# What the runner writes when the device never said what it is (runner.supervisor.finish: the
# device name, "unknown"), and the empty spellings of the same.
UNKNOWN_VALUES = frozenset({"", "unknown", "none", "null", "n/a", *DEVICES})
# Columns every shard row shares with its runs row.
SHARED_COLUMNS = ("source", "framework", "device", "mode", "framework_version", "device_model")


def _unknown(value: Any) -> bool:
    return value is None or str(value).strip().lower() in UNKNOWN_VALUES


def _finite_positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def check_run(runs_file: Submitted, shard_file: Submitted, report: CheckReport) -> dict[str, Any] | None:
    """The runs row against its shard, and both against the submission rules; returns the row."""
    assert runs_file.data is not None and shard_file.data is not None
    where, shard_where = runs_file.shown, shard_file.shown
    fix_rerun = "submit the files as the runner wrote them"
    if runs_file.data.num_rows != 1:
        report.add(where, "pairing", f"{runs_file.data.num_rows} runs rows, a run writes one", fix_rerun)
        return None
    row = runs_file.data.to_pylist()[0]
    shard = shard_file.data
    column = {name: shard.column(name).to_pylist() for name in ("run_id", "test_id", "repeat", "case_id")}
    if row["run_id"] != runs_file.run_id:
        report.add(
            where,
            "pairing",
            f"runs row has run_id {row['run_id']!r}, the file is {runs_file.run_id}.parquet",
            fix_rerun,
        )
    if set(column["run_id"]) - {runs_file.run_id}:
        report.add(
            shard_where,
            "pairing",
            f"shard rows carry run_id {listed_values(set(column['run_id']) - {runs_file.run_id})}, "
            f"the file is {shard_file.run_id}.parquet",
            fix_rerun,
        )
    if row["source"] != runs_file.source:
        report.add(
            where,
            "pairing",
            f"runs row has source {row['source']!r}, it lies under {runs_file.source}/",
            fix_rerun,
        )
    for name in SHARED_COLUMNS:
        expected = runs_file.source if name == "source" else row[name]
        differing = set(shard.column(name).to_pylist()) - {expected}
        if differing:
            report.add(
                shard_where,
                "pairing",
                f"column {name}: the runs row says {expected!r}, shard rows say {listed_values(differing)}",
                fix_rerun,
            )
    if row["n_results"] != shard.num_rows:
        report.add(
            where,
            "pairing",
            f"n_results is {row['n_results']}, the shard has {shard.num_rows} row(s)",
            fix_rerun,
        )
    repeats, seen = row["repeats"], set(column["repeat"])
    beyond = [(t, r) for t, r in zip(column["test_id"], column["repeat"]) if r >= repeats]
    if beyond:
        report.add(
            shard_where,
            "repeats",
            f"{len(beyond)} row(s) have a repeat index >= the runs row's repeats={repeats} "
            f"(first: {beyond[0][0]} repeat {beyond[0][1]}): more rows than the run allows",
            fix_rerun,
        )
    elif row["status"] == "complete" and seen != set(range(repeats)):
        report.add(
            where,
            "repeats",
            f"complete run with repeats={repeats}, "
            f"the shard has repeat values {listed_values(seen) or 'none'}",
            fix_rerun,
        )
    twice = [key for key, count in Counter(zip(column["test_id"], column["repeat"])).items() if count > 1]
    if twice:
        report.add(
            shard_where,
            "rows",
            f"{len(twice)} (test_id, repeat) pair(s) appear more than once (first: {twice[0][0]} repeat "
            f"{twice[0][1]}): more rows than the cases allow",
            fix_rerun,
        )
    _check_values(row, shard, where, shard_where, report)
    _check_cases(row, set(column["case_id"]), where, shard_where, report)
    return row


def _check_values(
    row: dict[str, Any], shard: pa.Table, where: str, shard_where: str, report: CheckReport
) -> None:
    """The device and versions are named; latencies, times and the timer floor are plausible."""
    for name in ("device_model", "framework_version"):
        if _unknown(row[name]):
            report.add(
                where,
                "identity",
                f"{name} is {row[name]!r}: the device or framework did not say what it is",
                "run with a runner that records it (the worker reports the device model and version)",
            )
    if not _finite_positive(row["timer_floor_ms"]):
        report.add(
            where,
            "implausible",
            f"timer_floor_ms is {row['timer_floor_ms']!r}: the timer's floor was not measured",
            "re-run with the current runner (the worker measures the floor when it starts)",
        )
    latencies = shard.column("op_latencies_ms").to_pylist()
    test_ids = shard.column("test_id").to_pylist()
    bad = [(t, v) for t, values in zip(test_ids, latencies) for v in values or [] if not _finite_positive(v)]
    if bad:
        report.add(
            shard_where,
            "implausible",
            f"{len(bad)} op latenc(ies) <= 0 or not finite (first: {bad[0][0]}: {bad[0][1]!r} ms)",
            "a timed operation takes time: submit the measured values",
        )
    negative = [
        (t, v)
        for t, v in zip(test_ids, shard.column("test_time_ms").to_pylist())
        if v is not None and not v >= 0
    ]
    if negative:
        report.add(
            shard_where,
            "implausible",
            f"{len(negative)} test_time_ms < 0 or not a number (first: {negative[0][0]}: {negative[0][1]!r})",
            "submit the measured values",
        )


def _check_cases(
    row: dict[str, Any], covered: set[str], where: str, shard_where: str, report: CheckReport
) -> None:
    """Status, digests present and consistent, and a complete run covering every case it lists."""
    if row["status"] not in ("complete", "partial"):
        report.add(
            where,
            "status",
            f"status {row['status']!r}: the run did not finish",
            f"finish it (`portability run --resume {row['run_id']}`) or close it (`--close {row['run_id']}`)",
        )
    if not row.get("harness_digest"):
        report.add(where, "digest", "no harness_digest", "re-run with the current runner, which records it")
    try:
        listed = json.loads(row["case_digests"]) if row.get("case_digests") else None
    except ValueError:
        listed = None
    if not isinstance(listed, dict) or not all(isinstance(v, str) for v in listed.values()):
        report.add(
            where, "digest", "no case_digests object", "re-run with the current runner, which records it"
        )
        return
    if row.get("cases_digest") != listed_cases_digest(listed):
        report.add(
            where, "digest", "cases_digest is not the digest of its case_digests", "submit the row as written"
        )
    extra = covered - set(listed)
    if extra:
        report.add(
            shard_where,
            "rows",
            f"rows of case(s) the runs row's case_digests do not list: {listed_values(extra)}",
            "submit the files as the runner wrote them",
        )
    missing = set(listed) - covered
    if row["status"] == "complete" and missing:
        report.add(
            where,
            "coverage",
            f"complete run whose shard covers {len(set(listed) & covered)} of the {len(listed)} case(s) it "
            f"lists (missing: {listed_values(missing)})",
            "finish the run, or close an unfinished one as partial (`portability run --close <run_id>`)",
        )
