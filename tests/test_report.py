"""The report stage: tables checked by hand on small synthetic tables, the offline HTML, figures named
in the Markdown, metrics keys and plot CSVs; plus one run on the study's imported data where present."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from portability_data.report.build import build, run_report
from portability_data.report.inputs import load_inputs
from portability_data.tables.tableio import write_table
from tests.conftest import SETTING_KEYS as KEYS
from tests.conftest import STUDY_CPU, T4, V3, write_pooled
from tests.conftest import latency_row as _latency
from tests.conftest import outcome_row as _outcome

REPO_ROOT = Path(__file__).resolve().parent.parent

A100 = ("mince2023", "torch", "1.12.0", "gpu", "A100", "eager")
OUR_CPU = ("portability", "torch", "2.13.0", "cpu", "EPYC", "eager")
OUR_CPU_COMPILED = ("portability", "torch", "2.13.0", "cpu", "EPYC", "compiled")


def _sample(function: str, bucket: str, order: int) -> dict:
    return {
        "sample_id": "mince2023",
        "framework": "torch",
        "function": function,
        "study_name": None,
        "bucket": bucket,
        "frequency": None,
        "draw_order": order,
        "status": "kept",
        "replaced_by": None,
        "reason": None,
        "seed": None,
    }


def _result(setting: tuple, function: str, outcome: str, category: str | None, subtest: str) -> dict:
    named = dict(zip(KEYS, setting))
    return {
        "run_id": "r1",
        "source": named["source"],
        "case_id": function,
        "framework": named["framework"],
        "function": function,
        "test_id": f"{function}.py::{subtest}",
        "subtest": subtest,
        "repeat": 0,
        "outcome": outcome,
        "failure_category": category,
        "failure_rule": None,
        "error_type": None,
        "error_message": None,
        "op_latencies_ms": [1.0],
        "test_time_ms": 2.0,
        "device": named["device"],
        "device_model": named["device_model"],
        "mode": named["mode"],
        "framework_version": named["framework_version"],
    }


def make_data(root: Path, *, cases: bool = True, results: bool = True) -> Path:
    """Four torch functions: f1, f2 top 20; f3 bucket 10; f4 bucket 50 (removed in torch 2.0)."""
    outcomes = [
        _outcome(T4, "torch.f1", "success"),
        _outcome(T4, "torch.f2", "partial_failure", "not_implemented"),
        _outcome(T4, "torch.f3", "complete_failure", "type_failure"),
        _outcome(T4, "torch.f4", "success"),
        _outcome(V3, "torch.f1", "success"),
        _outcome(V3, "torch.f2", "success"),
        _outcome(V3, "torch.f3", "complete_failure", "type_failure"),
        _outcome(V3, "torch.f4", "partial_failure", "float_precision"),
        *[_outcome(A100, f"torch.f{i}", "unknown") for i in range(1, 5)],
        _outcome(STUDY_CPU, "torch.f1", "success"),
        _outcome(STUDY_CPU, "torch.f2", "complete_failure", "not_implemented"),
        _outcome(STUDY_CPU, "torch.f3", "success"),
        _outcome(STUDY_CPU, "torch.f4", "success"),
        _outcome(OUR_CPU, "torch.f1", "complete_failure", "not_implemented"),
        _outcome(OUR_CPU, "torch.f2", "success"),
        _outcome(OUR_CPU, "torch.f3", "success"),
        _outcome(OUR_CPU, "torch.f4", "unavailable"),
        _outcome(OUR_CPU_COMPILED, "torch.f2", "success"),
        _outcome(OUR_CPU_COMPILED, "torch.f3", "success"),
    ]
    latencies = [
        _latency(T4, "torch.f1", 1.0),
        _latency(T4, "torch.f2", 2.0),
        _latency(V3, "torch.f1", 10.0),
        _latency(V3, "torch.f2", 50.0),
        _latency(A100, "torch.f1", 0.5),
        _latency(V3, "torch.f1", 10.0, T4, 1.0),
        _latency(T4, "torch.f1", 1.0, V3, 10.0),
        _latency(V3, "torch.f2", 50.0, T4, 2.0),
        _latency(T4, "torch.f2", 2.0, V3, 50.0),
        _latency(A100, "torch.f1", 0.5, T4, 1.0),
        _latency(T4, "torch.f1", 1.0, A100, 0.5),
        _latency(STUDY_CPU, "torch.f1", 4.0),
        _latency(STUDY_CPU, "torch.f3", 3.0),
        _latency(OUR_CPU, "torch.f2", 9.0),
        _latency(OUR_CPU, "torch.f3", 1.5),
        _latency(OUR_CPU_COMPILED, "torch.f3", 0.5),
    ]
    samples = [
        _sample("torch.f1", "top20", 0),
        _sample("torch.f2", "top20", 1),
        _sample("torch.f3", "10", 2),
        _sample("torch.f4", "50", 3),
    ]
    write_table("outcomes", pd.DataFrame(outcomes), root / "outcomes" / "outcomes.parquet")
    write_table("latencies", pd.DataFrame(latencies), root / "latencies" / "latencies.parquet")
    write_table("samples", pd.DataFrame(samples), root / "samples" / "mince2023.parquet")
    if results:
        rows = [
            _result(T4, "torch.f2", "failed", "not_implemented", "test_a"),
            _result(T4, "torch.f2", "passed", None, "test_b"),
            _result(T4, "torch.f3", "failed", "type_failure", "test_a"),
            _result(T4, "torch.f3", "failed", "harness", "test_b"),
        ]
        write_table("results", pd.DataFrame(rows), root / "results" / "mince2023" / "shard.parquet")
        write_pooled(root)
    if cases:
        case = {
            "case_id": "torch.f4",
            "framework": "torch",
            "function": "torch.f4",
            "study_name": None,
            "test_file": None,
            "upstream_test": None,
            "samples": ["mince2023"],
            "status": "removed",
            "removed_since": "2.0",
            "notes": "gone",
            "schema_version": 1,
        }
        write_table("cases", pd.DataFrame([case]), root / "cases" / "cases.parquet")
    return root


def _row(frame: pd.DataFrame, **match: object) -> pd.Series:
    selected = frame
    for column, value in match.items():
        selected = selected[selected[column] == value]
    assert len(selected) == 1, (match, selected)
    return selected.iloc[0]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    """The report's tables of the hand-made data, built once for the tests that read them (issue 57:
    ~8 s a build); none changes a table."""
    _, tables, _, _ = build(load_inputs(make_data(tmp_path_factory.mktemp("built") / "data")))
    return tables


def test_outcome_shares_top20_and_buckets_by_hand(built: dict[str, pd.DataFrame]) -> None:
    t4 = _row(built["outcome_shares"], device_model="T4")
    assert (t4["n_known"], t4["pct_success"], t4["pct_partial_failure"], t4["pct_complete_failure"]) == (
        4,
        50.0,
        25.0,
        25.0,
    )
    assert _row(built["outcome_shares"], device_model="A100")["n_unknown"] == 4
    top = _row(built["top20_vs_all"], device_model="TPU v3-8", subset="top20")
    assert (top["n_known"], top["pct_success"]) == (2, 100.0)
    buckets = built["failure_by_bucket"]
    t4_buckets = buckets[buckets["device_model"] == "T4"].set_index("bucket")
    assert t4_buckets.loc["top20", "pct_failing"] == 50.0  # f1 success, f2 partial
    assert t4_buckets.loc["10", "pct_failing"] == 100.0  # f3
    assert t4_buckets.loc["50", "pct_failing"] == 0.0  # f4
    assert list(t4_buckets.index) == ["top20", "10", "50"]


def test_failure_categories_by_hand(built: dict[str, pd.DataFrame]) -> None:
    table = built["failure_categories"]
    t4 = table[table["device_model"] == "T4"].set_index("failure_category")
    assert t4.loc["not_implemented", "functions"] == 1 and t4.loc["not_implemented", "subtest_rows"] == 1
    assert t4.loc["type_failure", "functions"] == 1 and t4.loc["type_failure", "subtest_rows"] == 1
    assert "harness" not in t4.index
    v3 = table[table["device_model"] == "TPU v3-8"].set_index("failure_category")
    assert dict(v3["functions"]) == {"float_precision": 1, "type_failure": 1}


def test_cross_device_and_generations_by_hand(built: dict[str, pd.DataFrame]) -> None:
    cross = _row(built["cross_device_shares"], device_model="TPU v3-8", reference_device_model="T4")
    assert cross["n_functions"] == 2
    assert cross["pct_over_10x_slower"] == 50.0  # f1 10x (not more), f2 25x
    assert cross["pct_faster_on_device"] == 0.0
    assert cross["median_ratio"] == pytest.approx(17.5)
    assert len(built["cross_device_shares"]) == 1  # A100 is not a primary model: not cross-device
    gen = _row(built["generation_shares"], device_model="A100", reference_device_model="T4")
    assert (gen["n_functions"], gen["median_ratio"], gen["pct_faster_on_device"]) == (1, 0.5, 100.0)
    functions = built["cross_device_functions"]
    assert list(functions["function"]) == ["torch.f2", "torch.f1"]  # slowest first


def test_then_and_now_by_hand(built: dict[str, pd.DataFrame]) -> None:
    changes = built["then_now_changes"]
    eager = changes[changes["now_setting"].str.endswith("eager")].set_index("function")
    assert dict(eager["change"]) == {
        "torch.f1": "broke",
        "torch.f2": "fixed",
        "torch.f3": "still_works",
        "torch.f4": "removed",
    }
    assert set(eager["then_setting"]) == {"mince2023 · torch 1.12.0 · t4_vm CPU · eager"}
    assert eager.loc["torch.f2", "then_other_devices"] == "T4 (gpu): partial_failure; TPU v3-8: success"
    compiled = changes[changes["now_setting"].str.endswith("compiled")].set_index("function")
    assert compiled.loc["torch.f1", "change"] == "not_run_now"
    summary = _row(built["then_now_summary"], now_setting="portability · torch 2.13.0 · EPYC (cpu) · eager")
    assert (summary["fixed"], summary["broke"], summary["still_works"], summary["removed"]) == (1, 1, 1, 1)
    moves = built["then_now_latency"]
    f3 = _row(moves, function="torch.f3", now_setting="portability · torch 2.13.0 · EPYC (cpu) · eager")
    assert f3["ratio_now_vs_then"] == pytest.approx(0.5)  # 1.5 ms now vs 3 ms then, CPU vs CPU
    assert set(moves["function"]) == {"torch.f3"}  # f1 not timed now, f2 not timed then
    removed = built["removed"]
    assert set(removed["function"]) == {"torch.f4"}
    assert "2.0" in set(removed["removed_since"].dropna())
    mode = _row(built["mode_summary"], framework="torch")
    assert (mode["n_functions"], mode["median_ratio_other_vs_eager"]) == (1, pytest.approx(1 / 3))


def test_run_report_writes_offline_html_markdown_figures_metrics_and_plots(tmp_path: Path) -> None:
    data = make_data(tmp_path / "data")
    out = tmp_path / "reports"
    run_report(data, out, out / "metrics.json")
    page = (out / "report.html").read_text()
    attributes = re.findall(r"""(?:src|href)\s*=\s*['"]([^'"]*)['"]""", page, flags=re.IGNORECASE)
    assert attributes, "the page should embed its figures"
    assert not [a for a in attributes if re.match(r"\s*(https?:)?//", a, flags=re.IGNORECASE)]
    assert "http://" not in page and "https://" not in page
    assert all(a.startswith(("data:image/png;base64,", "#")) for a in attributes)
    markdown = (out / "report.md").read_text()
    named = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown)
    assert "figures/outcome_shares.png" in named and "figures/then_now_outcomes.png" in named
    for name in named:
        assert (out / name).is_file(), name
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert {p.name for p in (out / "figures").glob("*.png")} == {Path(n).name for n in named}
    for label in ("T4 (gpu)", "TPU v3-8", "torch 1.12.0", "torch 2.13.0", "EPYC (cpu)", "eager", "compiled"):
        assert label in markdown
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics) == {"outcomes", "top20_vs_all", "latency", "generations", "then_now"}
    assert metrics["outcomes"]["mince2023/torch/t4/eager"] == {
        "n_functions": 4,
        "n_known": 4,
        "pct_success": 50.0,
        "pct_partial_failure": 25.0,
        "pct_complete_failure": 25.0,
    }
    assert metrics["latency"]["mince2023/torch/tpu-v3-8_vs_t4/eager"]["pct_over_10x_slower"] == 50.0
    assert metrics["generations"]["mince2023/torch/a100_vs_t4/eager"]["median_ratio"] == 0.5
    assert metrics["top20_vs_all"]["mince2023/torch/t4/eager"]["pct_failing_top20"] == 50.0
    now = metrics["then_now"]["portability/torch/epyc/eager"]
    assert (now["fixed"], now["broke"], now["removed"], now["latency_median_ratio_now_vs_then"]) == (
        1,
        1,
        1,
        0.5,
    )
    plots = {p.name: pd.read_csv(p) for p in (out / "plots").glob("*.csv")}
    assert set(plots) == {
        "outcome_shares.csv",
        "slowdown_shares.csv",
        "latency_ratios.csv",
        "failure_by_decile.csv",
        "then_now.csv",
    }
    for frame in plots.values():
        assert frame.columns[0] == "label"
    assert (
        _row(plots["slowdown_shares.csv"], label="mince2023 · torch 1.12.0 · TPU v3-8 / T4 (gpu) · eager")[
            "pct_over_10x_slower"
        ]
        == 50.0
    )


def test_report_without_cases_results_or_rows(tmp_path: Path) -> None:
    data = make_data(tmp_path / "data", cases=False, results=False)
    out = tmp_path / "reports"
    run_report(data, out, out / "metrics.json")
    _, tables, _, _ = build(load_inputs(data))
    assert list(tables["removed"]["evidence"]) == [
        "unavailable in portability · torch 2.13.0 · EPYC (cpu) · eager"
    ]
    assert (
        "subtest_rows" in tables["failure_categories"]
        and tables["failure_categories"]["subtest_rows"].sum() == 0
    )
    empty = tmp_path / "empty"
    run_report(empty, tmp_path / "empty_reports", tmp_path / "empty_reports" / "metrics.json")
    assert "(no rows)" in (tmp_path / "empty_reports" / "report.md").read_text()
    assert not list((tmp_path / "empty_reports" / "figures").glob("*.png"))
    assert json.loads((tmp_path / "empty_reports" / "metrics.json").read_text())["outcomes"] == {}


def test_stale_figures_are_removed_and_metric_keys_stay_put_across_versions(tmp_path: Path) -> None:
    """One report over a folder that holds a figure no section draws any more, and data with a
    second framework version of a setting (one run of ~8 s does for both)."""
    data = make_data(tmp_path / "data")
    out = tmp_path / "reports"
    (out / "figures").mkdir(parents=True)
    (out / "figures" / "old.png").write_bytes(b"x")
    # a second framework version of the same setting: keys gain @version only where they collide
    newer = [_outcome(("portability", "torch", "2.14.0", "cpu", "EPYC", "eager"), "torch.f1", "success")]
    write_table("outcomes", pd.DataFrame(newer), data / "outcomes" / "more.parquet")
    run_report(data, out, out / "metrics.json")
    assert not (out / "figures" / "old.png").exists()
    keys = set(json.loads((out / "metrics.json").read_text())["outcomes"])
    assert {
        "portability/torch/epyc/eager@2.13.0",
        "portability/torch/epyc/eager@2.14.0",
        "mince2023/torch/t4/eager",
    } <= keys


def test_samples_spelled_tf_match_results_spelled_tensorflow(tmp_path: Path) -> None:
    data = make_data(tmp_path / "data")
    tf_t4 = ("mince2023", "tensorflow", "2.11.0", "gpu", "T4", "eager")
    write_table(
        "outcomes",
        pd.DataFrame([_outcome(tf_t4, "tensorflow.cast", "complete_failure", "type_failure")]),
        data / "outcomes" / "tf.parquet",
    )
    sample = {**_sample("tf.cast", "top20", 9), "framework": "tensorflow"}
    write_table("samples", pd.DataFrame([sample]), data / "samples" / "tf.parquet")
    _, tables, _, _ = build(load_inputs(data))
    coverage = tables["sample_coverage"].set_index("framework")
    assert coverage.loc["tensorflow", "curated"] == 1 and coverage.loc["torch", "curated"] == 4
    assert _row(tables["failure_by_bucket"], framework="tensorflow")["pct_failing"] == 100.0
    assert (
        _row(tables["top20_vs_all"], framework="tensorflow", subset="top20")["pct_complete_failure"] == 100.0
    )


# --------------------------------------------------------------------------- how our runs ran

TF_COMPILED = ("portability", "tensorflow", "2.20.0", "cpu", "EPYC", "compiled")
TF_EAGER = ("portability", "tensorflow", "2.20.0", "cpu", "EPYC", "eager")


def _run_result(
    setting: tuple, case: str, subtest: str, execution: str | None, outcome: str = "passed", **more: object
) -> dict:
    """A results row of one of our runs, with how it executed."""
    failing = outcome != "passed"
    return {
        **_result(setting, case, outcome, "other" if failing else None, subtest),
        "run_id": f"run-{setting[-1]}",
        "failure_rule": "unclassified" if failing else None,
        "error_type": "E" if failing else None,
        "error_message": "boom" if failing else None,
        "execution": execution,
        "graph_breaks": None,
        "confirmation": None,
        "failure_subcategory": None,
        **more,
    }


def _case(case_id: str, status: str = "active", **more: object) -> dict:
    return {"case_id": case_id, "framework": "tensorflow", "status": status, **more}


def test_failing_rows_are_read_with_the_current_rules(tmp_path: Path) -> None:
    from portability_data.report.outcomes import how_runs_ran
    from portability_data.runner.failures import load_rules

    rules = {rule.rule_id: rule for section in load_rules().values() for rule in section}
    error_type, message = rules["tf_function_variable_creation"].example or ("", "")
    rows = [
        # stored unclassified (the run predates the rule); the rule table reads it now
        _run_result(
            TF_COMPILED,
            "tensorflow.a",
            "t1",
            "compiled",
            "failed",
            error_type=error_type,
            error_message=message,
        ),
        _run_result(TF_COMPILED, "tensorflow.b", "t1", "compiled", "failed"),  # no rule reads "boom"
        _run_result(TF_COMPILED, "tensorflow.c", "t1", "compiled"),
    ]
    study = {**rows[0], "source": "mince2023", "run_id": "study", "mode": "eager", "execution": None}
    write_table("results", pd.DataFrame(rows), tmp_path / "results" / "portability" / "shard.parquet")
    write_table("results", pd.DataFrame([study]), tmp_path / "results" / "mince2023" / "shard.parquet")
    write_pooled(tmp_path)
    inputs = load_inputs(tmp_path)
    results = inputs.results.set_index(["source", "case_id"])
    assert results.loc[("portability", "tensorflow.a"), "failure_rule"] == "tf_function_variable_creation"
    assert results.loc[("portability", "tensorflow.a"), "failure_subcategory"] == "compile_limitation"
    assert results.loc[("mince2023", "tensorflow.a"), "failure_rule"] == "unclassified"  # the study's reading
    executions, _ = how_runs_ran(inputs.results, inputs.runs)
    row = executions.set_index("source").loc["portability"]
    assert (row["n_failing_rows"], row["pct_unclassified"], row["n_reclassified"]) == (2, 50.0, 1)
    sections = build(inputs)[0]
    runs = next(s for s in sections if s.title == "How our runs ran")
    assert "../docs/METHOD.md#how-our-runs-ran" in runs.text  # the method prose lives there
    method = (Path(__file__).resolve().parents[1] / "docs" / "METHOD.md").read_text()
    assert "results shards keep the run-time reading" in " ".join(method.split())
    shown = dict(runs.tables)["Execution per setting"]
    assert list(shown.columns).index("n_reclassified") == list(shown.columns).index("pct_unclassified") + 1


def test_compiler_reach_over_all_and_routable_cases() -> None:
    from portability_data.report.outcomes import compiler_reach, how_runs_ran

    results = pd.DataFrame(
        [
            _run_result(TF_COMPILED, "tensorflow.a", "t1", "compiled"),
            _run_result(TF_COMPILED, "tensorflow.a", "t2", "not_routed"),
            _run_result(TF_COMPILED, "tensorflow.b", "t1", "not_routed"),  # routable, never compiled
            _run_result(TF_COMPILED, "tensorflow.c", "t1", "not_routed"),  # no compiled form
            # failed while compiling: the rule table reads a compiler limitation
            _run_result(
                TF_COMPILED,
                "tensorflow.d",
                "t1",
                "not_routed",
                "failed",
                failure_subcategory="compile_limitation",
            ),
            _run_result(TF_COMPILED, "tensorflow.gone", "t1", "compiled"),  # not an active case
            _run_result(TF_EAGER, "tensorflow.a", "t1", "eager"),
        ]
    )
    cases = pd.DataFrame(
        [
            _case("tensorflow.a"),
            _case("tensorflow.b"),
            _case("tensorflow.c", no_compiled_form="tf.compat.v1 session API"),
            _case("tensorflow.d"),
            _case("tensorflow.e"),  # active, not run in this setting
            _case("tensorflow.gone", status="removed"),
            {**_case("torch.x"), "framework": "torch"},
        ]
    )
    executions, _ = how_runs_ran(results, None, cases)
    by_mode = executions.set_index("mode")
    compiled = by_mode.loc["compiled"]
    assert [compiled[c] for c in ("n_active_cases", "n_no_compiled_form", "n_through_compiler")] == [5, 1, 2]
    assert (compiled["pct_through_compiler"], compiled["n_routable_through_compiler"]) == (40.0, 2)
    assert compiled["pct_routable_through_compiler"] == 50.0
    assert pd.isna(by_mode.loc["eager", "n_active_cases"])
    reach = compiler_reach(executions)
    assert list(reach["through_compiler"]) == [
        "tensorflow compiled: 2/5 (40%) of all cases, 2/4 (50%) of routable cases; 1 have no compiled form"
    ]
    assert reach["setting"].iloc[0] == "portability · tensorflow 2.20.0 · EPYC (cpu) · compiled"
    older, _ = how_runs_ran(results, None, cases.drop(columns=["no_compiled_form"]))  # older cases table
    assert (
        compiler_reach(older)["through_compiler"]
        .iloc[0]
        .endswith("2/5 (40%) of routable cases; 0 have no compiled form")
    )
    assert compiler_reach(how_runs_ran(results, None, None)[0]).empty


def test_the_report_shows_the_quiet_runs_aggregate_pooled() -> None:
    from portability_data.pipeline.aggregate.build import pooled_rows
    from portability_data.report.outcomes import how_runs_ran

    rows = [
        {
            **_run_result(TF_COMPILED, "tensorflow.a", "t1", "compiled"),
            "run_id": run_id,
            "test_id": f"{run_id}::t1",
        }
        for run_id in ("quiet", "busy")
    ]
    runs = pd.DataFrame(
        [
            {
                **dict(zip(KEYS, TF_COMPILED)),
                "run_id": run_id,
                "repeats": 1,
                "started_at": pd.Timestamp(day, tz="UTC"),
                "harness_digest": "H",
                "case_digests": json.dumps({"tensorflow.a": "a1"}),
                "host_load_max": load,
            }
            for run_id, day, load in (("quiet", "2026-03-01", 1.2), ("busy", "2026-03-02", 2.6))
        ]
    )
    executions, superseded = how_runs_ran(pooled_rows(pd.DataFrame(rows), runs, quiet_load_max=1.5), runs)
    assert list(superseded["run_id"]) == ["busy"] and list(superseded["superseded_by"]) == ["quiet"]
    assert (
        superseded["reason"].iloc[0]
        == "contended (host load 2.60 > 1.5) beside a quieter run of the same code"
    )
    assert (executions["n_subtests"].iloc[0], executions["host_load_max"].iloc[0]) == (1, 1.2)
    assert executions["host_other_cpu_max"].isna().all()  # neither run measured it (before schema 6)
    _, off = how_runs_ran(pooled_rows(pd.DataFrame(rows), runs, quiet_load_max=None), runs)
    assert off.empty
    # with the other work measured (schema 6), it decides and the table shows it
    runs["host_other_cpu_max"] = [0.9, 0.05]
    executions, superseded = how_runs_ran(pooled_rows(pd.DataFrame(rows), runs, quiet_load_max=1.5), runs)
    assert list(superseded["run_id"]) == ["quiet"] and list(superseded["superseded_by"]) == ["busy"]
    assert executions["host_other_cpu_max"].iloc[0] == 0.05


def test_buckets_then_and_now_per_sample() -> None:
    """Each sample's functions in the bucket it drew them from; the study's outcomes for its own
    sample only; a later sample's rows labelled with it, after the study's sample's."""
    from portability_data.report.outcomes import bucket_matrix, failure_by_bucket

    ours = ("portability", "torch", "2.13.0", "cpu", "AMD EPYC", "eager")
    outcomes = pd.DataFrame(
        [
            _outcome(T4, "torch.f1", "success"),
            _outcome(
                T4, "torch.g1", "complete_failure"
            ),  # the study's run of a 2026 function: not the 2026 draw
            _outcome(ours, "torch.f1", "success"),
            _outcome(ours, "torch.g1", "partial_failure"),
            _outcome(ours, "torch.g2", "success"),
        ]
    )
    samples = pd.DataFrame(
        {
            "sample_id": ["mince2023", "portability2026", "portability2026", "portability2026"],
            "framework": ["torch"] * 4,
            "function": ["torch.f1", "torch.f1", "torch.g1", "torch.g2"],
            "bucket": ["top20", "10", "top20", "10"],
        }
    )
    table = failure_by_bucket(outcomes, samples)
    study = table[table["source"] == "mince2023"]
    assert list(zip(study["sample_id"], study["bucket"])) == [("mince2023", "top20")]
    now = table[(table["source"] == "portability")].set_index(["sample_id", "bucket"])
    assert now.loc[("mince2023", "top20"), "n_known"] == 1
    assert now.loc[("portability2026", "top20"), "pct_failing"] == 100.0  # g1 partial
    assert (
        now.loc[("portability2026", "10"), "n_known"] == 2
        and now.loc[("portability2026", "10"), "pct_failing"] == 0.0
    )
    matrix = bucket_matrix(table)
    labels = list(matrix["setting"])
    assert len(labels) == 3 and labels[-1].endswith("· portability2026 sample")
    assert labels.index("portability · torch 2.13.0 · AMD EPYC (cpu) · eager") < labels.index(labels[-1])


