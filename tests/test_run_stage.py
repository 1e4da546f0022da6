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


def test_per_framework_modes_and_timeouts_choose_the_settings(case_repo, monkeypatch) -> None:
    """census.modes_by_framework leaves JAX's compiled setting out; timeout_s_by_framework gives
    JAX its own limit, so its key differs from one made with the common limit. With a complete run
    for every setting chosen, the stage runs nothing and lists exactly those."""
    from portability_data.pipeline import run_stage as stage
    from portability_data.runner.provenance import harness_digest
    from portability_data.runner.spec import Paths

    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    params = {
        "frameworks": ["torch", "jax"],
        "devices": ["cpu"],
        "modes": ["eager", "compiled"],
        "modes_by_framework": {"jax": ["eager"]},
        "repeats": 1,
        "timeout_s": 900,
        "timeout_s_by_framework": {"jax": 120},
        "memory_mb": 1024,
    }
    paths = Paths.under(case_repo.root)
    harness = harness_digest(paths.cases_dir)
    settings = [("torch", "eager"), ("torch", "compiled"), ("jax", "eager")]
    for framework, mode in settings:
        spec = stage.setting_spec(framework, "cpu", mode, 1, params, suite="census")
        assert spec.timeout_s == (120.0 if framework == "jax" else 900.0)
        key = spec.params_hash(stage.cases_digest(paths.repo_root, framework, "census") + harness)
        _run(paths.runs_dir.parent, f"{framework}-{mode}", "complete", key)
    monkeypatch.setattr(stage, "run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran")))
    covering = stage.run_stage(params, case_repo.root, case_repo.root / "manifest.json", suite="census")
    assert covering == ["torch-eager", "torch-compiled", "jax-eager"]
