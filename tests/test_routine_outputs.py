"""A routine command leaves committed files alone (issue 59): a benchmark run writes a new file
unless asked to update the committed result, and a submission folder is scratch git ignores."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, example_rows, write_example_dataset


def test_a_submission_folder_and_routine_benchmark_results_are_git_ignored() -> None:
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for path in (
        "submission/system.json",
        "submission/results/local/x.parquet",
        "benchmarks/results/local/a.json",
    ):
        done = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO_ROOT, check=False)
        assert done.returncode == 0, f"{path} is not git-ignored"
    kept = subprocess.run(
        ["git", "check-ignore", "-q", "benchmarks/results/bench_loader.json"], cwd=REPO_ROOT
    )
    assert kept.returncode == 1  # the committed results stay tracked


def test_the_loader_benchmark_leaves_the_committed_result_alone(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "benchmarks" / "results").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "benchmarks" / "bench_loader.py", repo / "benchmarks" / "bench_loader.py")
    committed = repo / "benchmarks" / "results" / "bench_loader.json"
    committed.write_text('{"committed": true}\n')
    write_example_dataset(repo / "data")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src"), "HF_HOME": str(tmp_path / "hf")}
    command = [
        sys.executable,
        str(repo / "benchmarks" / "bench_loader.py"),
        "--configs",
        "cases",
        "--rounds",
        "1",
    ]
    command += ["--data-dir", str(repo / "data")]
    routine = subprocess.run(
        command, cwd=repo, env=env, capture_output=True, text=True, check=False, timeout=600
    )
    assert routine.returncode == 0, routine.stderr[-3000:]
    assert committed.read_text() == '{"committed": true}\n'
    [written] = (repo / "benchmarks" / "results" / "local").glob("bench_loader-*.json")
    assert json.loads(written.read_text())["configs"]["cases"]["rows"] == len(example_rows()["cases"])
    assert "the committed bench_loader.json is left as it is" in routine.stdout
    update = subprocess.run(
        [*command, "--update-committed"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert update.returncode == 0, update.stderr[-3000:]
    assert json.loads(committed.read_text())["configs"]["cases"]["rows"] == len(example_rows()["cases"])
