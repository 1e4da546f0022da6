"""Whose a run is: `portability run` lands a user's run under source `local` (this machine's), the
project's own source only on a maintainer's explicit `--source portability`, and the DVC run
stage keeps measuring the committed settings as `portability` (issue 59)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from portability_data.pipeline.run_stage import setting_spec
from portability_data.runner.spec import LOCAL_SOURCE, SOURCE
from tests.conftest import REPO_ROOT, CaseRepo

PASSING = "def test_one():\n    assert 1 + 1 == 2\n"


def portability(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    command = [sys.executable, "-m", "portability_data.cli", *args]
    return subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, check=False, timeout=600
    )


def landed(root: Path, run_id: str) -> dict[str, list[str]]:
    """table -> the source folders holding the run's file."""
    return {
        table: sorted(p.parent.name for p in (root / "data" / table).glob(f"*/{run_id}.parquet"))
        for table in ("results", "runs")
    }


def test_a_users_run_is_local_and_a_maintainer_names_the_projects_source(case_repo: CaseRepo) -> None:
    case_repo.add("torch", "one", PASSING)
    mine = portability(case_repo.root, "run", "--framework", "torch", "--repeats", "1", "--no-confirm")
    assert mine.returncode == 0, mine.stderr
    run_id = mine.stdout.strip()
    assert landed(case_repo.root, run_id) == {"results": [LOCAL_SOURCE], "runs": [LOCAL_SOURCE]}
    [row] = pq.read_table(case_repo.root / "data" / "runs" / "local" / f"{run_id}.parquet").to_pylist()
    assert row["source"] == "local"
    assert f"-> data/results/local/{run_id}.parquet (source local: this machine's run" in mine.stderr
    assert not (case_repo.root / "data" / "results" / "portability").exists()

    project = portability(
        case_repo.root, "run", "--framework", "torch", "--repeats", "1", "--no-confirm", "--source", SOURCE
    )
    assert project.returncode == 0, project.stderr
    ours = project.stdout.strip()
    assert landed(case_repo.root, ours) == {"results": [SOURCE], "runs": [SOURCE]}
    assert "the project's own data" in project.stderr


def test_a_resumed_run_keeps_its_own_source(case_repo: CaseRepo) -> None:
    case_repo.add("torch", "one", PASSING)
    refused = portability(case_repo.root, "run", "--resume", "torch-cpu-eager-x", "--source", "portability")
    assert refused.returncode != 0
    assert "a resumed or closed run keeps its own" in refused.stderr


def test_the_run_stage_measures_the_committed_settings_as_the_projects_source() -> None:
    """The pipeline's own stage writes where the committed runs are (data/results/portability)."""
    params = {"timeout_s": 60, "memory_mb": 1024}
    spec = setting_spec("torch", "cpu", "eager", 3, params)
    assert spec.source == SOURCE == "portability"
    stage = (REPO_ROOT / "dvc.yaml").read_text()
    assert "portability run-stage --out data/run_manifest.json" in stage and "--source" not in stage
