"""The report's picture of what PyTorch declares for devices we cannot reach, on declarations made
here with known answers, and its section built from a real `declared` table file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from portability_data.report.declared_support import (
    FIGURE,
    active_declarations,
    declared_failures,
    declared_section,
    dtype_coverage,
    module_group,
)
from portability_data.tables.tableio import write_table


def declaration(function: str | None, device: str | None, dtype: str | None, declared: str, **extra) -> dict:
    return {
        "framework": "torch",
        "framework_version": "2.13.0",
        "function": function,
        "unmapped_reason": None if function else "private_name",
        "origin": extra.get("origin", "opinfo"),
        "entry": (function or "_private").rsplit(".", 1)[-1],
        "variant": None,
        "device_type": device,
        "dtype": dtype,
        "declared": declared,
        "aspect": extra.get("aspect", "forward"),
        "test_class": None,
        "test_name": None,
        "active": extra.get("active", True),
        "reason": extra.get("reason"),
        "source": "common_methods_invocations.py:op_db[0].dtypes",
    }


def example() -> pd.DataFrame:
    rows = []
    for dtype in ("float32", "float64", "int64", "bool"):  # torch.add: 4 dtypes on the CPU
        rows.append(declaration("torch.add", "cpu", dtype, "supported_dtype"))
        rows.append(declaration("torch.add", "cuda", dtype, "supported_dtype"))
    for dtype in ("float32", "int64"):  # MPS: no float64, no bool for add
        rows.append(declaration("torch.add", "mps", dtype, "supported_dtype"))
    rows.append(declaration("torch.add", "cuda", "float16", "supported_dtype"))  # beyond the CPU
    gap = declaration("torch.add", "mps", "float64", "expected_failure", origin="mps_list")
    rows.append(gap)  # a dtype gap: MPS declares no float64 for add
    for dtype in ("float32", "float64"):
        rows.append(declaration("torch.nn.functional.relu", "cpu", dtype, "supported_dtype"))
        rows.append(declaration("torch.nn.functional.relu", "mps", dtype, "supported_dtype"))
    rows.append(declaration("torch.nn.functional.relu", "mps", "float32", "expected_failure"))  # beyond a gap
    rows.append(declaration("torch.nn.functional.relu", "cuda", None, "skip"))  # all dtypes
    relu = "torch.nn.functional.relu"
    rows.append(declaration(relu, "cuda", "float64", "supported_dtype", aspect="backward"))
    rows.append(declaration(relu, "xpu", None, "skip", active=False))  # its condition is false here
    rows.append(declaration(None, "cpu", "float32", "supported_dtype"))  # unmapped: left out
    return pd.DataFrame.from_records(rows)


@pytest.mark.parametrize(
    ("function", "group"),
    [
        ("torch.add", "torch"),
        ("torch.Tensor.add_", "torch.Tensor"),
        ("torch.nn.functional.conv2d", "torch.nn.functional"),
        ("torch.nn.Conv2d", "torch.nn (modules)"),
        ("torch.linalg.svd", "torch.linalg"),
        ("torch.signal.windows.hann", "torch.signal"),
        ("torch.distributions.normal.Normal", "other torch.*"),
    ],
)
def test_a_function_belongs_to_its_module_group(function: str, group: str) -> None:
    assert module_group(function) == group


def test_dtype_coverage_is_the_share_of_the_cpus_forward_pairs_declared_on_the_device() -> None:
    rows = active_declarations(example())
    coverage = dtype_coverage(rows, ["cuda", "mps"]).set_index("module")
    torch = coverage.loc["torch"]
    assert (torch["functions"], torch["cpu_pairs"]) == (1, 4)
    assert torch["cuda_pct"] == 100.0 and torch["cuda_beyond_cpu"] == 1  # float16 beyond the CPU
    assert torch["mps_pct"] == 50.0 and torch["mps_beyond_cpu"] == 0
    functional = coverage.loc["torch.nn.functional"]
    assert functional["mps_pct"] == 100.0
    # cuda declares relu only as a skip and a backward dtype: named, so 0% forward, not "not named"
    assert functional["cuda_pct"] == 0.0


def test_a_device_the_databases_never_name_for_a_group_has_no_share() -> None:
    rows = active_declarations(example())
    coverage = dtype_coverage(rows, ["xpu"]).set_index("module")
    assert pd.isna(coverage.loc["torch", "xpu_pct"])  # the inactive xpu row is dropped: xpu unnamed


def test_declared_failures_leave_out_dtype_gaps_and_inactive_rows() -> None:
    rows = active_declarations(example())
    failures = declared_failures(rows, ["cuda", "mps", "xpu"]).set_index("module")
    assert failures.loc["torch", "mps"] == 0  # the float64 xfail is a gap: MPS declares no float64
    assert failures.loc["torch.nn.functional", "mps"] == 1  # float32 is declared, yet xfails
    assert failures.loc["torch.nn.functional", "cuda"] == 1  # a skip on all dtypes
    assert failures.loc["torch.nn.functional", "xpu"] == 0  # inactive on this wheel


def test_the_section_is_built_from_the_declared_table_and_absent_without_it(tmp_path: Path) -> None:
    assert declared_section(tmp_path) is None
    write_table("declared", example(), tmp_path / "declared" / "declared.parquet")
    section, images, metrics = declared_section(tmp_path)
    assert section.tables[0][0].startswith("Forward dtypes declared supported")
    assert section.figures == [FIGURE] and images[FIGURE].startswith(b"\x89PNG")
    assert metrics["functions"] == 2
    assert metrics["dtype_coverage_pct"]["cuda"] == pytest.approx(100 * 4 / 6, abs=0.05)
