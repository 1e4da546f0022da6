"""The cross-framework table (issue 21): one NumPy name, the same inputs, each framework beside the
others."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from portability_data.pipeline.crossframework import crossframework, run_crossframework
from portability_data.readings.crossframework import largest_disagreements, promotion_differences
from portability_data.tables.tableio import read_table, write_table
from tests.conftest import REPO_ROOT


def matrix_row(framework: str, origin: str, entry: str, dtype: str, status: str, **measured) -> dict:
    """A support-matrix row as the support_matrix stage writes it."""
    prefix = {"jax": "jax.numpy", "tensorflow": "tensorflow.experimental.numpy", "torch": "torch"}[framework]
    failed = {"works": 0, "fails": 7, "partial": 3, "deviates": 1}.get(status, 0)
    return {
        "framework": framework,
        "framework_version": {"jax": "0.10.2", "tensorflow": "2.21.0", "torch": "2.13.0"}[framework],
        "function": f"{prefix}.{entry}",
        "origin": origin,
        "entry": entry,
        "case_id": f"{framework}.census.{origin}.{entry.replace('.', '_')}",
        "dtype": dtype,
        "device": "cpu",
        "device_model": "AMD EPYC",
        "mode": "eager",
        "run_id": f"{framework}-cpu-eager-census-1",
        "status": status,
        "samples": 7,
        "samples_failed": failed,
        "oracle": "numpy",
        "max_abs_error": measured.get("abs_error", 0.0),
        "max_rel_error": measured.get("rel_error", 0.0),
        "error_type": None if status == "works" else "NotFoundError",
        "failure_category": None,
        "confirmation": None if status == "works" else "confirmed",
        "error_message": None if status == "works" else f"input edge (9,) {dtype}: no kernel",
        "declared_dtype": None,
        "declared_failures": 0,
        "finding": None,
    }


def test_one_name_in_two_frameworks_is_set_side_by_side_and_the_one_apart_named(tmp_path: Path) -> None:
    matrix = pd.DataFrame(
        [
            matrix_row("jax", "numpy", "arccos", "int8", "works"),
            matrix_row("tensorflow", "tnp", "arccos", "int8", "fails"),
            matrix_row("jax", "numpy", "add", "float32", "works", rel_error=1e-7),
            matrix_row("tensorflow", "tnp", "add", "float32", "works", rel_error=4e-7),
            matrix_row("jax", "numpy", "linalg.svd", "float32", "works"),  # one framework only: left out
            matrix_row("torch", "opinfo", "add", "float32", "fails"),  # not a NumPy namesake census
            matrix_row("jax", "harnesses", "add", "float32", "fails"),
        ]
    )
    table = crossframework(matrix)
    assert sorted(table["name"].unique()) == ["add", "arccos"]
    assert set(table["framework"]) == {"jax", "tensorflow"} and (table["frameworks"] == 2).all()
    arccos = table[table["name"] == "arccos"].set_index("framework")
    assert list(arccos["agreement"]) == ["disagree", "disagree"]
    assert arccos.loc["tensorflow", "stands_apart"] == "alone_fails"
    assert pd.isna(arccos.loc["jax", "stands_apart"]) and arccos.loc["jax", "reference"] == "numpy.arccos"
    add = table[table["name"] == "add"]
    assert set(add["agreement"]) == {"agree"} and add["stands_apart"].isna().all()
    assert add["rel_error_spread"].iloc[0] == pytest.approx(3e-7)
    top = largest_disagreements(table)
    assert list(top["name"]) == ["arccos", "add"] and top["apart"].iloc[0] == "tensorflow alone_fails"
    assert top["message"].iloc[0] == "input edge (9,) int8: no kernel" and top["dtypes"].iloc[0] == "int8"

    # the stage writes it through the contract, and the contract refuses a miscounted group
    source = tmp_path / "support_matrix.parquet"
    write_table("support_matrix", matrix, source)
    out = tmp_path / "crossframework.parquet"
    lines = run_crossframework(source, out)
    assert lines[0].startswith("2 NumPy names in two frameworks or more; 2 name x dtype x setting groups")
    assert len(read_table("crossframework", out)) == 4
    broken = table.copy()
    broken.loc[0, "frameworks"] = 3
    with pytest.raises(Exception, match="frameworks must count"):
        write_table("crossframework", broken, tmp_path / "broken.parquet")


def test_result_dtypes_on_the_same_inputs_are_compared_across_frameworks(tmp_path: Path) -> None:
    """Frameworks that all work can still return different dtypes (promotion): the group says
    `differs` and the report lists each framework's dtype beside NumPy's. A framework that ran other
    inputs (JAX without x64: numpy_32bit) or recorded none is not held to the others."""
    dtypes = ("result_dtype", "oracle_dtype", "dtype_mismatches")

    def row(framework: str, origin: str, entry: str, dtype: str, returned, numpy, off, oracle="numpy"):
        return {
            **matrix_row(framework, origin, entry, dtype, "works"),
            **dict(zip(dtypes, (returned, numpy, off))),
            "oracle": oracle,
        }

    matrix = pd.DataFrame(
        [
            row("torch", "numpy", "sqrt", "int8", "float32", "float16", 7),
            row("jax", "numpy", "sqrt", "int8", "float32", "float16", 7),
            row("tensorflow", "tnp", "sqrt", "int8", "float16", "float16", 0),
            row("torch", "numpy", "add", "float32", "float32", "float32", 0),
            row("tensorflow", "tnp", "add", "float32", "float32", "float32", 0),
            row("torch", "numpy", "mean", "float64", "float64", "float64", 0),
            row("jax", "numpy", "mean", "float64", "float32", "float32", 0, oracle="numpy_32bit"),
            row("torch", "numpy", "cos", "float32", None, None, None),  # measured before schema 8
            row("tensorflow", "tnp", "cos", "float32", "float32", "float32", 0),
        ]
    )
    table = crossframework(matrix)
    verdict = table.drop_duplicates("name").set_index("name")["dtype_agreement"]
    assert verdict["sqrt"] == "differs" and verdict["add"] == "same_dtype"
    assert pd.isna(verdict["mean"]) and pd.isna(verdict["cos"])  # fewer than two held to each other
    assert set(table["agreement"]) == {"agree"}  # every status works: only the dtypes part them
    differences = promotion_differences(table)
    assert differences.to_dict("records") == [
        {
            "name": "sqrt",
            "dtype": "int8",
            "device": "cpu",
            "mode": "eager",
            "numpy": "float16",
            "results": "jax float32, tensorflow float16, torch float32",
            "frameworks_off_numpy": 2,
        }
    ]
    source, out = tmp_path / "support_matrix.parquet", tmp_path / "crossframework.parquet"
    write_table("support_matrix", matrix, source)
    lines = run_crossframework(source, out)
    assert "result dtypes compared in 2 groups, 1 differ" in lines[1]
    assert read_table("crossframework", out)["dtype_agreement"].value_counts().to_dict() == {
        "same_dtype": 2,
        "differs": 3,
    }


def test_without_two_frameworks_the_table_is_empty_and_valid(tmp_path: Path) -> None:
    matrix = pd.DataFrame([matrix_row("jax", "numpy", "arccos", "int8", "works")])
    table = crossframework(matrix)
    assert table.empty
    write_table("crossframework", table, tmp_path / "empty.parquet")


def test_jax_numpy_and_tf_numpy_census_draw_the_same_arrays_for_a_shared_name() -> None:
    """Same inputs by construction: both modules ask the shared generator for (NumPy name, dtype,
    kind, arity), and their manifests (harvested from NumPy) give a shared name the same arity and
    kinds, so the arrays are equal bit for bit (generator.sample is seeded by those four)."""
    jax_manifest = yaml.safe_load((REPO_ROOT / "cases/jax/census/numpy.yaml").read_text())
    tf_manifest = yaml.safe_load((REPO_ROOT / "cases/tensorflow/census/tnp.yaml").read_text())
    jax_entries = {e["entry"]: e for e in jax_manifest["entries"]}
    shared = [e for e in tf_manifest["entries"] if e["entry"] in jax_entries]
    assert len(shared) >= 150
    differing = []
    for tf_entry in shared:
        jax_entry = jax_entries[tf_entry["entry"]]
        for dtype in set(tf_entry["dtypes"]) & set(jax_entry["dtypes"]):
            inputs = [(e["arity"], e["kinds"][dtype]) for e in (tf_entry, jax_entry)]
            if inputs[0] != inputs[1]:
                differing.append((tf_entry["entry"], dtype))
    assert len(differing) <= len(shared) // 20, differing[:10]
