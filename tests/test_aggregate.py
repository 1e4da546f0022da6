"""Aggregation: one small synthetic shard per rule, expectations computed by hand in the comments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from portability_data.pipeline.aggregate.build import (
    aggregate,
    pooled_rows,
    reclassify_failures,
    run_aggregate,
)
from portability_data.readings.params import ParamsError
from portability_data.readings.quiet import quiet_load_max
from portability_data.report.summaries import summary_tables, to_markdown
from portability_data.runner.failures import classify_failure_detail, load_rules, rules_for
from portability_data.tables.contracts import REREAD
from portability_data.tables.tableio import read_table, write_table

DEVICE_MODELS = {"gpu": "T4", "tpu": "TPU v3-8", "cpu": "Xeon"}


def example_of(category: str, framework: str = "torch") -> tuple[str, str, str]:
    """(error_type, message, rule id) of a rule example the current table reads as `category`, so a
    row stored with that reading keeps it when aggregation reads it again."""
    for rule in rules_for(framework):
        if rule.category != category or rule.example is None:
            continue
        if classify_failure_detail(framework, *rule.example)[1] == rule.rule_id:
            return (*rule.example, rule.rule_id)
    raise LookupError(f"no rule example of category {category!r} for {framework}")


def row(
    subtest: str,
    outcome: str = "passed",
    ops: list[float] | None = None,
    *,
    repeat: int = 0,
    device: str = "gpu",
    function: str = "torch.f",
    category: str | None = None,
    run_id: str | None = None,
    device_model: str | None = None,
    test_id: str | None = None,
    framework: str = "torch",
) -> dict[str, Any]:
    failing = outcome in ("failed", "error", "timeout", "crashed", "memory")
    error_type, message, rule = (
        example_of(category, framework) if failing and category else ("E", "boom", None)
    )
    return {
        "run_id": run_id or f"run-{device}",
        "source": "portability",
        "case_id": function,
        "framework": framework,
        "function": function,
        "test_id": test_id or f"cases/{function}.py::{subtest}",
        "subtest": subtest,
        "repeat": repeat,
        "outcome": outcome,
        "failure_category": category or ("other" if failing else None),
        "failure_rule": (rule or "unclassified") if failing else None,
        "error_type": error_type if failing else None,
        "error_message": message if failing else None,
        "op_latencies_ms": list(ops or []),
        "test_time_ms": 1.0,
        "device": device,
        "device_model": device_model or DEVICE_MODELS[device],
        "mode": "eager",
        "framework_version": "2.0",
    }


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows)


def runs_for(results: pd.DataFrame, repeats: int) -> pd.DataFrame:
    return pd.DataFrame({"run_id": sorted(set(results["run_id"])), "repeats": repeats})


def outcome_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    outcomes, _ = aggregate(frame(rows))
    assert len(outcomes) == 1
    return outcomes.iloc[0].to_dict()


# --------------------------------------------------------------------------- outcomes


def test_all_passed_is_success_and_skipped_do_not_count() -> None:
    got = outcome_of([row("a"), row("b"), row("c", "skipped")])
    assert (got["outcome"], got["n_subtests"], got["n_passed"], got["n_failed"], got["n_skipped"]) == (
        "success",
        2,
        2,
        0,
        1,
    )
    assert pd.isna(got["dominant_failure_category"])


def test_some_failed_is_partial_and_a_failure_in_any_repeat_fails_the_subtest() -> None:
    # a: passed in repeat 0, failed in repeat 1 -> failed; b passed -> partial, 1 of 2 failed
    got = outcome_of([row("a", repeat=0), row("a", "failed", repeat=1, category="timeout"), row("b")])
    assert (got["outcome"], got["n_passed"], got["n_failed"]) == ("partial_failure", 1, 1)
    assert got["dominant_failure_category"] == "timeout"


def test_all_failed_is_complete_failure_with_the_most_frequent_category() -> None:
    # a: type_failure x2 in its repeats; b: not_implemented; c: not_implemented -> 2 votes to 1
    got = outcome_of(
        [
            row("a", "failed", category="type_failure"),
            row("a", "failed", repeat=1, category="type_failure"),
            row("b", "failed", category="not_implemented"),
            row("c", "error", category="not_implemented"),
            row("d", "skipped"),
        ]
    )
    assert (got["outcome"], got["n_subtests"], got["n_failed"], got["n_skipped"]) == (
        "complete_failure",
        3,
        3,
        1,
    )
    assert got["dominant_failure_category"] == "not_implemented"


def test_host_fallback_is_its_own_outcome_never_a_success() -> None:
    """A subtest that ran with ops on the host is host_fallback (not passed); a function whose
    subtests all ran, some on the host, is host_fallback; beside a failure it is a partial failure;
    a host fallback that did not recur alone (order_dependent) counts as passed."""
    fell = {**row("a", "host_fallback", [1.0], device="tpu"), "error_message": "aten::nonzero x2"}
    got = outcome_of([fell, row("b", ops=[1.0], device="tpu")])
    assert (got["outcome"], got["n_subtests"], got["n_passed"], got["n_host_fallback"]) == (
        "host_fallback",
        2,
        1,
        1,
    )
    got = outcome_of([fell, row("b", "failed", device="tpu")])
    assert (got["outcome"], got["n_failed"], got["n_host_fallback"]) == ("partial_failure", 1, 1)
    got = outcome_of([{**fell, "confirmation": "order_dependent"}, row("b", device="tpu")])
    assert (got["outcome"], got["n_passed"], got["n_host_fallback"]) == ("success", 2, 0)
    assert outcome_of([row("a", device="tpu")])["n_host_fallback"] == 0


def test_unknown_outcomes() -> None:
    assert outcome_of([row("a", "unknown"), row("b", "unknown")])["outcome"] == "unknown"
    # passed + unknown: could be success or partial -> unknown; n_subtests counts the unknown one
    got = outcome_of([row("a"), row("b", "unknown")])
    assert (got["outcome"], got["n_subtests"], got["n_passed"], got["n_failed"]) == ("unknown", 2, 1, 0)
    # failed + unknown: complete or partial -> unknown
    assert outcome_of([row("a", "failed"), row("b", "unknown")])["outcome"] == "unknown"
    # passed + failed settle it whatever the unknowns
    assert outcome_of([row("a"), row("b", "failed"), row("c", "unknown")])["outcome"] == "partial_failure"
    # all skipped: nothing known
    assert outcome_of([row("a", "skipped")])["outcome"] == "unknown"


def test_harness_failures_do_not_count_against_the_function() -> None:
    got = outcome_of([row("a"), row("b", "failed", category="harness")])
    assert (got["outcome"], got["n_subtests"], got["n_passed"], got["n_failed"]) == ("success", 1, 1, 0)
    only_harness = outcome_of([row("b", "failed", category="harness")])
    assert (only_harness["outcome"], only_harness["n_subtests"]) == ("unknown", 0)


def test_groups_split_by_device_model_and_version() -> None:
    outcomes, _ = aggregate(
        frame(
            [
                row("a", device="gpu"),
                row("a", "failed", device="gpu", device_model="A100", run_id="r2"),
            ]
        )
    )
    assert dict(zip(outcomes["device_model"], outcomes["outcome"])) == {
        "A100": "complete_failure",
        "T4": "success",
    }


def test_unavailable_from_results_and_from_removed_cases() -> None:
    gone = row("a", "skipped", function="torch.gone")
    gone["error_type"] = "FunctionUnavailable"
    outcomes, _ = aggregate(frame([gone, row("a", function="torch.here")]))
    assert dict(zip(outcomes["function"], outcomes["outcome"])) == {
        "torch.gone": "unavailable",
        "torch.here": "success",
    }
    # cases (runs are 2.0): torch.old removed since 2.0, never ran -> unavailable, zero counts;
    # torch.still removed since 1.5 but ran and passed: evidence wins; torch.later (since 3.0): no row
    results = frame([row("a", function="torch.here"), row("a", function="torch.still")])
    runs = runs_for(results, 1).assign(
        source="portability",
        framework="torch",
        framework_version="2.0",
        device="gpu",
        device_model="T4",
        mode="eager",
    )
    cases = pd.DataFrame(
        {
            "framework": ["torch"] * 4,
            "function": ["torch.old", "torch.still", "torch.later", "torch.here"],
            "status": ["removed", "removed", "removed", "active"],
            "removed_since": ["2.0", "1.5", "3.0", None],
        }
    )
    outcomes, _ = aggregate(results, runs, cases)
    got = outcomes.set_index("function")
    assert got["outcome"].to_dict() == {
        "torch.here": "success",
        "torch.old": "unavailable",
        "torch.still": "success",
    }
    assert got.loc["torch.old", "n_subtests"] == 0 and got.loc["torch.old", "device_model"] == "T4"


# --------------------------------------------------------------------------- latencies


def two_device_shard() -> list[dict[str, Any]]:
    """gpu and tpu, 2 repeats each.
    gpu: s1 [1,3] + [2] -> mean 2, median 2; s2 [4] + [6] -> 5; s3 [10] + [] (untimed in repeat 1);
         s4 failed (no passing result); s5 [7] + [7] -> 7, tpu has no s5.
    tpu: s1 [10] + [30] -> 20; s2 [50] + [50] -> 50; s3 [1] + [1]; s4 [8] + [8] passes.
    paired (tpu vs gpu): s1, s2 -> gpu (2+5)/2 = 3.5, tpu (20+50)/2 = 35, ratio 10.
    unpaired gpu: s1, s2, s5 -> (2+5+7)/3 = 4.666..; unpaired tpu: s1, s2, s3, s4 -> (20+50+1+8)/4 = 19.75."""
    rows = []
    for repeat, (s1, s2, s3, s5) in enumerate(
        (([1.0, 3.0], [4.0], [10.0], [7.0]), ([2.0], [6.0], [], [7.0]))
    ):
        rows += [
            row("s1", ops=s1, repeat=repeat),
            row("s2", ops=s2, repeat=repeat),
            row("s3", ops=s3, repeat=repeat),
            row("s4", "failed", repeat=repeat),
            row("s5", ops=s5, repeat=repeat),
        ]
    for repeat, (s1, s2) in enumerate((([10.0], [50.0]), ([30.0], [50.0]))):
        rows += [
            row("s1", ops=s1, repeat=repeat, device="tpu"),
            row("s2", ops=s2, repeat=repeat, device="tpu"),
            row("s3", ops=[1.0], repeat=repeat, device="tpu"),
            row("s4", ops=[8.0], repeat=repeat, device="tpu"),
        ]
    return rows


def latency_rows() -> pd.DataFrame:
    results = frame(two_device_shard())
    _, latencies = aggregate(results, runs_for(results, 2))
    return latencies


def test_study_latency_pairs_subtests_and_takes_unweighted_means() -> None:
    latencies = latency_rows()
    pair = latencies[(latencies["device"] == "tpu") & (latencies["reference_device"] == "gpu")].iloc[0]
    assert pair["n_subtests"] == 2
    assert pair["latency_ms"] == pytest.approx(35.0)
    assert pair["reference_latency_ms"] == pytest.approx(3.5)
    assert pair["ratio"] == pytest.approx(10.0)
    back = latencies[(latencies["device"] == "gpu") & (latencies["reference_device"] == "tpu")].iloc[0]
    assert back["ratio"] == pytest.approx(0.1) and back["reference_device_model"] == "TPU v3-8"


def test_unpaired_latency_uses_every_usable_subtest_of_the_device() -> None:
    latencies = latency_rows()
    alone = latencies[latencies["reference_device"].isna()].set_index("device")
    assert alone.loc["gpu", "n_subtests"] == 3  # s1, s2, s5: s3 untimed in a repeat, s4 failed
    assert alone.loc["gpu", "latency_ms"] == pytest.approx(14.0 / 3)
    assert alone.loc["tpu", "n_subtests"] == 4
    assert alone.loc["tpu", "latency_ms"] == pytest.approx(19.75)
    assert pd.isna(alone.loc["gpu", "ratio"]) and pd.isna(alone.loc["gpu", "reference_latency_ms"])


def test_median_and_spread() -> None:
    # gpu pooled timings: s1 [1,3,2] median 2, IQR 2.5-1.5 = 1 -> 0.5; s2 [4,6] median 5, IQR 5.5-4.5 = 1
    # -> 0.2; s5 [7,7] median 7, spread 0. median of medians (2,5,7) = 5, median of spreads = 0.2.
    alone = latency_rows()
    gpu = alone[alone["reference_device"].isna() & (alone["device"] == "gpu")].iloc[0]
    assert gpu["median_ms"] == pytest.approx(5.0)
    assert gpu["spread"] == pytest.approx(0.2)


def test_timings_in_every_run_follow_the_runs_table() -> None:
    # a subtest timed in repeat 0 only: usable when the run has 1 repeat, not when it has 2
    results = frame([row("a", ops=[1.0]), row("b", ops=[3.0]), row("b", ops=[5.0], repeat=1)])
    _, one = aggregate(results, runs_for(results, 1))
    _, two = aggregate(results, runs_for(results, 2))
    assert one.iloc[0]["n_subtests"] == 2 and one.iloc[0]["latency_ms"] == pytest.approx((1.0 + 4.0) / 2)
    assert two.iloc[0]["n_subtests"] == 1 and two.iloc[0]["latency_ms"] == pytest.approx(4.0)
    _, unknown_runs = aggregate(results)  # no runs table: repeats seen in the results (2)
    assert unknown_runs.iloc[0]["n_subtests"] == 1


def test_not_rerun_rows_aggregate_as_if_the_timeout_had_run_again_in_every_repeat() -> None:
    """The runner's repeat rule (docs/METHOD.md): a subtest that timed out in one repeat is not run
    again; its later rows (skipped, NotRerun) must leave outcomes and latencies as re-running would."""
    passed = [row(s, ops=[float(r + 1)], repeat=r) for s in ("a", "b") for r in range(3)]
    not_rerun = [row("t", "skipped", repeat=r) | {"error_type": "NotRerun"} for r in (1, 2)]
    rerun = [row("t", "timeout", repeat=r, category="timeout") for r in (1, 2)]
    first = [row("t", "timeout", repeat=0, category="timeout")]
    ran_again, skipped = frame(passed + first + rerun), frame(passed + first + not_rerun)
    got = [aggregate(results, runs_for(results, 3)) for results in (ran_again, skipped)]
    keep = ["outcome", "n_subtests", "n_passed", "n_failed", "dominant_failure_category"]
    assert got[0][0][keep].to_dict("records") == got[1][0][keep].to_dict("records")
    assert got[1][0].iloc[0]["outcome"] == "partial_failure"
    assert got[0][1][["n_subtests", "latency_ms"]].equals(got[1][1][["n_subtests", "latency_ms"]])
    assert got[1][1].iloc[0]["n_subtests"] == 2


def test_unknown_and_harness_rows_keep_a_subtest_skipped_and_failed_drop_it() -> None:
    results = frame(
        [
            row("u", "unknown", ops=[2.0]),
            row("h", "failed", ops=[4.0], category="harness"),
            row("f", "failed", ops=[100.0]),
            row("s", "skipped", ops=[100.0]),
            # a name shared by two classes: one failed, one passed -> has a passing result, kept
            row("d", "failed", ops=[], test_id="x::A::d"),
            row("d", "passed", ops=[6.0], test_id="x::B::d"),
        ]
    )
    _, latencies = aggregate(results, runs_for(results, 1))
    assert latencies.iloc[0]["n_subtests"] == 3
    assert latencies.iloc[0]["latency_ms"] == pytest.approx(4.0)  # (2 + 4 + 6) / 3


def test_no_pair_across_sources_versions_or_modes() -> None:
    rows = [row("a", ops=[1.0]), row("a", ops=[2.0], device="tpu")]
    rows[1]["framework_version"] = "3.0"
    _, latencies = aggregate(frame(rows))
    assert latencies["reference_device"].isna().all() and len(latencies) == 2


# --------------------------------------------------------------------------- pipeline stage


def test_run_aggregate_reads_shards_and_writes_both_tables(tmp_path: Path) -> None:
    results = frame(two_device_shard())
    for run_id, shard in results.groupby("run_id"):
        write_table("results", shard, tmp_path / "results" / "portability" / f"{run_id}.parquet")
    runs = pd.DataFrame(
        [
            {
                "run_id": run_id,
                "source": "portability",
                "framework": "torch",
                "framework_version": "2.0",
                "device": run_id.split("-")[1],
                "device_model": DEVICE_MODELS[run_id.split("-")[1]],
                "mode": "eager",
                "repeats": 2,
                "timeout_s": 900.0,
                "host": "h",
                "os": "o",
                "python": "3.12",
                "cpu_model": "c",
                "accelerator": None,
                "driver": None,
                "packages": "{}",
                "git_commit": None,
                "params_hash": None,
                "timer_floor_ms": None,
                "started_at": None,
                "finished_at": None,
                "status": "complete",
                "n_results": int((results["run_id"] == run_id).sum()),
            }
            for run_id in sorted(set(results["run_id"]))
        ]
    )
    write_table("runs", runs, tmp_path / "runs" / "portability" / "runs.parquet")
    outcomes_path, latencies_path, pooled_path = run_aggregate(
        tmp_path / "results",
        tmp_path / "runs",
        tmp_path / "outcomes",
        tmp_path / "latencies" / "latencies.parquet",
        tmp_path / "pooled",
    )
    pooled = read_table("pooled", pooled_path)  # every row, none superseded (one run per setting)
    assert len(pooled) == len(results) and pooled["superseded_reason"].isna().all()
    outcomes = read_table("outcomes", outcomes_path)
    latencies = read_table("latencies", latencies_path)
    assert outcomes_path == tmp_path / "outcomes" / "outcomes.parquet"
    assert dict(zip(outcomes["device"], outcomes["outcome"])) == {"gpu": "partial_failure", "tpu": "success"}
    assert len(latencies) == 4  # gpu, tpu alone; tpu vs gpu; gpu vs tpu


# --------------------------------------------------------------------------- summary tables


def summary_inputs() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """4 functions on T4 and TPU v3-8, 1 also on A100.
    T4: f1 success, f2 success, f3 partial, f4 unknown; TPU: f1 success, f2 complete, f3 complete, f4 success.
    TPU / T4 ratios: f1 20 (>10x slower on TPU), f2 0.5 (faster on TPU), f4 2; A100 / T4: f1 0.5."""
    rows = []
    plan = {
        "f1": {"gpu": ["passed"], "tpu": ["passed"]},
        "f2": {"gpu": ["passed"], "tpu": ["failed"]},
        "f3": {"gpu": ["passed", "failed"], "tpu": ["failed"]},
        "f4": {"gpu": ["unknown"], "tpu": ["passed"]},
    }
    timings = {
        ("f1", "gpu"): 1.0,
        ("f1", "tpu"): 20.0,
        ("f2", "gpu"): 4.0,
        ("f2", "tpu"): 2.0,
        ("f4", "gpu"): 3.0,
        ("f4", "tpu"): 6.0,
    }
    for function, devices in plan.items():
        for device, outcomes in devices.items():
            for index, outcome in enumerate(outcomes):
                ops = [timings.get((function, device), 1.0)]
                if function == "f2" and device == "tpu":  # failed, but a second passing subtest with timings
                    rows.append(row("t0", ops=ops, device=device, function=f"torch.{function}"))
                    rows.append(row("t9", outcome, device=device, function=f"torch.{function}"))
                    continue
                rows.append(row(f"t{index}", outcome, ops=ops, device=device, function=f"torch.{function}"))
    rows.append(row("t0", ops=[0.5], device="gpu", device_model="A100", run_id="a100", function="torch.f1"))
    results = frame(rows)
    outcomes, latencies = aggregate(results, runs_for(results, 1))
    samples = pd.DataFrame(
        {
            "framework": ["torch"] * 4,
            "function": ["torch.f1", "torch.f2", "torch.f3", "torch.f4"],
            "bucket": ["top20", "top20", "10", "20"],
        }
    )
    return outcomes, latencies, samples


def test_outcome_shares_table() -> None:
    outcomes, latencies, _ = summary_inputs()
    shares = summary_tables(outcomes, latencies)["outcome_shares"].set_index("device_model")
    # T4: f2 has t0 only on gpu -> success; f1 success; f3 partial; f4 unknown -> known 3: 66.7 / 33.3 / 0
    assert shares.loc["T4", "n_functions"] == 4 and shares.loc["T4", "n_known"] == 3
    assert shares.loc["T4", "pct_success"] == pytest.approx(66.7)
    assert shares.loc["T4", "pct_partial_failure"] == pytest.approx(33.3)
    assert shares.loc["T4", "n_unknown"] == 1
    # TPU: f1 success, f2 partial (t0 passed, t9 failed), f3 complete, f4 success
    assert shares.loc["TPU v3-8", "pct_success"] == pytest.approx(50.0)
    assert shares.loc["TPU v3-8", "pct_partial_failure"] == pytest.approx(25.0)
    assert shares.loc["TPU v3-8", "pct_complete_failure"] == pytest.approx(25.0)


def test_top20_vs_all_needs_samples() -> None:
    outcomes, latencies, samples = summary_inputs()
    assert "top20_vs_all" not in summary_tables(outcomes, latencies)
    table = summary_tables(outcomes, latencies, samples)["top20_vs_all"]
    tpu = table[table["device_model"] == "TPU v3-8"].set_index("subset")
    # top20 = f1 (success), f2 (partial) on TPU
    assert tpu.loc["top20", "n_functions"] == 2 and tpu.loc["top20", "pct_success"] == pytest.approx(50.0)
    assert tpu.loc["all", "n_functions"] == 4


def test_top20_vs_all_per_sample_keeps_the_study_to_its_own_sample() -> None:
    outcomes, latencies, samples = summary_inputs()
    # the T4 rows become the study's: they may only count for the study's sample
    outcomes = outcomes.assign(
        source=["mince2023" if m == "T4" else s for m, s in zip(outcomes["device_model"], outcomes["source"])]
    )
    later = pd.DataFrame(
        {"framework": ["torch"] * 2, "function": ["torch.f1", "torch.f3"], "bucket": ["top20", "10"]}
    )
    both = pd.concat([samples.assign(sample_id="mince2023"), later.assign(sample_id="portability2026")])
    table = summary_tables(outcomes, latencies, both)["top20_vs_all"]
    assert set(table.loc[table["device_model"] == "T4", "sample_id"]) == {"mince2023"}
    tpu = table[table["device_model"] == "TPU v3-8"].set_index(["sample_id", "subset"])
    assert tpu.loc[("mince2023", "all"), "n_functions"] == 4
    # today's sample on TPU: f1 (top20, success) and f3 (decile 10, complete failure)
    assert tpu.loc[("portability2026", "top20"), "n_functions"] == 1
    assert tpu.loc[("portability2026", "top20"), "pct_success"] == pytest.approx(100.0)
    assert tpu.loc[("portability2026", "all"), "n_functions"] == 2
    assert tpu.loc[("portability2026", "all"), "pct_complete_failure"] == pytest.approx(50.0)


def test_slowdown_shares_and_latency_by_function() -> None:
    outcomes, latencies, _ = summary_inputs()
    tables = summary_tables(outcomes, latencies)
    slow = tables["slowdown_shares"]
    tpu = slow[(slow["device_model"] == "TPU v3-8") & (slow["reference_device_model"] == "T4")].iloc[0]
    # paired f1 (20/1 = 20), f2 (t0: 2/4 = 0.5), f4 (6/3 = 2); f3 has no passing tpu subtest
    assert tpu["n_functions"] == 3
    assert tpu["pct_over_10x_slower"] == pytest.approx(33.3)
    assert tpu["pct_faster_on_device"] == pytest.approx(33.3)
    assert tpu["pct_faster_on_reference"] == pytest.approx(66.7)
    assert tpu["median_ratio"] == pytest.approx(2.0)
    by_function = tables["latency_by_function"]
    tpu_rows = by_function[
        (by_function["device_model"] == "TPU v3-8") & (by_function["reference_device_model"] == "T4")
    ]
    assert list(tpu_rows["function"]) == ["torch.f1", "torch.f4", "torch.f2"]  # slowest first
    assert (by_function["reference_device"] == "gpu").all()  # TPU / GPU, never GPU / TPU


def test_hardware_generations() -> None:
    outcomes, latencies, _ = summary_inputs()
    tables = summary_tables(outcomes, latencies)
    gens = tables["hardware_generations"]
    a100 = gens[(gens["device_model"] == "A100") & (gens["reference_device_model"] == "T4")].iloc[0]
    assert a100["n_functions"] == 1 and a100["median_ratio"] == pytest.approx(0.5)
    assert a100["pct_faster_on_device"] == pytest.approx(100.0)
    assert set(tables["hardware_generation_outcomes"]["device_model"]) == {"A100", "T4"}


def test_markdown_has_every_table() -> None:
    outcomes, latencies, samples = summary_inputs()
    tables = summary_tables(outcomes, latencies, samples)
    text = to_markdown(tables, max_rows=2)
    for name in tables:
        assert f"## {name}" in text
    assert "| source | framework |" in text and "more rows" in text
    assert "(no rows)" in to_markdown({"empty": pd.DataFrame()})


def _run_row(run_id: str, started: str, harness: str | None, cases: dict[str, str] | None) -> dict[str, Any]:
    import json

    return {
        "run_id": run_id,
        "source": "portability",
        "framework": "torch",
        "framework_version": "2.0",
        "device": "gpu",
        "device_model": "T4",
        "mode": "eager",
        "repeats": 1,
        "started_at": pd.Timestamp(started, tz="UTC"),
        "harness_digest": harness,
        "case_digests": None if cases is None else json.dumps(cases),
    }


def test_newest_harness_and_case_files_supersede_older_runs() -> None:
    from portability_data.pipeline.subtests import supersede

    results = frame(
        [
            row("t1", "failed", run_id="old"),  # made before digests: superseded
            row("t1", "passed", [1.0], run_id="new"),
            row("t1", "failed", run_id="older-case", function="torch.g"),  # another version of g's files
            row("t1", "passed", [1.0], run_id="new", function="torch.g"),
            row("t1", "failed", run_id="older-harness", function="torch.h"),
            row("t1", "passed", [1.0], run_id="new", function="torch.h"),
            row("t2", "passed", [1.0], run_id="subset", function="torch.k"),  # only run that ran k
        ]
    )
    runs = pd.DataFrame(
        [
            _run_row("old", "2026-01-01", None, None),
            _run_row("older-case", "2026-01-02", "H2", {"torch.g": "g1"}),
            _run_row("older-harness", "2026-01-03", "H1", {"torch.h": "h1"}),
            _run_row("new", "2026-02-01", "H2", {"torch.f": "f1", "torch.g": "g2", "torch.h": "h1"}),
            _run_row("subset", "2026-01-05", "H1", {"torch.k": "k1"}),
        ]
    )
    kept, superseded = supersede(results, runs)
    assert sorted(set(kept["run_id"])) == ["new", "subset"]
    reasons = dict(zip(superseded["run_id"], superseded["reason"]))
    assert reasons == {
        "old": "made before runs recorded harness and case digests",
        "older-case": "older case files",
        "older-harness": "older harness",
    }
    assert set(superseded["superseded_by"]) == {"new"}
    outcomes, _ = aggregate(results, runs.assign(repeats=1))
    assert set(outcomes["outcome"]) == {"success"}
    marked = pooled_rows(results, runs)  # the `pooled` table: every row, the superseded ones marked
    assert len(marked) == len(results)
    assert dict(zip(marked["run_id"], marked["superseded_reason"].fillna("pooled"))) == {
        **reasons,
        "new": "pooled",
        "subset": "pooled",
    }


def test_study_runs_without_digests_are_pooled_as_they_are() -> None:
    from portability_data.pipeline.subtests import supersede

    results = frame([row("t1", run_id="a"), row("t1", run_id="b", repeat=0, test_id="x::t1")])
    runs = pd.DataFrame([_run_row("a", "2023-01-01", None, None), _run_row("b", "2023-01-02", None, None)])
    kept, superseded = supersede(results, runs)
    assert len(kept) == 2 and superseded.empty


def test_compiled_counts_only_subtests_that_really_compiled() -> None:
    rows = [
        {**row("t1", "passed", [1.0]), "mode": "compiled", "execution": "compiled"},
        {**row("t2", "failed"), "mode": "compiled", "execution": "graph_breaks"},
        {**row("t3", "passed", [1.0]), "mode": "compiled", "execution": "not_routed"},
        {**row("u1", "passed", [1.0], function="torch.u"), "mode": "compiled", "execution": "eager_fallback"},
    ]
    outcomes, latencies = aggregate(frame(rows))
    f = outcomes[outcomes["function"] == "torch.f"].iloc[0]
    assert (f["outcome"], f["n_subtests"], f["n_not_compiled"]) == ("success", 1, 2)
    u = outcomes[outcomes["function"] == "torch.u"].iloc[0]
    assert (u["outcome"], u["n_subtests"], u["n_not_compiled"]) == ("not_compiled", 0, 1)
    assert set(latencies["function"]) == {"torch.f"}
    assert latencies.iloc[0]["n_subtests"] == 1


# --------------------------------------------------------------------------- failure rules re-read


def rule_example(rule_id: str) -> tuple[str, str]:
    """(error_type, message) of a rule's own example in runner/rules/failures.yaml."""
    rules = {rule.rule_id: rule for section in load_rules().values() for rule in section}
    assert rules[rule_id].example is not None
    return rules[rule_id].example


