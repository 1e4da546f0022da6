"""The report's host-fallback section, from results rows of an XLA setting (made here, by hand)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.report.host_fallback import (
    fallback_ops,
    headline_metrics,
    setting_summary,
    top_functions,
    xla_rows,
    xla_then_now,
    xla_then_now_summary,
)


def _row(function: str, subtest: str, outcome: str, ops: list[str] | None, calls: int, **extra: Any) -> dict:
    return {
        "source": "portability",
        "framework": "torch",
        "framework_version": "2.9.0",
        "device": "xla",
        "device_model": "XLA CPU (PJRT)",
        "mode": "eager",
        "function": function,
        "case_id": function,
        "subtest": subtest,
        "outcome": outcome,
        "confirmation": extra.get("confirmation", "confirmed" if outcome == "host_fallback" else None),
        "host_fallback_ops": ops,
        "host_fallback_calls": calls,
        "device_compiles": extra.get("compiles", 1),
        "device_compiles_timed": extra.get("timed", 0),
        "run_id": extra.get("run_id", "torch-xla-eager-1"),
        "repeat": extra.get("repeat", 0),
    }


ROWS = pd.DataFrame(
    [
        _row("torch.nonzero", "test_a", "host_fallback", ["aten::nonzero"], 2),
        _row("torch.nonzero", "test_b", "host_fallback", ["aten::nonzero"], 4, timed=1),
        _row("torch.unique", "test_a", "host_fallback", ["aten::_unique2", "aten::nonzero"], 2),
        _row(
            "torch.unique", "test_b", "host_fallback", ["aten::_unique2"], 9, confirmation="order_dependent"
        ),
        _row("torch.argsort", "test_a", "passed", [], 0, compiles=3),
        _row("torch.to_sparse", "test_a", "failed", ["aten::_to_sparse"], 1),
    ]
)


def test_setting_summary_counts_confirmed_fallbacks_and_recompiles() -> None:
    summary = setting_summary(ROWS).iloc[0]
    assert (summary["n_functions"], summary["n_subtests"]) == (4, 6)
    # the order-dependent host fallback (it ran on the device alone) is not counted
    assert (summary["subtests_host_fallback"], summary["functions_with_host_fallback"]) == (3, 2)
    assert (summary["subtests_passed"], summary["subtests_failing"]) == (2, 1)  # unique's test_b passed
    assert summary["distinct_fallback_ops"] == 3
    assert summary["subtests_recompiled_in_timed_call"] == 1
    assert summary["median_compiles_per_subtest"] == 1.0


def test_top_functions_rank_by_host_executions_and_name_the_ops() -> None:
    top = top_functions(ROWS)
    # torch.unique's second fallback did not recur alone (order-dependent): its 9 calls do not count
    assert list(top["function"]) == ["torch.nonzero", "torch.unique", "torch.to_sparse"]
    unique = top.iloc[1]
    assert (unique["host_fallback_calls_per_repeat"], unique["subtests_host_fallback"]) == (2, 1)
    assert unique["ops"] == "aten::_unique2, aten::nonzero"
    assert "torch.argsort" not in set(top["function"])
    assert len(top_functions(ROWS, limit=1)) == 1


def test_subtests_are_counted_over_their_repeats_and_calls_per_repeat() -> None:
    """A curated run has 3 repeats, a census run 1: counting rows or summing calls over repeats
    made a curated subtest three and ranked its function 3 times above a census entry that fell
    back as often (torch.optim.LBFGS: 2,247 over 3 repeats beside nn.Transformer's census 132)."""
    curated = [
        _row("torch.nonzero", "test_a", outcome, ["aten::nonzero"], 4, repeat=r)
        for r, outcome in enumerate(["host_fallback", "host_fallback", "failed"])
    ] + [_row("torch.nonzero", "test_b", "host_fallback", ["aten::nonzero"], 4, repeat=r) for r in range(3)]
    census = _row("torch.argsort", "test_entry[argsort-float32]", "host_fallback", ["aten::sort"], 10)
    census |= {"case_id": "torch.census.opinfo.argsort", "run_id": "torch-xla-eager-census-1"}
    other_chunk = _row("torch.cat", "test_entry[cat-float32]", "passed", [], 0)  # another census run
    other_chunk |= {"case_id": "torch.census.opinfo.cat", "run_id": "torch-xla-eager-census-2"}
    rows = pd.DataFrame([*curated, census, other_chunk])
    summary = setting_summary(rows).set_index("suite")
    assert summary.loc["curated", ["n_subtests", "repeats"]].tolist() == [2, 3]
    assert summary.loc["census", ["n_subtests", "repeats"]].tolist() == [2, 1]  # two runs, 1 repeat each
    # test_a failed in one repeat of three: a failing subtest, not two fallback rows and a failure
    assert summary.loc["curated", ["subtests_host_fallback", "subtests_failing"]].tolist() == [1, 1]
    assert headline_metrics(summary.reset_index()) == {
        "torch/xla/eager/census": {"functions_with_host_fallback": 1, "subtests_host_fallback": 1},
        "torch/xla/eager/curated": {"functions_with_host_fallback": 1, "subtests_host_fallback": 1},
    }
    top = top_functions(rows)
    assert list(top["function"]) == ["torch.argsort", "torch.nonzero"]  # 10 a repeat beside 8
    assert list(top["host_fallback_calls_per_repeat"]) == [10.0, 8.0]


def test_the_tables_count_each_subtest_whole_in_any_row_order() -> None:
    """Pooled runs interleave a subtest's rows with other subtests' (repeat by repeat, run by run);
    the tables group rows by subtest and function, never by neighbours."""
    rows = pd.DataFrame(
        [
            _row("torch.nonzero", test, "failed" if (test, r) == ("test_a", 2) else "host_fallback",
                 ["aten::nonzero"], 4, repeat=r)
            for r in range(3)
            for test in ("test_a", "test_b")
        ]
        + [_row("torch.unique", "test_a", "passed", [], 0, repeat=r) for r in range(3)]
    )  # fmt: skip
    for order in (rows, rows.iloc[::-1], rows.sample(frac=1.0, random_state=3)):
        summary = setting_summary(order).iloc[0]
        statuses = ["subtests_failing", "subtests_host_fallback", "subtests_passed"]
        assert summary[statuses].tolist() == [1, 1, 1]
        top = top_functions(order)
        assert top[["function", "subtests", "subtests_host_fallback", "repeats"]].values.tolist() == [
            ["torch.nonzero", 2, 2, 3]
        ]
        assert top["host_fallback_calls_per_repeat"].tolist() == [8.0]


def test_fallback_ops_by_functions() -> None:
    ops = fallback_ops(ROWS)
    assert list(ops["op"]) == ["aten::nonzero", "aten::_unique2", "aten::_to_sparse"]
    assert list(ops["n_functions"]) == [2, 1, 1]
    assert ops.iloc[0]["functions"] == "torch.nonzero, torch.unique"


NOW = "portability · torch 2.9.0 · XLA CPU (PJRT) · eager"
THEN = "mince2023 · torch 1.12.0 · TPU v3-8 · eager"


def test_xla_then_now_sets_each_function_measured_on_both_beside_the_study_tpu() -> None:
    changes = pd.DataFrame(
        [
            {"framework": "torch", "function": f, "then_setting": THEN, "then_outcome": before,
             "now_setting": NOW, "now_outcome": after, "change": change}
            for f, before, after, change in [
                ("torch.nonzero", "success", "host_fallback", "falls_back_now"),
                ("torch.argsort", "complete_failure", "success", "fixed"),
                ("torch.unique", "not in study", "host_fallback", "new"),  # not measured then
                ("torch.cat", "success", "not run", "not_run_now"),  # not measured now
                ("torch.to_sparse", "success", "complete_failure", "broke"),
                ("torch.argsort", "success", "success", "still_works"),  # another setting
            ]
        ]
    )  # fmt: skip
    changes.loc[5, "now_setting"] = "portability · torch 2.13.0 · AMD EPYC (cpu) · eager"
    moves = pd.DataFrame(
        [
            {
                "now_setting": NOW,
                "function": "torch.argsort",
                "then_ms": 2.0,
                "now_ms": 0.5,
                "ratio_now_vs_then": 0.25,
            }
        ]
    )
    table = xla_then_now(ROWS, changes, moves).set_index("function")
    assert list(table.index) == ["torch.nonzero", "torch.argsort", "torch.to_sparse"]
    assert table.loc["torch.to_sparse", "on_device_now"] == "fell back"  # before it failed
    nonzero, argsort = table.loc["torch.nonzero"], table.loc["torch.argsort"]
    assert (nonzero["on_device_now"], nonzero["fallback_ops"]) == ("fell back", "aten::nonzero")
    assert (nonzero["subtests_host_fallback"], nonzero["subtests"]) == (2, 2)
    assert nonzero["compiles_per_timed_call"] == 0.5  # one of its two timed calls compiled again
    assert pd.isna(nonzero["then_ms"])
    assert (argsort["on_device_now"], argsort["change"], argsort["ratio_now_vs_then"]) == (
        "lowered",
        "fixed",
        0.25,
    )
    assert xla_then_now(ROWS, changes.iloc[0:0], moves).empty
    [summary] = xla_then_now_summary(table.reset_index()).to_dict("records")
    assert summary["now_setting"] == NOW and summary["n_functions"] == 3
    # then: argsort failed (complete); now: to_sparse fails, nonzero falls back (not a failure)
    assert (summary["failing_then"], summary["failing_now"], summary["host_fallback_now"]) == (1, 1, 1)
    assert (summary["fixed"], summary["broke"], summary["falls_back_now"]) == (1, 1, 1)
    assert (summary["now_lowered"], summary["now_fell_back"], summary["now_no_subtest_passed"]) == (1, 2, 0)
    assert (summary["n_timed_both"], summary["median_ratio_now_vs_then"]) == (1, 0.25)
    assert xla_then_now_summary(xla_then_now(ROWS, changes.iloc[0:0], moves)).empty


def test_a_host_output_without_a_fallen_back_op_and_a_function_that_never_passed_are_named() -> None:
    rows = pd.DataFrame(
        [
            _row("torch.autograd.Variable", "test_a", "host_fallback", [], 0),
            _row("torch.cuda.Stream.synchronize", "test_a", "failed", [], 0),
        ]
    )
    changes = pd.DataFrame(
        [
            {"framework": "torch", "function": f, "then_setting": THEN, "then_outcome": "success",
             "now_setting": NOW, "now_outcome": after, "change": "broke"}
            for f, after in [("torch.autograd.Variable", "host_fallback"),
                             ("torch.cuda.Stream.synchronize", "complete_failure")]
        ]
    )  # fmt: skip
    table = xla_then_now(rows, changes, pd.DataFrame(columns=["now_setting", "function"]))
    assert list(table["on_device_now"]) == ["output on the host", "no subtest passed"]


def test_host_reads_are_counted_as_torch_xla_counts_them_and_named_apart() -> None:
    rows = pd.DataFrame(
        [
            _row("torch.optim.Adamax", "test_a", "host_fallback", ["aten::_local_scalar_dense"], 3),
            _row(
                "torch.nonzero", "test_a", "host_fallback", ["aten::nonzero", "aten::_local_scalar_dense"], 2
            ),
        ]
    )
    summary = setting_summary(rows).iloc[0]
    assert (summary["functions_with_host_fallback"], summary["of_them_beyond_host_reads"]) == (2, 1)
    top = top_functions(rows).set_index("function")
    assert list(top["host_reads_only"]) == [True, False]  # Adamax (3 calls) first
    assert dict(zip(fallback_ops(rows)["op"], fallback_ops(rows)["kind"])) == {
        "aten::_local_scalar_dense": "host read",
        "aten::nonzero": "op on the host",
    }
    changes = pd.DataFrame(
        [
            {"framework": "torch", "function": f, "then_setting": THEN, "then_outcome": "success",
             "now_setting": NOW, "now_outcome": "host_fallback", "change": "falls_back_now"}
            for f in ("torch.optim.Adamax", "torch.nonzero")
        ]
    )  # fmt: skip
    table = xla_then_now(rows, changes, pd.DataFrame(columns=["now_setting", "function"]))
    assert list(table["on_device_now"]) == ["fell back (host reads only)", "fell back"]


def test_census_rows_are_counted_apart_and_stay_out_of_the_then_and_now() -> None:
    """A census entry and a curated case of the same function (torch.argsort) are two suites: the
    summary and the top functions count them apart, and the then/now (the study measured curated
    cases only) reads the curated case alone: argsort stays lowered although its census entry fell
    back."""
    census = _row("torch.argsort", "test_entry[argsort-float32]", "host_fallback", ["aten::sort"], 7)
    census["case_id"] = "torch.census.opinfo.argsort"
    rows = pd.concat([ROWS, pd.DataFrame([census])], ignore_index=True)
    summary = setting_summary(rows).set_index("suite")
    assert list(summary.index) == ["census", "curated"]
    assert (summary.loc["census", "n_functions"], summary.loc["census", "subtests_host_fallback"]) == (1, 1)
    curated_alone = setting_summary(ROWS).set_index("suite").loc["curated"]
    assert summary.loc["curated"].to_dict() == curated_alone.to_dict()
    top = top_functions(rows).set_index(["suite", "function"])
    assert top.loc[("census", "torch.argsort"), "host_fallback_calls_per_repeat"] == 7
    assert ("curated", "torch.argsort") not in top.index  # its curated case fell back nowhere
    changes = pd.DataFrame(
        [{"framework": "torch", "function": "torch.argsort", "then_setting": THEN,
          "then_outcome": "success", "now_setting": NOW, "now_outcome": "success", "change": "still_works"}]
    )  # fmt: skip
    [argsort] = xla_then_now(rows, changes, pd.DataFrame()).to_dict("records")
    assert (argsort["on_device_now"], argsort["subtests"], argsort["fallback_ops"]) == ("lowered", 1, "")


def test_a_repeat_the_harness_failed_does_not_fail_its_subtest(tmp_path: Path) -> None:
    """Two census runs of the same code pool as two repeats. In the first, the NumPy generator
    lacked ml_dtypes (an environment gap, category "other" when it ran, the harness's by the current
    rules); in the second the pair passed. Read as aggregation reads it, the subtest passed."""
    from portability_data.tables.tableio import write_table
    from tests.conftest import example_rows, write_pooled

    base = {**example_rows()["results"][0], "device": "xla", "device_model": "XLA CPU (PJRT)"}
    base |= {"case_id": "torch.census.numpy.abs", "function": "torch.abs"}
    base |= {"subtest": "test_entry[abs-bfloat16]"}
    gap = {**base, "run_id": "torch-xla-eager-census-1", "outcome": "failed", "confirmation": "confirmed",
           "error_type": "ModuleNotFoundError", "error_message": "No module named 'ml_dtypes'",
           "failure_category": "other", "failure_rule": "unclassified"}  # fmt: skip
    measured = {**base, "run_id": "torch-xla-eager-census-2", "outcome": "passed", "confirmation": None}
    for row in (gap, measured):
        shard = tmp_path / "results" / "portability" / f"{row['run_id']}.parquet"
        write_table("results", pd.DataFrame([row]), shard)
    write_pooled(tmp_path)
    rows = xla_rows(tmp_path)
    assert rows.set_index("run_id").loc["torch-xla-eager-census-1", "failure_category"] == "harness"
    summary = setting_summary(rows).iloc[0]
    assert (summary["repeats"], summary["subtests_passed"], summary["subtests_failing"]) == (2, 1, 0)
