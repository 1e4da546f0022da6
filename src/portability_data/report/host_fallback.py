"""The report section on host fallback (schema 7): on PyTorch/XLA, which functions ran ops on the host
instead of the device, which ops, and how often the device compiled.

The study's TPU slowdowns come largely from the XLA layer: ops without a lowering run on the host,
and graphs compile again for every new shape. Our `xla` device (torch_xla on XLA's CPU backend)
shares that layer without a TPU, and the harness counts both per subtest (results
`host_fallback_ops`, `host_fallback_calls`, `device_compiles`, `device_compiles_timed`), so this
section reads them from the pooled results rows of every XLA setting (device xla or tpu).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings.frames import plain_frame
from portability_data.readings.subtests import Subtest
from portability_data.report.inputs import FAILING as FAILING_FUNCTION_OUTCOMES
from portability_data.report.inputs import setting_label
from portability_data.report.render import Section
from portability_data.tables.contracts import FAILING_OUTCOMES, is_census_case
from portability_data.tables.tableio import read_table

XLA_DEVICES = ("xla", "tpu")
TOP_FUNCTIONS = 20
SETTING = ["framework", "framework_version", "device", "device_model", "mode"]
# Fallback ops that are reads of a value on the host rather than ops without a lowering: torch_xla
# runs `Tensor.item()` (aten::_local_scalar_dense) through its CPU fallback, which executes the
# pending graph and copies the scalar back (PyTorch/XLA "Troubleshooting": its counters list it among
# the fallback ops). Kept as torch_xla counts it, and named apart so a reader can tell the two.
HOST_READ_OPS = frozenset({"aten::_local_scalar_dense"})


def suites(rows: pd.DataFrame) -> pd.Series:
    """census or curated per row: a census entry (torch.census.opinfo.abs) and a curated case of
    the same function (torch.abs) are counted apart, and only curated cases meet the study's."""
    return pd.Series(
        ["census" if is_census_case(case) else "curated" for case in rows["case_id"]], index=rows.index
    )


def op_kind(op: str) -> str:
    """ "host read" for a value read back to the host (HOST_READ_OPS), else "op on the host"."""
    return "host read" if op in HOST_READ_OPS else "op on the host"


def _beyond_reads(ops: Any) -> bool:
    """True when a row's fallen-back ops include one that is not a host read."""
    return isinstance(ops, (list, tuple)) and any(op not in HOST_READ_OPS for op in ops)


def xla_rows(data_dir: Path) -> pd.DataFrame:
    """Our results rows on an XLA device as the aggregate stage pooled them and read their failures
    (the `pooled` table: newest harness and case files per setting and case, quiet runs preferred;
    a failure the rules put on the harness does not fail its subtest); empty when there are none."""
    if not (data_dir / "pooled").exists():
        return pd.DataFrame()
    rows = read_table("pooled", data_dir / "pooled")
    rows = rows[
        rows["device"].isin(XLA_DEVICES) & (rows["source"] != "mince2023") & rows["superseded_reason"].isna()
    ]
    if rows.empty:
        return pd.DataFrame()
    return plain_frame(rows.drop(columns=["superseded_reason", "superseded_by"]).reset_index(drop=True))


def _counted(frame: pd.DataFrame) -> pd.Series:
    """Rows that count: not shown order-dependent alone (their fallback came only after others)."""
    return frame["confirmation"] != "order_dependent"


def _fell_back(frame: pd.DataFrame) -> pd.Series:
    """Rows whose subtest ran ops on the host (a host fallback not shown order-dependent alone)."""
    return (frame["outcome"] == "host_fallback") & _counted(frame)


STATUS_NAMES = {"failed": "failing", "passed": "passed", "host_fallback": "host_fallback"}


def subtest_statuses(rows: pd.DataFrame) -> list[str]:
    """failing / host_fallback / passed / other for each subtest (case_id, subtest) of these rows
    over its rows (every repeat of every pooled run), by aggregation's own rule (`Subtest.status`),
    a row shown order-dependent alone counting as passed as `collect_subtests` counts it. One pass
    over plain columns: a pandas group per subtest costs ~2 ms, and an xla census has thousands
    (benchmarks/bench_report_tables.py)."""
    order_dependent = ~_counted(rows) & rows["outcome"].isin([*FAILING_OUTCOMES, "host_fallback"])
    categories = list(rows["failure_category"]) if "failure_category" in rows else [None] * len(rows)
    subtests: dict[tuple[Any, Any], Subtest] = {}
    for case, name, outcome, category, alone_passed in zip(
        rows["case_id"], rows["subtest"], rows["outcome"], categories, order_dependent
    ):
        subtest = subtests.setdefault((case, name), Subtest())
        subtest.outcomes.append("passed" if alone_passed else outcome)
        subtest.categories.append(None if alone_passed else category)
    return [STATUS_NAMES.get(subtest.status(), "other") for subtest in subtests.values()]


