"""Reliability: cases that fork, leave children behind or write files do not corrupt the run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow.parquet as pq

from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run

NASTY = """
import os, subprocess, sys, time
from pathlib import Path

def test_forks_and_child_returns_to_pytest():
    pid = os.fork()
    if pid == 0:
        return  # the child goes back into pytest and would run the rest of the file
    os.waitpid(pid, 0)

def test_leaves_a_child_running():
    Path(os.environ["HOME"], "child.pid").write_text(str(subprocess.Popen([sys.executable, "-c",
        "import time; time.sleep(300)"]).pid))

def test_writes_into_the_working_directory():
    Path("written_by_case.txt").write_text("x")
    Path("cases").mkdir(exist_ok=True)

def test_after():
    assert True
"""


def test_fork_child_and_writes(case_repo) -> None:
    case_repo.add("torch", "nasty", NASTY)
    before = sorted(p.relative_to(case_repo.root) for p in case_repo.root.rglob("*"))
    paths = Paths.under(case_repo.root)
    run_id = run(RunSpec(framework="torch", device="cpu", repeats=1, timeout_s=60), paths, log=lambda m: None)
    rows = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
    keys = [(r["subtest"], r["repeat"]) for r in rows]
    assert len(keys) == len(set(keys)), "a forked child must not add duplicate rows"
    assert {r["subtest"] for r in rows} == {
        "test_forks_and_child_returns_to_pytest",
        "test_leaves_a_child_running",
        "test_writes_into_the_working_directory",
        "test_after",
    }
    assert {r["subtest"]: r["outcome"] for r in rows}["test_after"] == "passed"
    after = sorted(p.relative_to(case_repo.root) for p in case_repo.root.rglob("*"))
    written = {str(p) for p in set(after) - set(before)}
    assert not any("written_by_case" in p for p in written), written  # the case ran in a scratch folder
    assert all(p.startswith("data") for p in written), written


def test_children_are_killed_with_the_worker(case_repo, tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    case_repo.add(
        "jax",
        "orphan",
        f"""
import subprocess, sys
from pathlib import Path

def test_spawn():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    Path({str(marker)!r}).write_text(str(child.pid))
""",
    )
    paths = Paths.under(case_repo.root)
    run(RunSpec(framework="jax", device="cpu", repeats=1), paths, log=lambda m: None)
    pid = int(marker.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError(f"child {pid} of a case survived the run")
