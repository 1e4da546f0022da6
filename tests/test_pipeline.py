"""The real DVC pipeline on a copy of the repository: a second `dvc repro` is a no-op, and a shard
copied in from another machine re-runs aggregation and makes what depends on it stale, but not the
benchmark."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests import beside
from tests.conftest import REPO_ROOT, copy_repository, example_rows, stale_stages
from tests.conftest import sh as _sh

pytestmark = pytest.mark.skipif(not (REPO_ROOT / "dvc.lock").exists(), reason="dvc.lock not committed yet")


@pytest.fixture(scope="module")
def repo_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's committed files (working-tree versions) in a fresh git repository."""
    return copy_repository(tmp_path_factory.mktemp("clone") / "repo")


def test_analytics_off(repo_copy: Path) -> None:
    assert "analytics = false" in (repo_copy / ".dvc" / "config").read_text()


def test_second_repro_is_a_no_op(repo_copy: Path) -> None:
    status = _sh(["dvc", "status"], repo_copy)
    assert "Data and pipelines are up to date" in status, status
    out = _sh(["dvc", "repro"], repo_copy)
    assert "Running stage" not in out, out


def another_machine_job(folder: Path) -> beside.Job:
    """A copy of the repository with a shard and runs row from another machine added, and there
    `dvc status`, the aggregate stage twice and `dvc status` again, each one's output in a file."""
    from portability_data.tables.tableio import write_table

    repo = copy_repository(folder / "repo")
    rows = example_rows()["results"]
    rows = [
        {
            **r,
            "run_id": "torch-gpu-eager-other-machine",
            "source": "contributed",
            "device": "gpu",
            "device_model": "NVIDIA H100",
        }
        for r in rows
    ]
    write_table(
        "results",
        pd.DataFrame(rows),
        repo / "data/results/contributed/torch-gpu-eager-other-machine.parquet",
    )
    run = {
        **example_rows()["runs"][0],
        "run_id": "torch-gpu-eager-other-machine",
        "source": "contributed",
        "device": "gpu",
        "device_model": "NVIDIA H100",
    }
    write_table(
        "runs", pd.DataFrame([run]), repo / "data/runs/contributed/torch-gpu-eager-other-machine.parquet"
    )
    # as conftest's `command` runs DVC: the venv's scripts first on the PATH (the stages call them)
    scripts = f"PATH={Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    dvc = ["env", scripts, "DVC_NO_ANALYTICS=1", sys.executable, "-m", "dvc"]
    return beside.Job(
        [
            ["sh", "-c", f"{shlex.join([*dvc, *args])} > {shlex.quote(str(folder / name))}.out 2>&1"]
            for name, args in ANOTHER_MACHINE_STEPS.items()
        ],
        cwd=repo,
    )


ANOTHER_MACHINE_STEPS = {
    "status": ["status"],
    "repro": ["repro", "aggregate"],
    "again": ["repro", "aggregate"],
    "stale": ["status"],
}


def test_a_stage_whose_code_changed_without_repro_is_named_stale(tmp_path: Path) -> None:
    """The check every copy of the checkout passes first (conftest's `_check_lock_is_current`): a
    dependency edited after `dvc repro` (a commit without the repro) names its stage, a repro clears it."""
    _sh(["git", "init", "-q"], tmp_path)
    _sh(["dvc", "init", "-q"], tmp_path)
    (tmp_path / "step.py").write_text("print(1)\n")
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  step:\n    cmd: python step.py > out.txt\n    deps: [step.py]\n    outs: [out.txt]\n"
    )
    _sh(["dvc", "repro", "-q"], tmp_path)
    assert stale_stages(tmp_path) == []
    (tmp_path / "step.py").write_text("print(2)\n")
    assert stale_stages(tmp_path) == ["step"]
    _sh(["dvc", "repro", "-q"], tmp_path)
    assert stale_stages(tmp_path) == []


