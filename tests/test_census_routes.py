"""Two routes off the CPU on the same pairs (issues 51-53): ONNX Runtime beside OpenVINO, IREE beside
torch_xla, TFLite builtins beside Flex. The table says which route keeps a pair the other loses."""

from __future__ import annotations

import pandas as pd

from portability_data.report.census_moves import route_pairs, route_side


def _row(device: str, entry: str, dtype: str, status: str, run: str = "a") -> dict[str, str]:
    return {
        "framework": "torch",
        "origin": "opinfo",
        "entry": entry,
        "function": f"torch.{entry}",
        "dtype": dtype,
        "mode": "compiled",
        "device": device,
        "status": status,
        "framework_version": "2.9.0" if device == "xla" else "2.13.0",
        "run_id": f"torch-{device}-compiled-census-20261201T00000{run}Z-000000",
    }


def test_each_route_is_credited_only_with_the_pairs_it_runs_whole_on_the_device() -> None:
    rows = [
        _row("cpu", "sin", "float32", "works"),  # the CPU is never a route
        _row("onnxruntime", "sin", "float32", "works"),
        _row("openvino", "sin", "float32", "works"),
        _row("onnxruntime", "cos", "float32", "works"),
        _row("openvino", "cos", "float32", "host_fallback"),  # an op on the host: not whole
        _row("onnxruntime", "cos", "float64", "fails"),
        _row("openvino", "cos", "float64", "ran"),  # ran, nothing to judge it: still runs
        _row("onnxruntime", "tan", "float32", "deviates"),
        _row("openvino", "tan", "float32", "fails"),
        _row("onnxruntime", "abs", "float32", "unconfirmed"),
        _row("openvino", "abs", "float32", "works"),
        _row("onnxruntime", "neg", "float32", "works"),  # measured by one route only: not in the table
        _row("xla", "sin", "float32", "fails", run="1"),  # an older xla run, then a newer one
        _row("xla", "sin", "float32", "works", run="2"),
    ]
    table = route_pairs(pd.DataFrame(rows)).set_index(["first", "second"])
    assert sorted(table.index) == [("onnxruntime", "openvino"), ("onnxruntime", "xla"), ("openvino", "xla")]
    ort_ov = table.loc[("onnxruntime", "openvino")]
    counts = ["pairs_both", "runs_both", "only_first", "only_second", "runs_neither", "not_compared"]
    assert ort_ov[counts].tolist() == [5, 1, 1, 1, 1, 1]
    assert (ort_ov["functions_only_first"], ort_ov["functions_only_second"]) == (1, 1)
    assert (ort_ov["first_version"], ort_ov["second_version"]) == ("2.13.0", "2.13.0")
    ort_xla = table.loc[("onnxruntime", "xla")]
    assert (ort_xla["pairs_both"], ort_xla["runs_both"], ort_xla["second_version"]) == (1, 1, "2.9.0")


def test_a_route_side_is_judged_by_the_census_status() -> None:
    assert [route_side(s) for s in ("works", "ran", "host_fallback", "partial", "no_sample")] == [
        "runs", "runs", "falls_back", "fails", "not_compared"
    ]  # fmt: skip


def test_no_two_routes_no_rows() -> None:
    only_cpu = pd.DataFrame(
        [_row("cpu", "sin", "float32", "works"), _row("onnxruntime", "sin", "float32", "works")]
    )
    assert route_pairs(only_cpu).empty