def repeats_measured(rows: pd.DataFrame) -> int:
    """The most repeats a subtest of these rows was measured in (every run together): 3 for a
    curated run, 1 for the census."""
    return int(rows.groupby(["case_id", "subtest"]).size().max()) if len(rows) else 0


def setting_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per XLA setting and suite: subtests by status over their repeats, functions with a host
    fallback, compilations."""
    out = []
    for setting, group in rows.assign(suite=suites(rows)).groupby([*SETTING, "suite"], sort=True):
        subtests = group.groupby(["case_id", "subtest"])
        status = pd.Series(subtest_statuses(group), dtype=object)
        fell = group[_fell_back(group)]
        compiles = group["device_compiles"].dropna()
        recompiled = group[_counted(group) & (group["device_compiles_timed"].fillna(0) > 0)]
        out.append(
            {
                **dict(zip([*SETTING, "suite"], setting)),
                "n_functions": group["function"].nunique(),
                "n_subtests": subtests.ngroups,
                "repeats": repeats_measured(group),
                "subtests_passed": int((status == "passed").sum()),
                "subtests_host_fallback": int((status == "host_fallback").sum()),
                "subtests_failing": int((status == "failing").sum()),
                "subtests_other": int((status == "other").sum()),
                "functions_with_host_fallback": fell["function"].nunique(),
                # astype: an empty mask of objects would select columns (a setting without fallbacks)
                "of_them_beyond_host_reads": fell[fell["host_fallback_ops"].map(_beyond_reads).astype(bool)][
                    "function"
                ].nunique(),
                "distinct_fallback_ops": len(
                    {op for ops in group["host_fallback_ops"].dropna() for op in ops}
                ),
                "median_compiles_per_subtest": float(compiles.median()) if len(compiles) else None,
                "subtests_recompiled_in_timed_call": recompiled.groupby(["case_id", "subtest"]).ngroups,
            }
        )
    return pd.DataFrame(out)


def top_functions(rows: pd.DataFrame, limit: int = TOP_FUNCTIONS) -> pd.DataFrame:
    """The functions with the most host executions of fallen-back ops per repeat (per setting and
    suite), with the ops. Per repeat: a census run has 1, a curated run 3, and summing over
    repeats would rank a curated case 3 times above a census entry that fell back as often.
    Grouped once per column, not per function: a census setting has hundreds of functions."""
    keyed = [*SETTING, "suite", "function"]
    per_subtest = [*keyed, "case_id", "subtest"]
    rows = rows.assign(suite=suites(rows))
    counted = rows[_counted(rows)]
    fell = counted[counted["outcome"] == "host_fallback"]
    calls = (
        counted.assign(calls=counted["host_fallback_calls"].fillna(0))
        .groupby(per_subtest)["calls"]
        .mean()
        .groupby(level=keyed)
        .sum()
    )
    fell_subtests = fell.drop_duplicates(per_subtest).groupby(keyed).size()
    subtests = rows.groupby(per_subtest).size()
    n_subtests = subtests.groupby(level=keyed).size()
    repeats = subtests.groupby(level=keyed).max()
    shown = [key for key, value in calls.items() if value > 0 or fell_subtests.get(key, 0) > 0]
    ops: dict[tuple[Any, ...], Counter[str]] = {key: Counter() for key in shown}
    with_ops = counted[counted["host_fallback_ops"].notna()]
    for key, ops_ in zip(with_ops[keyed].itertuples(index=False, name=None), with_ops["host_fallback_ops"]):
        if key in ops:
            ops[key].update(ops_)
    out = [
        {
            **dict(zip(keyed, key)),
            "subtests": int(n_subtests[key]),
            "subtests_host_fallback": int(fell_subtests.get(key, 0)),
            "repeats": int(repeats[key]),
            "host_fallback_calls_per_repeat": round(float(calls[key]), 1),
            "ops": ", ".join(op for op, _ in ops[key].most_common(5)),
            "host_reads_only": bool(ops[key]) and set(ops[key]) <= HOST_READ_OPS,
        }
        for key in shown
    ]
    frame = pd.DataFrame(out)
    if frame.empty:
        return frame
    return frame.sort_values(["host_fallback_calls_per_repeat", "function"], ascending=[False, True]).head(
        limit
    )


def fallback_ops(rows: pd.DataFrame) -> pd.DataFrame:
    """Per op that ran on the host: in how many functions and subtests (all XLA settings)."""
    seen: dict[str, dict[str, Any]] = {}
    for function, case, subtest, ops in rows[
        ["function", "case_id", "subtest", "host_fallback_ops"]
    ].itertuples(index=False):
        for op in ops if isinstance(ops, (list, tuple)) else ():
            entry = seen.setdefault(op, {"op": op, "functions": set(), "subtests": set()})
            entry["functions"].add(function)
            entry["subtests"].add((case, subtest))
    frame = pd.DataFrame(
        [
            {"op": e["op"], "kind": op_kind(e["op"]), "n_functions": len(e["functions"]),
             "n_subtests": len(e["subtests"]),
             "functions": ", ".join(sorted(e["functions"])[:6])}
            for e in seen.values()
        ]
    )  # fmt: skip
    if frame.empty:
        return frame
    return frame.sort_values(["n_functions", "n_subtests", "op"], ascending=[False, False, True]).reset_index(
        drop=True
    )


def xla_then_now(rows: pd.DataFrame, changes: pd.DataFrame, moves: pd.DataFrame) -> pd.DataFrame:
    """Per function measured on both: the study's TPU outcome and latency beside ours on an XLA
    setting, with what the XLA layer did now (_on_device; the ops that fell back) and how many
    compilations a timed call paid after its warm-up (0: the graph was cached)."""
    columns = [
        "framework", "function", "now_setting", "then_outcome", "now_outcome", "change", "then_ms",
        "now_ms", "ratio_now_vs_then", "on_device_now", "subtests_host_fallback", "subtests",
        "compiles_per_timed_call", "fallback_ops",
    ]  # fmt: skip
    if not rows.empty:
        rows = rows[suites(rows) == "curated"]  # the study measured its curated cases only
    if rows.empty or changes.empty:
        return pd.DataFrame(columns=columns)
    labelled = rows.assign(
        now_setting=[
            setting_label(*keys) for keys in rows[["source", *SETTING]].itertuples(index=False, name=None)
        ]
    )
    latency = {
        (m.now_setting, m.function): (m.then_ms, m.now_ms, m.ratio_now_vs_then)
        for m in moves.itertuples(index=False)
    }
    out = []
    both = changes[
        changes["now_setting"].isin(set(labelled["now_setting"]))
        & (changes["then_outcome"] != "not in study")
        & (changes["now_outcome"] != "not run")
    ]
    by_function = {key: group for key, group in labelled.groupby(["now_setting", "function"])}
    for change in both.itertuples(index=False):
        group = by_function.get((change.now_setting, change.function))
        if group is None:
            continue
        counted = group[_counted(group)]
        fell = counted[counted["outcome"] == "host_fallback"]
        ops: Counter[str] = Counter(op for ops_ in counted["host_fallback_ops"].dropna() for op in ops_)
        timed = counted["device_compiles_timed"].dropna()
        then_ms, now_ms, ratio = latency.get((change.now_setting, change.function), (None, None, None))
        out.append(
            {
                "framework": change.framework,
                "function": change.function,
                "now_setting": change.now_setting,
                "then_outcome": change.then_outcome,
                "now_outcome": change.now_outcome,
                "change": change.change,
                "then_ms": then_ms,
                "now_ms": now_ms,
                "ratio_now_vs_then": ratio,
                "on_device_now": _on_device(ops, fell, counted),
                "subtests_host_fallback": fell.groupby(["case_id", "subtest"]).ngroups,
                "subtests": group.groupby(["case_id", "subtest"]).ngroups,
                "compiles_per_timed_call": float(timed.mean()) if len(timed) else None,
                "fallback_ops": ", ".join(op for op, _ in ops.most_common(3)),
            }
        )
    return pd.DataFrame(out, columns=columns)


# what the XLA layer did with a function (_on_device) -> its count's column in the summary
ON_DEVICE = {
    "lowered": "now_lowered",
    "fell back": "now_fell_back",
    "fell back (host reads only)": "now_host_reads_only",
    "output on the host": "now_output_on_host",
    "no subtest passed": "now_no_subtest_passed",
}


def xla_then_now_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The per-function then/now table in counts, per XLA setting: how many functions failed on the
    study's TPU and fail now, how many fell back to the host now (a host fallback is not a success),
    what the XLA layer did with them (`ON_DEVICE`), and the median latency ratio now vs then over
    the functions timed on both."""
    columns = [
        "now_setting", "n_functions", "failing_then", "failing_now", "host_fallback_now", "fixed",
        "broke", "falls_back_now", *ON_DEVICE.values(), "n_timed_both",
        "median_ratio_now_vs_then",
    ]  # fmt: skip
    out = []
    for setting, group in table.groupby("now_setting", sort=True):
        ratios = pd.to_numeric(group["ratio_now_vs_then"], errors="coerce").dropna()
        device = group["on_device_now"].value_counts()
        changed = group["change"].value_counts()
        out.append(
            {
                "now_setting": setting,
                "n_functions": len(group),
                "failing_then": int(group["then_outcome"].isin(FAILING_FUNCTION_OUTCOMES).sum()),
                "failing_now": int(group["now_outcome"].isin(FAILING_FUNCTION_OUTCOMES).sum()),
                "host_fallback_now": int((group["now_outcome"] == "host_fallback").sum()),
                **{name: int(changed.get(name, 0)) for name in ("fixed", "broke", "falls_back_now")},
                **{column: int(device.get(kind, 0)) for kind, column in ON_DEVICE.items()},
                "n_timed_both": len(ratios),
                "median_ratio_now_vs_then": float(ratios.median()) if len(ratios) else None,
            }
        )
    return pd.DataFrame(out, columns=columns)


