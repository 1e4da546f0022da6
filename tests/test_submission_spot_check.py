"""The re-run spot check (issue 55): a real cpu run of two jax cases is made in a throwaway
repository and spot-checked with `portability submission spot-check`, re-run for real by the
runner; tampered copies of it (an outcome flipped, another framework version, another device) are
checked with the first re-run's rows standing in for the runner (the same cases, the same machine)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from portability_data.cli import main
from portability_data.dataset.submission import spot_check as spot
from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run
from portability_data.tables import contracts
from tests.conftest import CaseRepo
from tests.test_submission import git

CASE = """
import jax.numpy as jnp
import numpy as np
import pytest

@pytest.mark.parametrize("n", [1, 2, 3])
def test_{name}(device, timed, n):
    out = timed(jnp.{name}, jnp.zeros((n,)))
    np.testing.assert_allclose(np.asarray(out), np.full(n, {value}))
"""
SAMPLE = 4
Rows = list[dict[str, Any]]


class Made:
    """The throwaway repository, its run's runs row and shard, and the spot check's re-run rows."""

    def __init__(self, root: Path, run_id: str) -> None:
        self.root, self.run_id = root, run_id
        self.runs = root / "data" / "runs" / "local" / f"{run_id}.parquet"
        self.shard = root / "data" / "results" / "local" / f"{run_id}.parquet"
        self.rerun_rows: Rows = []

    def rerun(self, run_row: dict[str, Any], case_ids: list[str], repo_root: Path) -> Rows:
        """Stands in for the runner with the first real re-run's rows (asserted on there)."""
        assert self.rerun_rows, "the real spot check runs first"
        return [r for r in self.rerun_rows if r["case_id"] in case_ids]


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(["submission", "spot-check", *args])
    except SystemExit as exited:  # an error's message is the exit's (Python prints it to stderr)
        code = exited.code if isinstance(exited.code, int) else 1
        if isinstance(exited.code, str):
            print(exited.code, file=sys.stderr)
    out = capsys.readouterr()
    return int(code or 0), out.out, out.err


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    """Two jax cases of 3 subtests each, committed; one real cpu run of them (2 repeats: 12 rows)."""
    root = tmp_path_factory.mktemp("spot") / "repo"
    cases = CaseRepo(root)
    cases.add("jax", "numpy_cos", CASE.format(name="cos", value=1.0), function="jax.numpy.cos")
    cases.add("jax", "numpy_sin", CASE.format(name="sin", value=0.0), function="jax.numpy.sin")
    git(root, "init", "-q")
    git(root, "add", "cases")
    git(root, "commit", "-q", "-m", "cases")
    spec = RunSpec(framework="jax", device="cpu", repeats=2, timeout_s=120, memory_mb=4096, source="local")
    return Made(root, run(spec, Paths.under(root), log=lambda message: None))


def _copy(made: Made, tmp_path: Path, rows: Rows | None = None, **run_fields: Any) -> Path:
    """A submission-like copy of the run (runs/local/, results/local/), its rows and runs row edited."""
    runs, shard = (
        tmp_path / "runs" / "local" / made.runs.name,
        tmp_path / "results" / "local" / made.shard.name,
    )
    runs.parent.mkdir(parents=True)
    shard.parent.mkdir(parents=True)
    run_rows = [{**r, **run_fields} for r in pq.read_table(made.runs).to_pylist()]
    pq.write_table(pa.Table.from_pylist(run_rows, schema=contracts.RUNS), runs)
    if rows is None:
        shutil.copyfile(made.shard, shard)
    else:
        pq.write_table(pa.Table.from_pylist(rows, schema=contracts.RESULTS), shard)
    return runs


def _sampled(made: Made) -> tuple[Rows, list[str]]:
    rows = pq.read_table(made.shard).to_pylist()
    return rows, spot.sample_subtests(rows, made.run_id, SAMPLE, 0)


