"""What the export and edge paths leave outside their runtime (issues 51, 52): OpenVINO partitions
left to PyTorch, Flex ops a TFLite model needs, nodes XNNPACK does not take. Each path keeps its own
list, and a model that failed with Flex ops named still counts them."""

from __future__ import annotations

from typing import Any

import pandas as pd

from portability_data.report.path_fallback import path_ops, path_summary, path_top_functions


def _row(device: str, function: str, subtest: str, outcome: str, ops: list[str] | None) -> dict[str, Any]:
    framework = "tensorflow" if device.startswith("litert") else "torch"
    return {
        "framework": framework,
        "framework_version": "2.21.0" if framework == "tensorflow" else "2.13.0",
        "device": device,
        "mode": "compiled",
        "suite": "census",
        "function": f"{framework}.{function}",
        "case_id": f"{framework}.census.opinfo.{function}",
        "subtest": subtest,
        "outcome": outcome,
        "confirmation": "confirmed" if outcome != "passed" else None,
        "failure_category": "other" if outcome == "failed" else None,
        "host_fallback_ops": ops,
    }


ROWS = pd.DataFrame(
    [
        _row("openvino", "atan", "f32", "host_fallback", ["aten.atan.default"]),
        _row("openvino", "atan", "f64", "passed", None),
        _row("openvino", "histc", "f32", "host_fallback", ["aten.histc.default", "aten.atan.default"]),
        _row("openvino", "histc", "f64", "host_fallback", ["aten.histc.default"]),
        _row("openvino", "sin", "f32", "passed", []),
        _row("litert_flex", "cumsum", "f32", "failed", ["FlexCumsum"]),  # did not load: still named
        _row("litert_flex", "abs", "f32", "passed", None),
    ]
)


def test_each_path_lists_its_own_functions_with_ops_left_outside_most_subtests_first() -> None:
    top = path_top_functions(ROWS)
    openvino = top[top["device"] == "openvino"]
    assert openvino["function"].tolist() == ["torch.histc", "torch.atan"]
    assert openvino.iloc[0][["subtests", "subtests_with_ops_outside", "ran_with_them"]].tolist() == [2, 2, 2]
    assert openvino.iloc[0]["ops"] == "aten.histc.default (2), aten.atan.default (1)"
    flex = top[top["device"] == "litert_flex"].iloc[0]
    assert (flex["function"], flex["ran_with_them"], flex["ops"]) == (
        "tensorflow.cumsum",
        0,
        "FlexCumsum (1)",
    )


def test_ops_are_counted_per_path_by_functions_and_subtests() -> None:
    ops = path_ops(ROWS)
    atan = ops[(ops["device"] == "openvino") & (ops["op"] == "aten.atan.default")].iloc[0]
    assert (atan["n_functions"], atan["n_subtests"], atan["functions"]) == (2, 2, "torch.atan, torch.histc")
    assert set(ops.loc[ops["device"] == "litert_flex", "op"]) == {"FlexCumsum"}


def test_the_summary_counts_statuses_and_functions_with_ops_outside_per_path() -> None:
    summary = path_summary(ROWS).set_index("device")
    assert summary.loc["openvino", ["n_functions", "n_subtests", "subtests_passed"]].tolist() == [3, 5, 2]
    assert summary.loc["openvino", ["subtests_host_fallback", "functions_with_ops_outside"]].tolist() == [
        3,
        2,
    ]
    flex = ["subtests_failing", "of_them_failing", "distinct_ops_outside"]
    assert summary.loc["litert_flex", flex].tolist() == [1, 1, 1]
