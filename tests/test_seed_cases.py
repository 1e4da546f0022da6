"""The seed cases run for real under the runner on every framework, and every case row checks."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from portability_data.runner.supervisor import Paths, RunSpec, run
from tests import beside
from tests.conftest import REPO_ROOT
from tests.test_ci_xla import FAKE_DF, write_executable

SEEDS = {
    "torch": ("torch.argsort", "torch.addr"),
    "tensorflow": ("tensorflow.linalg.svd", "tensorflow.reshape"),
    "jax": ("jax.numpy.cos", "jax.numpy.sum"),
}


@pytest.mark.parametrize("framework", list(SEEDS))
def test_seed_cases_run_and_write_a_real_shard(framework: str, repo_root: Path, tmp_path: Path) -> None:
    paths = Paths(
        repo_root, repo_root / "cases", tmp_path / "results", tmp_path / "runs", tmp_path / "journal"
    )
    run_id = run(
        RunSpec(framework=framework, device="cpu", repeats=1, cases=SEEDS[framework]),
        paths,
        log=lambda m: None,
    )
    rows = pq.read_table(tmp_path / "results" / "portability" / f"{run_id}.parquet").to_pylist()
    assert {r["case_id"] for r in rows} == set(SEEDS[framework])
    passed = [r for r in rows if r["outcome"] == "passed"]
    assert len(passed) >= 0.8 * len(rows)
    timed = [r for r in passed if r["op_latencies_ms"]]  # error-handling subtests time nothing
    assert len(timed) >= 0.9 * len(passed)
    assert all(min(r["op_latencies_ms"]) > 0 for r in timed)
    assert all(r["device"] == "cpu" and r["framework_version"] != "unknown" for r in rows)
    runs = pq.read_table(tmp_path / "runs" / "portability" / f"{run_id}.parquet").to_pylist()
    assert runs[0]["status"] == "complete" and runs[0]["n_results"] == len(rows)


def case_check_job(folder: Path) -> beside.Job:
    """`portability case check` of the repository's cases, as CI runs it."""
    return beside.Job([[sys.executable, "-m", "portability_data.cli", "case", "check"]], cwd=REPO_ROOT)


# The check collects every case under each framework (~20 s): it runs beside the suite.
BESIDE = {"case-check": (case_check_job, ["test_every_case_in_the_repository_checks"])}


def test_every_case_in_the_repository_checks(tmp_path: Path) -> None:
    """`portability case check`, as CI runs it: rows, api membership, samples and pytest collection."""
    out = beside.finished("case-check", case_check_job, tmp_path)
    assert out.returncode == 0, out.stderr[-5000:]
    assert "case row(s) OK" in out.stdout, out.stdout


def test_readme_test_command_is_what_ci_runs(repo_root: Path) -> None:
    readme = (repo_root / "README.md").read_text()
    blocks = readme.split("```bash\n")
    first, second = blocks[1].split("```")[0].strip(), blocks[2].split("```")[0].strip()
    assert first.endswith("dvc repro")
    assert second in (repo_root / ".ci" / "run").read_text()


def test_ci_fails_when_the_install_fails(repo_root: Path, tmp_path: Path) -> None:
    """A failed install must not fall through to an exit 0 that ran no test."""
    import subprocess

    (tmp_path / ".ci").mkdir()
    for script in (repo_root / ".ci").iterdir():  # .ci/run and the steps it sources
        (tmp_path / ".ci" / script.name).write_text(script.read_text())
    (tmp_path / "pyproject.toml").write_text("[project\nthis is not TOML\n")
    # no apt-get from a test; a disk too small for the xla and litert environments, so that no
    # install of theirs starts beside the suite's (each a venv of its own, left running when CI stops)
    write_executable(tmp_path / "fakes" / "df", FAKE_DF)
    environment = {
        **os.environ,
        "PORTABILITY_CI_NO_BROWSER": "1",
        "PATH": f"{tmp_path / 'fakes'}{os.pathsep}{os.environ['PATH']}",
        "FAKE_FREE_GB": "0",
    }
    done = subprocess.run(
        ["bash", ".ci/run"], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        env=environment,
    )  # fmt: skip
    assert done.returncode != 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "CI wall time" not in done.stdout
    # it stopped at the install (pip's reading of the broken pyproject.toml), not at a step before it
    assert "Expected ']' at the end of a table declaration (at line 1, column 9)" in done.stderr