def test_a_shard_from_another_machine_is_aggregated_without_rerunning(tmp_path: Path) -> None:
    from portability_data.tables.tableio import read_table

    done = beside.finished("another-machine", another_machine_job, tmp_path)
    said = {
        n: (done.folder / f"{n}.out").read_text()
        for n in ANOTHER_MACHINE_STEPS
        if (done.folder / f"{n}.out").exists()
    }
    assert done.returncode == 0, f"a DVC command failed: {said}"
    status = said["status"]
    assert "aggregate:" in status and "run:" not in status, status
    # the aggregate stage and whatever upstream of it is stale; the report and the other stages
    # downstream are left stale (checked below) rather than rebuilt: they cost minutes in CI and
    # test_second_repro_is_a_no_op and the report's own tests cover them
    out = said["repro"]
    assert "Running stage 'aggregate'" in out
    assert "Running stage 'run'" not in out and "Running stage 'enumerate'" not in out
    outcomes = read_table("outcomes", done.folder / "repo" / "data/outcomes")
    added = outcomes[outcomes["source"] == "contributed"]
    assert added[["function", "device", "outcome"]].values.tolist() == [
        ["torch.argsort", "gpu", "partial_failure"]
    ]
    assert "Running stage" not in said["again"]
    stale = said["stale"]
    assert "report:" in stale and "reproduce:" in stale and "aggregate:" not in stale, stale


DERIVED = ("outcomes", "latencies", "pooled")


def aggregation_job(folder: Path) -> beside.Job:
    """The committed files in a fresh repository (a copy) and `portability aggregate` run there,
    writing the derived tables beside it."""
    repo = copy_repository(folder / "repo")
    outs = [arg for name in DERIVED for arg in (f"--{name}", str(folder / f"{name}.parquet"))]
    return beside.Job([[sys.executable, "-m", "portability_data.cli", "aggregate", *outs]], cwd=repo)


# The aggregate stage's runs (~20 s each: DVC's with another machine's shard, and the aggregation of
# every committed shard) run beside the suite.
BESIDE = {
    "another-machine": (
        another_machine_job,
        ["test_a_shard_from_another_machine_is_aggregated_without_rerunning"],
    ),
    "committed-aggregation": (
        aggregation_job,
        ["test_the_committed_outcomes_are_what_aggregation_makes_of_the_committed_shards"],
    ),
}


def test_the_committed_outcomes_are_what_aggregation_makes_of_the_committed_shards(tmp_path: Path) -> None:
    """The derived tables are never taken on trust: a pull request that adds a hardware run commits
    its shards and what `dvc repro` made of them (CONTRIBUTING, issue 22), and CI derives the
    outcomes, latencies and pooled rows again from every committed shard and compares them with the committed
    ones, so an outcome edited by hand (with a dvc.lock to match) cannot pass as measured. Both
    sides are the committed files (a copy): this machine's untracked shards are in neither."""
    from portability_data.tables.tableio import read_table

    done = beside.finished("committed-aggregation", aggregation_job, tmp_path)
    assert done.returncode == 0, f"aggregate failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    repo = done.folder / "repo"
    for name in DERIVED:
        committed = read_table(name, repo / "data" / name)
        again = read_table(name, done.folder / f"{name}.parquet")
        assert len(again) == len(committed), (
            f"data/{name}: {len(committed)} rows committed, {len(again)} derived"
        )
        pd.testing.assert_frame_equal(
            again.reset_index(drop=True), committed.reset_index(drop=True), obj=f"data/{name} derived again"
        )


def test_a_census_entry_measured_off_the_cpu_has_every_dtype_the_cpu_measured() -> None:
    """A census run closed partial keeps the pairs it finished and loses the one in flight, so an
    entry can stand on a device with a dtype missing (nn.TransformerDecoderLayer float64 on xla, lost
    with run b78622), and a re-measure planned by entry skips it: the committed support matrix must
    hold, for every entry a device measured, each dtype the CPU measured in that mode."""
    from portability_data.tables.tableio import read_table

    matrix = read_table("support_matrix", REPO_ROOT / "data" / "census" / "support_matrix.parquet")
    pair = ["origin", "entry", "dtype"]
    on_cpu = matrix[matrix["device"] == "cpu"]
    for (framework, device, mode), measured in matrix[matrix["device"] != "cpu"].groupby(
        ["framework", "device", "mode"]
    ):
        cpu = on_cpu[(on_cpu["framework"] == framework) & (on_cpu["mode"] == mode)]
        cpu = cpu[cpu["entry"].isin(set(measured["entry"]))]
        missing = set(map(tuple, cpu[pair].values)) - set(map(tuple, measured[pair].values))
        assert not missing, (
            f"{framework} {mode} on {device}: pairs measured on the CPU but not on {device}: "
            f"{sorted(missing)[:10]}; measure them: portability run --framework {framework} --device "
            f"{device} --mode {mode} --suite census --repeats 1 --cases <their case ids>"
        )
