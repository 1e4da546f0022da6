"""Report benchmark: the report's tables that group thousands of subtests, hundreds of functions
or thousands of name x dtype x setting groups, computed in one pass over plain columns (the
host-fallback section's status counts and function ranking, report.host_fallback; the census
section's largest cross-framework disagreements, readings.crossframework) against the same tables
computed one pandas group at a time, the form they had before, measured in the same run on the
same rows.

`dvc repro` (and the suite's pipeline and report tests) build the report each time, and the census
keeps adding groups. The per-group arm is also the oracle: both arms must give equal frames
(every row, not only the 10 or 20 the report prints), or the benchmark stops.

Usage: python benchmarks/bench_report_tables.py [--rounds 3] [--data-dir data]
    [--out benchmarks/results/bench_report_tables.json]
Prints the median seconds of each arm and their ratio, and writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings import crossframework
from portability_data.readings.subtests import Subtest
from portability_data.report import host_fallback as section
from portability_data.tables.contracts import FAILING_OUTCOMES
from portability_data.tables.tableio import read_table

REPO = Path(__file__).resolve().parent.parent


def status_per_group(rows: pd.DataFrame) -> str:
    """One subtest's status from its own pandas group (the baseline's unit of work)."""
    order_dependent = ~section._counted(rows) & rows["outcome"].isin([*FAILING_OUTCOMES, "host_fallback"])
    categories = rows["failure_category"] if "failure_category" in rows else pd.Series(None, index=rows.index)
    subtest = Subtest(
        outcomes=list(rows["outcome"].where(~order_dependent, "passed")),
        categories=list(categories.where(~order_dependent, None)),
    )
    return section.STATUS_NAMES.get(subtest.status(), "other")


def summary_per_group(rows: pd.DataFrame) -> pd.DataFrame:
    """setting_summary's status counts, a pandas group per subtest."""
    out = []
    for setting, group in rows.assign(suite=section.suites(rows)).groupby([*section.SETTING, "suite"]):
        status = group.groupby(["case_id", "subtest"]).apply(status_per_group, include_groups=False)
        out.append(
            {
                **dict(zip([*section.SETTING, "suite"], setting)),
                **{f"subtests_{name}": int((status == name).sum()) for name in ("passed", "failing")},
                "subtests_host_fallback": int((status == "host_fallback").sum()),
                "subtests_other": int((status == "other").sum()),
            }
        )
    return pd.DataFrame(out)


def top_per_group(rows: pd.DataFrame) -> pd.DataFrame:
    """top_functions over every function, a pandas group per function."""
    keyed = [*section.SETTING, "suite", "function"]
    out = []
    for keys, group in rows.assign(suite=section.suites(rows)).groupby(keyed, sort=True):
        counted = group[section._counted(group)]
        fell = counted[counted["outcome"] == "host_fallback"]
        calls = counted.assign(calls=counted["host_fallback_calls"].fillna(0))
        per_repeat = float(calls.groupby(["case_id", "subtest"])["calls"].mean().sum()) if len(calls) else 0.0
        if per_repeat <= 0 and fell.empty:
            continue
        ops: Counter[str] = Counter(op for ops_ in counted["host_fallback_ops"].dropna() for op in ops_)
        out.append(
            {
                **dict(zip(keyed, keys)),
                "subtests": group.groupby(["case_id", "subtest"]).ngroups,
                "subtests_host_fallback": fell.groupby(["case_id", "subtest"]).ngroups,
                "repeats": section.repeats_measured(group),
                "host_fallback_calls_per_repeat": round(per_repeat, 1),
                "ops": ", ".join(op for op, _ in ops.most_common(5)),
                "host_reads_only": bool(ops) and set(ops) <= section.HOST_READ_OPS,
            }
        )
    frame = pd.DataFrame(out)
    return frame.sort_values(["host_fallback_calls_per_repeat", "function"], ascending=[False, True])


def disagreements_per_group(table: pd.DataFrame) -> pd.DataFrame:
    """largest_disagreements over every group, a pandas group per name x dtype x setting."""
    summary = []
    for key, group in table.groupby(crossframework.GROUP):
        apart = group.dropna(subset=["stands_apart"])
        first = apart.iloc[0] if len(apart) else None
        summary.append(
            {
                **dict(zip(crossframework.GROUP, key, strict=True)),
                "statuses": ", ".join(f"{f} {s}" for f, s in zip(group["framework"], group["status"])),
                "disagree": group["agreement"].iloc[0] == "disagree",
                "failed": float(group["samples_failed"].fillna(0).max()),
                "rel_error_spread": group["rel_error_spread"].iloc[0],
                "apart": None if first is None else f"{first['framework']} {first['stands_apart']}",
                "message": None if first is None else crossframework.first_line(first["error_message"]),
            }
        )
    return crossframework.rank_disagreements(pd.DataFrame(summary), limit=len(summary))


def one_pass_summary(rows: pd.DataFrame) -> pd.DataFrame:
    columns = [*section.SETTING, "suite", "subtests_passed", "subtests_failing"]
    columns += ["subtests_host_fallback", "subtests_other"]
    return section.setting_summary(rows)[columns]


def timed(function: Callable[[pd.DataFrame], pd.DataFrame], rows: pd.DataFrame) -> tuple[float, pd.DataFrame]:
    start = time.perf_counter()
    frame = function(rows)
    return time.perf_counter() - start, frame.reset_index(drop=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, default=REPO / "data")
    default_out = REPO / "benchmarks/results/bench_report_tables.json"
    parser.add_argument("--out", type=Path, default=default_out)
    args = parser.parse_args()
    rows = section.xla_rows(args.data_dir)
    groups = read_table("crossframework", args.data_dir / "census" / "crossframework.parquet")
    tables = {
        "status counts per setting (setting_summary)": (summary_per_group, one_pass_summary, rows),
        "functions by host executions (top_functions, all)": (
            top_per_group,
            lambda frame: section.top_functions(frame, limit=len(frame)),
            rows,
        ),
        "largest cross-framework disagreements (all)": (
            disagreements_per_group,
            lambda table: crossframework.largest_disagreements(table, limit=len(table)),
            groups,
        ),
    }
    results: list[dict[str, Any]] = []
    for name, (baseline, one_pass, frame_in) in tables.items():
        seconds: dict[str, list[float]] = {"per_group": [], "one_pass": []}
        for _ in range(args.rounds):  # alternating, so that load on the host falls on both arms
            took, expected = timed(baseline, frame_in)
            seconds["per_group"].append(took)
            took, got = timed(one_pass, frame_in)
            seconds["one_pass"].append(took)
            pd.testing.assert_frame_equal(expected, got, check_dtype=False)
        medians = {arm: statistics.median(values) for arm, values in seconds.items()}
        results.append(
            {
                "table": name,
                "rows_in": len(frame_in),
                "rows_out": len(got),
                "seconds": seconds,
                "median_s": medians,
                "ratio_per_group_vs_one_pass": medians["per_group"] / medians["one_pass"],
                "frames_equal": True,
            }
        )
        print(
            f"{name}: {len(frame_in)} rows in, {len(got)} out; per group {medians['per_group']:.2f} s, "
            f"one pass {medians['one_pass']:.2f} s: {medians['per_group'] / medians['one_pass']:.1f}x; "
            "frames equal"
        )
    payload = {"rounds": args.rounds, "data_dir": str(args.data_dir), "results": results}
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(args.out)


if __name__ == "__main__":
    main()