def failing_as_unclassified(
    rule_id: str, *, source: str = "portability", run_id: str = "tf-run", subtest: str = "t1"
) -> dict[str, Any]:
    """A tensorflow compiled row stored unclassified (its run predates the rule) with the rule's example."""
    error_type, message = rule_example(rule_id)
    return {
        **row(subtest, "failed", run_id=run_id, function="tensorflow.f", framework="tensorflow"),
        "source": source,
        "mode": "compiled",
        "error_type": error_type,
        "error_message": message,
        "failure_subcategory": None,
    }


@pytest.mark.parametrize("rule_id", ["tf_function_variable_creation", "tf_function_retrace_variable_exists"])
def test_a_rule_added_after_the_run_reaches_its_failing_rows(rule_id: str) -> None:
    ours = failing_as_unclassified(rule_id)
    study = failing_as_unclassified(rule_id, source="mince2023", run_id="study-run")
    passed = {
        **row("t2", run_id="tf-run", function="tensorflow.f", framework="tensorflow"),
        "mode": "compiled",
    }
    reread = reclassify_failures(frame([ours, study, {**passed, "failure_subcategory": None}]))
    got = reread[["source", "outcome", "failure_category", "failure_rule", "failure_subcategory", REREAD]]
    assert got.values.tolist() == [
        ["portability", "failed", "not_implemented", rule_id, "compile_limitation", True],
        ["mince2023", "failed", "other", "unclassified", None, False],  # the study's reading stays
        ["portability", "passed", None, None, None, False],
    ]
    outcomes, _ = aggregate(frame([ours, study]))
    categories = dict(zip(outcomes["source"], outcomes["dominant_failure_category"]))
    assert categories == {"portability": "not_implemented", "mince2023": "other"}