def test_sample_coverage_counts_census_and_curated_functions_each_named() -> None:
    """A 2026 sample function measured by the census only is measured, not missing (issue 49: torch
    showed 41 of 69 although all 69 were measured)."""
    from portability_data.report.outcomes import sample_coverage

    samples = pd.DataFrame(
        {
            "sample_id": "portability2026",
            "framework": "torch",
            "function": ["torch.abs", "torch.cos", "torch.sin", "torch.tan"],
            "status": ["active", "active", "active", "replaced"],
        }
    )
    outcomes = pd.DataFrame({"framework": ["torch"], "function": ["torch.abs"]})
    census = frozenset({("torch", "torch.abs"), ("torch", "torch.cos"), ("torch", "torch.tan")})
    row = sample_coverage(outcomes, samples, census).iloc[0]
    assert (row["sampled"], row["curated"], row["census"], row["measured"]) == (3, 1, 2, 2)
    assert row["not_measured_examples"] == "torch.sin"


def test_two_paths_of_one_machine_model_are_ordered_by_name_not_by_chance() -> None:
    """openvino and openvino_f32 share a machine model and an unknown-device rank: the device's
    name breaks the tie (a set's hash order broke it before, differently in each `dvc repro`)."""
    from portability_data.report.inputs import reading_order_key

    model = "AMD EPYC (openvino CPU plugin)"
    plain, pinned = (
        reading_order_key("torch", device, "portability", model) for device in ("openvino", "openvino_f32")
    )
    assert plain < pinned
    assert reading_order_key("torch", "cpu", "portability", model) < plain  # the study's devices first
