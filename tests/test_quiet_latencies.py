"""Latencies from quiet runs only (issue 49): made-up runs, quiet, contended and overlapping; a
contended run counts for outcomes and never for latencies, overlapping runs are one repeat."""

from __future__ import annotations

import pandas as pd

from portability_data.pipeline.aggregate.build import aggregate
from portability_data.readings.quiet import (
    NONE_QUIET,
    QUIET,
    UNMEASURED,
    contended_run_ids,
    independent_repeats,
    latency_basis,
)
from tests.test_aggregate import _run_row, frame, row

CODE = {"torch.f": "f1"}


def _runs(spec: dict[str, tuple[str, str, float | None, float | None]]) -> pd.DataFrame:
    """run_id -> (started, finished, host_load_max, host_other_cpu_max), all of the same code."""
    rows = []
    for run_id, (started, finished, load, other) in spec.items():
        rows.append(
            {
                **_run_row(run_id, started, "H", CODE),
                "finished_at": pd.Timestamp(finished, tz="UTC"),
                "host_load_max": load,
                "host_other_cpu_max": other,
            }
        )
    return pd.DataFrame(rows)


def _results(timings: dict[str, tuple[str, float]]) -> pd.DataFrame:
    """run_id -> (outcome of subtest t1, its timing)."""
    return frame([row("t1", outcome, [ms], run_id=run_id) for run_id, (outcome, ms) in timings.items()])


def test_a_contended_run_counts_for_the_outcome_but_not_the_latency() -> None:
    """Two runs side by side (the torch xla compiled runs of 2026-11-29: other work ~1.6 cores) and
    one run without a load measure: busy-b's failure makes the outcome a failure, and the busy runs'
    timings (100x the other's) never reach the latency."""
    runs = _runs(
        {
            "busy-a": ("2026-11-29T03:46", "2026-11-29T05:58", 7.98, 1.61),
            "busy-b": ("2026-11-29T03:47", "2026-11-29T07:15", 7.69, 1.61),
            "unmeasured": ("2026-11-30T03:00", "2026-11-30T04:00", None, None),
        }
    )
    assert contended_run_ids(runs, 1.5) == {"busy-a", "busy-b"}
    assert contended_run_ids(runs, 3.0) == frozenset()  # other work 1.61 <= 3.0 - 1: quiet
    results = _results(
        {"busy-a": ("passed", 100.0), "busy-b": ("failed", 100.0), "unmeasured": ("passed", 1.0)}
    )
    outcomes, _ = aggregate(results, runs, quiet_load_max=1.5)
    assert outcomes.iloc[0]["outcome"] == "complete_failure"  # pooled for outcomes
    results = _results({r: ("passed", 100.0 if r.startswith("busy") else 1.0) for r in runs["run_id"]})
    outcomes, latencies = aggregate(results, runs, quiet_load_max=1.5)
    assert outcomes.iloc[0]["outcome"] == "success"
    assert list(latencies["latency_ms"]) == [1.0]
    assert aggregate(results, runs, quiet_load_max=None)[1].iloc[0]["latency_ms"] == 67.0  # rule off


def test_a_setting_with_only_contended_runs_has_no_latency_and_unmeasured_runs_keep_theirs() -> None:
    runs = _runs(
        {
            "busy": ("2026-11-29T03:46", "2026-11-29T05:58", 7.98, 1.61),
            "old-busy": ("2026-11-28T03:46", "2026-11-28T05:58", 3.0, None),
        }
    )
    results = _results({"busy": ("passed", 100.0), "old-busy": ("passed", 50.0)})
    outcomes, latencies = aggregate(results, runs, quiet_load_max=1.5)
    assert outcomes.iloc[0]["outcome"] == "success" and latencies.empty
    runs.loc[runs["run_id"] == "old-busy", "host_load_max"] = None  # unmeasured: its timings stay
    outcomes, latencies = aggregate(results, runs, quiet_load_max=1.5)
    assert list(latencies["latency_ms"]) == [50.0]


def test_overlapping_runs_are_one_repeat() -> None:
    at = pd.Timestamp
    side_by_side = [
        (at("2026-11-29T03:46"), at("2026-11-29T05:58")),
        (at("2026-11-29T03:47"), at("2026-11-29T07:15")),
        (at("2026-11-29T07:00"), at("2026-11-29T07:32")),  # overlaps the second only: a chain
    ]
    assert independent_repeats(side_by_side) == 1
    one_after_another = [(at("2026-11-29T01:00"), at("2026-11-29T02:00")), (at("2026-11-29T02:00"), None)]
    assert independent_repeats(one_after_another) == 2  # back to back, and one without a finish
    assert independent_repeats([*side_by_side, (at("2026-11-30T00:00"), at("2026-11-30T01:00"))]) == 2
    assert independent_repeats([]) == 0


def test_the_latency_basis_counts_quiet_repeats_and_marks_a_setting_with_none() -> None:
    runs = _runs(
        {
            "quiet-a": ("2026-11-29T01:00", "2026-11-29T02:00", 1.2, 0.1),
            "quiet-b": ("2026-11-29T01:30", "2026-11-29T02:30", 1.2, 0.3),  # beside quiet-a
            "quiet-c": ("2026-11-30T01:00", "2026-11-30T02:00", 1.0, None),
            "busy": ("2026-12-01T01:00", "2026-12-01T02:00", 5.0, 1.6),
        }
    )
    pooled = _results({r: ("passed", 1.0) for r in runs["run_id"]})
    basis = latency_basis(pooled, runs, 1.5).iloc[0]
    assert (basis["n_pooled_runs"], basis["n_quiet_runs"], basis["n_quiet_repeats"]) == (4, 3, 2)
    assert (basis["n_contended_runs"], basis["n_unmeasured_runs"], basis["latencies_from"]) == (1, 0, QUIET)
    only_busy = latency_basis(_results({"busy": ("passed", 1.0)}), runs, 1.5).iloc[0]
    assert (only_busy["n_quiet_repeats"], only_busy["latencies_from"]) == (0, NONE_QUIET)
    study = latency_basis(_results({"study": ("passed", 1.0)}), runs, 1.5).iloc[0]  # not in runs
    assert (study["n_unmeasured_runs"], study["latencies_from"]) == (1, UNMEASURED)