def _on_device(ops: Counter[str], fell: pd.DataFrame, counted: pd.DataFrame) -> str:
    """What the XLA layer did with a function: some op fell back to the host; no op did but an
    output came back on the host; every op stayed on the device in a subtest that passed (lowered);
    or no subtest passed, so nothing can be said."""
    if ops:
        return "fell back (host reads only)" if set(ops) <= HOST_READ_OPS else "fell back"
    if len(fell):
        return "output on the host"
    return "lowered" if (counted["outcome"] == "passed").any() else "no subtest passed"


def headline_metrics(summary: pd.DataFrame) -> dict[str, Any]:
    """metrics.json's numbers per XLA setting and suite (a census and a curated run share the
    framework, device and mode, and one would overwrite the other under a shorter key)."""
    return {
        f"{r.framework}/{r.device}/{r.mode}/{r.suite}": {
            "functions_with_host_fallback": int(r.functions_with_host_fallback),
            "subtests_host_fallback": int(r.subtests_host_fallback),
        }
        for r in summary.itertuples(index=False)
    }


# Where the XLA path ends (issue 53). Facts: PyPI's torch_xla releases stop at 2.9.0, which requires
# torch 2.9; torch_xla's README announces TorchTPU to replace it; AWS's Neuron release notes name
# PyTorch 2.9 as the last version on PyTorch/XLA. The path that follows: runner/devices/iree.py.
TORCH_XLA_ENDS = (
    "torch_xla ends at 2.9: its last release, 2.9.0, follows torch 2.9 only, its README announces a "
    "new stack (TorchTPU) to replace it, and AWS's Neuron notes name PyTorch 2.9 as the last version "
    "on PyTorch/XLA, so this path cannot follow torch 2.10 and later (these XLA rows are torch 2.9's). "
    "The path that follows PyTorch past it is StableHLO -> IREE: the `iree` device (torch.export -> "
    "iree-turbine -> IREE's llvm-cpu compiler and runtime, on the pinned torch), with `iree_torch_mlir` "
    "(torch-mlir's StableHLO) as a second route and JAX's own StableHLO export on `iree` beside them "
    "([docs/DEVICE_PATHS.md, The IREE paths]"
    "(../docs/DEVICE_PATHS.md#the-iree-paths-issue-53-built-2026-12-05))."
)


