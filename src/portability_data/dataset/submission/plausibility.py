"""Plausibility against the rest of the dataset: what a reviewer should look at, with the evidence.

Nothing here refuses: a fast new machine or a framework regression is real data that looks like
tampering. Each finding is a warning naming the row, the value and what it was compared with:
latencies below the run's own timer floor, a run whose latencies are orders of magnitude off the
committed runs of the same device model and framework version (median per-subtest ratio), and
outcomes that contradict the same subtest in the same setting (framework version, device model,
mode) where every committed row agrees.

The ratio limit is 5x, not "orders of magnitude": a submission whose every latency was multiplied
by 10 must be seen, and the committed runs of one setting agree far better (on 2026-12-05, over
the 103 pairs of committed runs of the same framework version, device model and mode sharing at
least 5 subtests, the largest median per-subtest ratio was 2.50x). A warning costs the reviewer a
look, never the submitter a refusal.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from portability_data.dataset.submission.accounting import committed_files
from portability_data.dataset.submission.problems import CheckReport, listed_values

RATIO_LIMIT = 5.0  # median latency ratio beyond which (either way) a run is flagged: see the docstring
COLUMNS = ["run_id", "test_id", "outcome", "op_latencies_ms", "framework_version", "device_model", "mode"]
FIX = "the reviewer compares the evidence; the submitter explains it (a new machine, a regression)"


def _median(values: list[float] | None) -> float | None:
    kept = [v for v in values or [] if v is not None and v > 0]
    return statistics.median(kept) if kept else None


def committed_setting(repo_root: Path, row: dict[str, Any]) -> list[dict[str, Any]]:
    """The committed shard rows of the run's setting (framework version, device model, mode),
    other runs only."""
    found: list[dict[str, Any]] = []
    for path in committed_files(repo_root, "results"):
        if path.stem == row["run_id"] or not path.is_file():
            continue
        try:
            table = pq.read_table(path, columns=COLUMNS)
        except (pa.ArrowException, OSError, ValueError, KeyError):
            continue
        same = pc.and_(
            pc.and_(
                pc.equal(table.column("framework_version"), row["framework_version"]),
                pc.equal(table.column("device_model"), row["device_model"]),
            ),
            pc.equal(table.column("mode"), row["mode"]),
        )
        found.extend(table.filter(same).to_pylist())
    return found


def check_plausibility(
    row: dict[str, Any], shard: pa.Table, shard_where: str, repo_root: Path, report: CheckReport
) -> None:
    """Warn (never refuse) about latencies and outcomes the rest of the dataset makes implausible."""
    rows = shard.select(["test_id", "repeat", "outcome", "op_latencies_ms"]).to_pylist()
    floor = row.get("timer_floor_ms")
    if isinstance(floor, float) and floor > 0:
        below = [
            f"{r['test_id']} repeat {r['repeat']}: {v!r} ms"
            for r in rows
            for v in r["op_latencies_ms"] or []
            if v is not None and 0 < v < floor
        ]
        if below:
            report.warn(
                shard_where,
                "plausibility",
                f"{len(below)} op latenc(ies) below the run's own timer_floor_ms {floor!r} "
                f"(a timer cannot measure less): {listed_values(below)}",
                FIX,
            )
    others = committed_setting(repo_root, row)
    if not others:
        return
    setting = f"{row['framework']} {row['framework_version']} on {row['device_model']} ({row['mode']})"
    theirs: dict[str, list[float]] = defaultdict(list)
    outcomes: dict[str, set[str]] = defaultdict(set)
    runs: dict[str, set[str]] = defaultdict(set)
    for other in others:
        median = _median(other["op_latencies_ms"])
        if median is not None:
            theirs[other["test_id"]].append(median)
        outcomes[other["test_id"]].add(other["outcome"])
        runs[other["test_id"]].add(other["run_id"])
    ratios = []
    for r in rows:
        mine = _median(r["op_latencies_ms"])
        if mine is not None and theirs.get(r["test_id"]):
            ratios.append((mine / statistics.median(theirs[r["test_id"]]), r["test_id"], r["repeat"], mine))
    if ratios:
        ratio = statistics.median(q for q, *_ in ratios)
        if ratio > RATIO_LIMIT or ratio < 1 / RATIO_LIMIT:
            examples = [
                f"{t} repeat {k}: {mine:.4g} ms vs {statistics.median(theirs[t]):.4g} ms"
                for _, t, k, mine in sorted(ratios, key=lambda x: -abs(x[0]))[:3]
            ]
            report.warn(
                shard_where,
                "plausibility",
                f"latencies {ratio:.3g}x those of {len(set().union(*runs.values()))} committed run(s) of "
                f"{setting} (median per-subtest ratio over {len(ratios)} row(s); limit {RATIO_LIMIT:g}x "
                f"either way), e.g. {'; '.join(examples)}",
                FIX,
            )
    contradicted = [
        f"{r['test_id']} repeat {r['repeat']}: {r['outcome']} where {len(runs[r['test_id']])} committed "
        f"run(s) say {next(iter(outcomes[r['test_id']]))}"
        for r in rows
        if len(outcomes.get(r["test_id"], ())) == 1 and r["outcome"] not in outcomes[r["test_id"]]
    ]
    if contradicted:
        report.warn(
            shard_where,
            "plausibility",
            f"{len(contradicted)} outcome(s) contradict every committed row of the same subtest in "
            f"{setting}: {listed_values(contradicted)}",
            FIX,
        )
