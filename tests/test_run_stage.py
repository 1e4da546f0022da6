"""The run stage redoes nothing that is done: complete runs, and partial runs closed by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from portability_data.pipeline.run_stage import cases_digest, existing_runs
from portability_data.tables.tableio import write_table
from tests.conftest import example_rows


def _run(tmp_path: Path, run_id: str, status: str, key: str) -> None:
    row = {**example_rows()["runs"][0], "run_id": run_id, "status": status, "params_hash": key}
    write_table("runs", pd.DataFrame([row]), tmp_path / "runs" / "portability" / f"{run_id}.parquet")


def test_complete_beats_partial_and_running_is_ignored(tmp_path: Path) -> None:
    _run(tmp_path, "a-partial", "partial", "k1")
    _run(tmp_path, "b-complete", "complete", "k1")
    _run(tmp_path, "c-partial", "partial", "k1")
    _run(tmp_path, "d-partial", "partial", "k2")
    _run(tmp_path, "e-running", "running", "k3")
    found = existing_runs(tmp_path / "runs")
    assert {k: v["run_id"] for k, v in found.items()} == {"k1": "b-complete", "k2": "d-partial"}


def test_cases_digest_changes_with_a_case_file(case_repo) -> None:
    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    before = cases_digest(case_repo.root, "torch")
    (case_repo.root / "cases" / "torch" / "__pycache__").mkdir()
    (case_repo.root / "cases" / "torch" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert cases_digest(case_repo.root, "torch") == before  # caches are not cases
    (case_repo.root / "cases" / "torch" / "test_one.py").write_text("def test_a():\n    assert 1\n")
    assert cases_digest(case_repo.root, "torch") != before