def host_fallback_section(
    data_dir: Path, changes: pd.DataFrame | None = None, moves: pd.DataFrame | None = None
) -> tuple[Section, dict[str, Any]] | None:
    """The section, and its headline numbers for metrics.json (None without an XLA run). `changes`
    and `moves`: the then/now tables (report.then_now), for the per-function XLA then and now."""
    rows = xla_rows(Path(data_dir))
    if rows.empty:
        return None
    summary = setting_summary(rows)
    then_now = xla_then_now(
        rows,
        changes if changes is not None else pd.DataFrame(),
        moves if moves is not None else pd.DataFrame(),
    )
    text = (
        "On PyTorch/XLA an op without an XLA lowering runs on the host, and a graph compiles again for "
        "every new shape: most of the study's TPU slowdowns. Per XLA setting, the subtests that ran "
        "with an op on the host, the ops that fell back and the compilations, then and now. Our xla "
        "device is XLA's CPU backend, not a TPU. How it is counted: "
        "[docs/METHOD.md, Host fallback on the XLA path](../docs/METHOD.md#host-fallback-on-the-xla-path). "
        + TORCH_XLA_ENDS
    )
    section = Section(
        "Host fallback on the XLA path (PyTorch/XLA without a TPU)",
        text,
        [
            ("Per XLA setting: outcomes, host fallbacks, compilations", summary),
            (
                f"The {TOP_FUNCTIONS} functions with the most host executions of fallen-back ops",
                top_functions(rows),
            ),
            ("Ops that ran on the host, by functions", fallback_ops(rows)),
            (
                "Then (the study's TPU v3-8, torch 1.12 + torch_xla 1.12) and now (XLA CPU), in counts",
                xla_then_now_summary(then_now),
            ),
            (
                "Then (the study's TPU v3-8, torch 1.12 + torch_xla 1.12) and now (XLA CPU), per function",
                then_now,
            ),
        ],
        [],
    )
    metrics = headline_metrics(summary)
    return section, metrics