def test_rereading_keeps_what_agrees_and_what_a_cut_message_hid() -> None:
    error_type, message, rule = example_of("type_failure")
    agreeing = {**row("a", "failed", category="type_failure"), "failure_subcategory": None}
    expected = classify_failure_detail("torch", error_type, message)
    agreeing["failure_subcategory"] = expected[2]
    # stored cut at 2000 characters with a rule that matched the whole message: no rule reads the cut
    cut = {**row("b", "failed", category="type_failure"), "error_type": "E", "error_message": "x" * 2000}
    short = {**cut, "subtest": "c", "test_id": "x::c", "error_message": "x" * 10}
    reread = reclassify_failures(frame([agreeing, cut, short]))
    assert list(reread["failure_rule"]) == [rule, rule, "unclassified"]
    assert list(reread[REREAD]) == [False, False, True]
    assert not reclassify_failures(frame([row("p")]).drop(columns=["error_message"]))[REREAD].any()


# --------------------------------------------------------------------------- quiet runs preferred


def quiet_runs(loads: dict[str, float | None]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One case measured by runs of the same harness and case files, one per load (None: unrecorded);
    each run's timing is 10x its place so the pooled latency says which runs were kept."""
    results, runs = [], []
    for place, (run_id, load) in enumerate(loads.items(), 1):
        results.append(row("t1", "passed", [10.0 * place], run_id=run_id))
        runs.append({**_run_row(run_id, f"2026-03-0{place}", "H", {"torch.f": "f1"}), "host_load_max": load})
    return frame(results), pd.DataFrame(runs)


def pooled_ms(results: pd.DataFrame, runs: pd.DataFrame, threshold: float | None) -> float:
    _, latencies = aggregate(results, runs, quiet_load_max=threshold)
    return float(latencies.iloc[0]["latency_ms"])


def test_a_contended_run_beside_a_quiet_run_of_the_same_code_is_dropped() -> None:
    from portability_data.pipeline.subtests import supersede

    results, runs = quiet_runs({"quiet": 1.1, "busy": 3.25, "busier": 4.0})
    kept, superseded = supersede(results, runs, quiet_load_max=1.5)
    assert list(kept["run_id"]) == ["quiet"]
    assert superseded[["run_id", "n_rows", "reason", "superseded_by"]].values.tolist() == [
        ["busier", 1, "contended (host load 4.00 > 1.5) beside a quieter run of the same code", "quiet"],
        ["busy", 1, "contended (host load 3.25 > 1.5) beside a quieter run of the same code", "quiet"],
    ]
    assert pooled_ms(results, runs, 1.5) == 10.0
    assert pooled_ms(results, runs, None) == 20.0  # the rule off: all three pooled (10, 20, 30)
    assert pooled_ms(results, runs, 5.0) == 20.0  # all quiet under a higher threshold


def test_contended_runs_without_a_quiet_one_and_unrecorded_loads_stay_pooled() -> None:
    from portability_data.pipeline.subtests import supersede

    for loads in ({"busy": 2.0, "busier": 3.0}, {"quiet": 1.0, "unrecorded": None}):
        results, runs = quiet_runs(loads)
        kept, superseded = supersede(results, runs, quiet_load_max=1.5)
        assert sorted(set(kept["run_id"])) == sorted(loads) and superseded.empty, loads
    # another harness is superseded as before, whatever its load
    results, runs = quiet_runs({"old": 0.5, "new": 3.0})
    runs.loc[runs["run_id"] == "old", "harness_digest"] = "H-old"
    kept, superseded = supersede(results, runs, quiet_load_max=1.5)
    assert list(kept["run_id"]) == ["new"] and list(superseded["reason"]) == ["older harness"]


def test_other_work_outside_the_run_decides_quiet_where_it_was_measured() -> None:
    """A compiled run's own compiler threads push the load average up (6.7 here on an idle host):
    where a run recorded the CPU work outside its own processes (schema 6), that decides, against
    quiet_load_max - 1 cores; a run without it is judged by its load average as before."""
    from portability_data.pipeline.subtests import supersede

    results, runs = quiet_runs({"own_threads": 6.7, "shared": 1.2, "old_busy": 3.0})
    runs["host_other_cpu_max"] = [0.1, 0.9, None]
    kept, superseded = supersede(results, runs, quiet_load_max=1.5)
    assert list(kept["run_id"]) == ["own_threads"]
    assert superseded[["run_id", "reason", "superseded_by"]].values.tolist() == [
        ["old_busy", "contended (host load 3.00 > 1.5) beside a quieter run of the same code", "own_threads"],
        [
            "shared",
            "contended (other work 0.90 cores > 0.5) beside a quieter run of the same code",
            "own_threads",
        ],
    ]


def test_the_threshold_comes_from_params(tmp_path: Path) -> None:
    repository = Path(__file__).resolve().parents[1] / "params.yaml"
    assert quiet_load_max(repository) == 1.5
    assert quiet_load_max(tmp_path / "absent.yaml") == 1.5
    params = tmp_path / "params.yaml"
    params.write_text("aggregate:\n  quiet_load_max: 3\n")
    assert quiet_load_max(params) == 3.0
    params.write_text("aggregate:\n  quiet_load_max: null\n")
    assert quiet_load_max(params) is None
    params.write_text("run: {}\n")
    assert quiet_load_max(params) == 1.5
    params.write_text("aggregate:\n  quiet_load_max: high\n")
    with pytest.raises(ParamsError, match=r"aggregate\.quiet_load_max"):
        quiet_load_max(params)


def test_rows_of_a_case_no_longer_in_the_cases_table_are_left_out() -> None:
    """A renamed case keeps its old rows in the immutable shards; the outcome follows the cases
    table (the new id), the study's rows are never dropped, and without case ids nothing is."""
    old = row("a", "failed", function="tensorflow.train.Feature", framework="tensorflow")
    new = row("a", function="tensorflow.compat.v1.train.Feature", framework="tensorflow")
    study = {**row("a", function="tensorflow.gone", framework="tensorflow"), "source": "mince2023"}
    cases = pd.DataFrame(
        {
            "case_id": ["tensorflow.compat.v1.train.Feature"],
            "framework": ["tensorflow"],
            "function": ["tensorflow.compat.v1.train.Feature"],
            "status": ["active"],
            "removed_since": [None],
        }
    )
    outcomes, _ = aggregate(frame([old, new, study]), None, cases)
    assert dict(zip(outcomes["function"], outcomes["outcome"])) == {
        "tensorflow.compat.v1.train.Feature": "success",
        "tensorflow.gone": "success",
    }
    outcomes, _ = aggregate(frame([old, new]), None, cases.drop(columns="case_id"))
    assert set(outcomes["function"]) == {"tensorflow.train.Feature", "tensorflow.compat.v1.train.Feature"}


def test_a_closed_partial_run_beside_a_complete_run_of_the_same_code_is_superseded() -> None:
    """A run closed partial by hand never confirmed its failures alone: beside a complete run of the
    same harness and case files (before or after it) its rows of that case are not pooled; of a case
    that no complete run measured, or measured with other code, they are."""
    from portability_data.pipeline.subtests import PARTIAL_BESIDE_COMPLETE, supersede

    results, runs = quiet_runs({"partial-before": 1.0, "complete": 1.0, "partial-after": 1.0})
    runs["status"] = ["partial", "complete", "partial"]
    other_case = {**row("t1", "failed", run_id="partial-before"), "case_id": "torch.g", "function": "torch.g"}
    results = pd.concat([results, frame([other_case])], ignore_index=True)
    runs["case_digests"] = ['{"torch.f": "f1", "torch.g": "g1"}', '{"torch.f": "f1"}', '{"torch.f": "f1"}']
    kept, superseded = supersede(results, runs, quiet_load_max=1.5)
    assert sorted(zip(kept["run_id"], kept["case_id"])) == [
        ("complete", "torch.f"),
        ("partial-before", "torch.g"),
    ]
    assert superseded[["run_id", "n_rows", "reason", "superseded_by"]].values.tolist() == [
        ["partial-after", 1, PARTIAL_BESIDE_COMPLETE, "complete"],
        ["partial-before", 1, PARTIAL_BESIDE_COMPLETE, "complete"],
    ]
    # without a complete run, the newest partial run of the same code stands for the case
    runs["status"] = ["partial", "partial", "partial"]
    kept, superseded = supersede(results, runs, quiet_load_max=1.5)
    assert sorted(zip(kept["run_id"], kept["case_id"])) == [
        ("partial-after", "torch.f"),
        ("partial-before", "torch.g"),
    ]
    assert superseded[["run_id", "reason", "superseded_by"]].values.tolist() == [
        ["complete", "closed partial beside a newer run of the same code", "partial-after"],
        ["partial-before", "closed partial beside a newer run of the same code", "partial-after"],
    ]
    # a newer partial re-measure stands even when contended beside the older, quiet partial run:
    # the two never supersede each other (found on the xla runs of 2026-11-25 and 11-28)
    two, two_runs = quiet_runs({"older-quiet": 1.0, "newer-contended": 3.0})
    two_runs["status"] = ["partial", "partial"]
    kept, superseded = supersede(two, two_runs, quiet_load_max=1.5)
    assert list(kept["run_id"]) == ["newer-contended"]
    assert superseded[["run_id", "reason", "superseded_by"]].values.tolist() == [
        ["older-quiet", "closed partial beside a newer run of the same code", "newer-contended"]
    ]
    # beside a complete run of other case files, the partial rows of today's code stay pooled
    runs["status"] = ["partial", "complete", "partial"]
    runs["case_digests"] = ['{"torch.f": "f1"}', '{"torch.f": "f0"}', '{"torch.f": "f1"}']
    kept, superseded = supersede(results, runs, quiet_load_max=1.5)
    assert "complete" not in set(kept["run_id"]) and "partial-after" in set(kept["run_id"])


def test_a_failure_a_closed_partial_run_never_confirmed_alone_is_unknown_not_failed() -> None:
    """A run closed before its confirmations ended (runs.status partial) keeps its unconfirmed
    failures; they failed once beside other cases, so the function's outcome rests on what was
    confirmed: a pass beside an unconfirmed failure is unknown, a confirmed failure still counts,
    and the same rows in a complete run count as failures."""

    def rows(confirmations: dict[str, str | None]) -> pd.DataFrame:
        made = [row("t0", "passed", run_id="r")]
        for name, verdict in confirmations.items():
            made.append({**row(name, "failed", run_id="r"), "confirmation": verdict})
        return frame(made).assign(confirmation=lambda f: f["confirmation"].astype(object))

    def outcome(results: pd.DataFrame, status: str) -> tuple[str, int, int]:
        runs = pd.DataFrame({"run_id": ["r"], "repeats": [1], "status": [status]})
        got = aggregate(results, runs)[0].iloc[0]
        return str(got["outcome"]), int(got["n_failed"]), int(got["n_subtests"])

    unconfirmed = rows({"t1": None})
    assert outcome(unconfirmed, "partial") == ("unknown", 0, 2)
    assert outcome(unconfirmed, "complete") == ("partial_failure", 1, 2)
    assert outcome(rows({"t1": None, "t2": "confirmed"}), "partial") == ("partial_failure", 1, 3)
    assert outcome(rows({"t1": "order_dependent"}), "partial") == ("success", 0, 2)


def test_the_timings_of_an_unconfirmed_failure_are_no_latency() -> None:
    """Read as unknown, an unconfirmed failure still failed where it ran: the timings it recorded
    before failing never enter a latency (a failed subtest's never did)."""
    results = frame([{**row("t1", "failed", [5.0], run_id="r"), "confirmation": None}])
    runs = pd.DataFrame({"run_id": ["r"], "repeats": [1], "status": ["partial"]})
    outcomes, latencies = aggregate(results, runs)
    assert outcomes.iloc[0]["outcome"] == "unknown"
    assert latencies.empty or latencies["latency_ms"].isna().all()


def test_an_unconfirmed_host_fallback_is_unknown_and_keeps_its_timings() -> None:
    """A host fallback not re-run alone ran through, partly on the host: whether it falls back alone
    is unknown, but its call completed, so its timings stay a latency as a confirmed one's do."""
    results = frame([{**row("t1", "host_fallback", [5.0], run_id="r"), "confirmation": None}])
    runs = pd.DataFrame({"run_id": ["r"], "repeats": [1], "status": ["partial"]})
    outcomes, latencies = aggregate(results, runs)
    assert outcomes.iloc[0]["outcome"] == "unknown"
    assert latencies["latency_ms"].tolist() == [5.0]


def test_the_failure_categories_table_leaves_out_rows_a_closed_partial_run_never_confirmed() -> None:
    """The report's failure categories count subtest rows: an unconfirmed failure of a run closed
    partial is unknown to aggregation, so it is not a failing row there either."""
    from portability_data.report.outcomes import failure_categories

    results = frame(
        [
            {**row("t1", "failed", category="not_implemented", run_id="r"), "confirmation": None},
            {**row("t2", "failed", category="not_implemented", run_id="r"), "confirmation": "confirmed"},
        ]
    )
    outcomes = aggregate(results)[0]
    for status, rows in (("partial", 1), ("complete", 2)):
        runs = pd.DataFrame({"run_id": ["r"], "repeats": [1], "status": [status]})
        table = failure_categories(outcomes, results, runs)
        assert table.set_index("failure_category").loc["not_implemented", "subtest_rows"] == rows