def test_a_real_rerun_agrees(
    made: Made, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run is re-run for real (into a scratch folder, not data/) and every sampled subtest agrees."""
    real = spot.rerun_cases

    def keep(run_row: dict[str, Any], case_ids: list[str], repo_root: Path) -> Rows:
        made.rerun_rows = real(run_row, case_ids, repo_root)
        return made.rerun_rows

    monkeypatch.setattr(spot, "rerun_cases", keep)
    before = sorted(p.relative_to(made.root) for p in (made.root / "data").rglob("*"))
    code, out, err = _cli([str(made.runs), "--sample", str(SAMPLE), "--root", str(made.root)], capsys)
    print(out, err)
    assert code == 0, err
    assert f"{made.run_id}: {SAMPLE} of {SAMPLE} sampled subtest(s) re-run on cpu" in out
    assert f"{SAMPLE} agree, 0 disagree" in out
    assert "WARNING" not in err
    assert sorted(p.relative_to(made.root) for p in (made.root / "data").rglob("*")) == before
    _, chosen = _sampled(made)
    assert {r["test_id"] for r in made.rerun_rows} >= set(chosen)  # really re-run, every sampled one
    assert {r["outcome"] for r in made.rerun_rows} == {"passed"}


def test_the_sample_is_seeded_by_seed_and_run_id(made: Made) -> None:
    rows, chosen = _sampled(made)
    assert len(chosen) == SAMPLE
    assert spot.sample_subtests(rows, made.run_id, SAMPLE, 0) == chosen
    others = {tuple(spot.sample_subtests(rows, made.run_id, SAMPLE, seed)) for seed in range(1, 20)}
    assert len(others | {tuple(chosen)}) > 1  # another seed, another sample
    assert spot.sample_subtests(rows, made.run_id, 100, 0) == sorted({r["test_id"] for r in rows})


def _flip(rows: Rows, test_ids: set[str], repeat: int | None = None) -> Rows:
    flipped = "float_precision"
    return [
        {**r, "outcome": "failed", "failure_category": flipped, "error_type": "AssertionError"}
        if r["test_id"] in test_ids and (repeat is None or r["repeat"] == repeat)
        else r
        for r in rows
    ]


def test_a_flipped_outcome_is_a_warning_naming_the_subtest(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, chosen = _sampled(made)
    target = chosen[1]
    case_id, subtest = next((r["case_id"], r["subtest"]) for r in rows if r["test_id"] == target)
    runs = _copy(made, tmp_path, _flip(rows, {target}, repeat=1))
    monkeypatch.setattr(spot, "rerun_cases", made.rerun)
    code, out, err = _cli([str(runs), "--sample", str(SAMPLE), "--root", str(made.root)], capsys)
    print(out, err)
    assert code == 0, err  # one of four: evidence for the reviewer, not a refusal
    warnings = [line for line in err.splitlines() if line.startswith("WARNING")]
    assert warnings == [
        f"WARNING: {made.run_id}: case {case_id} subtest {subtest} repeat 1: "
        "submitted failed (float_precision), "
        "re-run here passed [spot-check]; a reviewer compares the run's machine and this one"
    ]
    assert f"{SAMPLE - 1} agree, 1 disagree" in out


def test_most_of_the_sample_disagreeing_is_refused(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, chosen = _sampled(made)
    runs = _copy(made, tmp_path, _flip(rows, set(chosen[:3])))
    monkeypatch.setattr(spot, "rerun_cases", made.rerun)
    code, out, err = _cli([str(runs), "--sample", str(SAMPLE), "--root", str(made.root)], capsys)
    print(out, err)
    assert code == 1
    assert (
        len([line for line in err.splitlines() if line.startswith("WARNING")]) == 6
    )  # 3 subtests x 2 repeats
    assert (
        f"{runs}: run {made.run_id}: 3 of {SAMPLE} re-run subtests disagree with the shard [spot-check]"
        in err
    )
    assert "FAILED: 1 run(s)" in err


def _never(*args: Any) -> Rows:
    raise AssertionError("a skipped run must not be re-run")


def test_another_framework_version_is_skipped(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows, chosen = _sampled(made)
    runs = _copy(made, tmp_path, _flip(rows, set(chosen)), framework_version="0.0.1")
    monkeypatch.setattr(spot, "rerun_cases", _never)
    code, out, err = _cli([str(runs), "--root", str(made.root)], capsys)
    assert code == 0, err
    assert (
        f"{made.run_id}: skipped, jax 0.0.1 was run and {spot.installed_version('jax')} is installed here"
        in out
    )


@pytest.mark.parametrize("device", ["gpu", "tpu"])
def test_a_run_on_another_device_is_skipped(
    made: Made,
    device: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = _copy(made, tmp_path, device=device)
    monkeypatch.setattr(spot, "rerun_cases", _never)
    code, out, err = _cli([str(tmp_path), "--root", str(made.root)], capsys)  # a submission folder
    assert code == 0, err
    assert out.strip() == f"{made.run_id}: skipped, device {device}: CI cannot re-run it (CI has cpu)"
    assert runs.is_file()


def test_a_runs_row_without_its_shard_is_an_error(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = _copy(made, tmp_path)
    (tmp_path / "results" / "local" / made.shard.name).unlink()
    code, _, err = _cli([str(runs), "--root", str(made.root)], capsys)
    assert code == 1
    assert f"{runs}: run {made.run_id} has no shard" in err


def test_a_sample_the_runner_cannot_rerun_is_a_warning(
    made: Made, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkout without the run's cases (renamed or retired since): the real runner refuses, and
    the spot check says so instead of passing silently or crashing."""
    elsewhere = tmp_path / "elsewhere"
    CaseRepo(elsewhere)
    code, out, err = _cli([str(made.runs), "--root", str(elsewhere)], capsys)
    assert code == 0, err
    assert f"{made.run_id}: not compared, the runner refused the re-run" in out
    assert f"WARNING: {made.run_id}: the sample could not be re-run here [spot-check]: " in err
    assert "unknown or inactive case(s) for jax" in err
