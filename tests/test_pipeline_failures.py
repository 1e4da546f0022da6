"""A failing `dvc repro` deletes and rewrites nothing committed (issue 59). DVC removes a stage's
outputs before it runs the command unless they are `persist: true`, and our tables are committed
with git (cache: false), so a stage failing on bad input used to leave a committed table deleted
(data/census/support_matrix.parquet for a truncated shard, data/samples/fresh.parquet for a
malformed case row). On a copy of the repository with real DVC: each kind of bad input makes `dvc
repro` fail with one message that names the file, and every tracked file is byte for byte as it was.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT, command, copy_repository, sh

pytestmark = pytest.mark.skipif(not (REPO_ROOT / "dvc.lock").exists(), reason="dvc.lock not committed yet")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_repository(tmp_path_factory.mktemp("clone") / "repo")


def _tracked(root: Path) -> dict[str, str]:
    """sha256 of every file git tracks (a deleted one is missing from the map)."""
    names = sh(["git", "ls-files", "-z"], root).split("\0")
    return {
        name: hashlib.sha256((root / name).read_bytes()).hexdigest()
        for name in filter(None, names)
        if (root / name).is_file()
    }


def _repro_fails(root: Path) -> str:
    """`dvc repro` must fail; its output, stdout and stderr together."""
    done = command(["dvc", "repro"], root)
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    return out


def test_every_output_persists() -> None:
    """The dvc.yaml side of it: an output without `persist: true` is deleted by `dvc repro` before
    its stage runs, and stays deleted when the stage fails."""
    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())["stages"]
    flags = {
        (stage, path): options
        for stage, spec in stages.items()
        for key in ("outs", "metrics")
        for out in spec.get(key, [])
        for path, options in out.items()
    }
    # every stage's outputs and metrics (explorer's reports/explorer since issue 54, aggregate's pooled
    # table and reproduce's Table 8 functions since issue 56)
    assert len(flags) == 23
    assert ("explorer", "reports/explorer") in flags and ("aggregate", "data/pooled/pooled.parquet") in flags
    assert [name for name, options in flags.items() if options.get("persist") is not True] == []


def test_a_truncated_shard_fails_the_stage_and_deletes_nothing(clone: Path) -> None:
    before = _tracked(clone)
    committed = sorted((clone / "data/results/portability").glob("*.parquet"))[0].read_bytes()
    shard = clone / "data/results/local/torch-cpu-eager-truncated.parquet"
    shard.parent.mkdir(parents=True)
    shard.write_bytes(committed[: len(committed) // 2])
    try:
        out = _repro_fails(clone)
        named = "data/results/local/torch-cpu-eager-truncated.parquet: table 'results' breaks its contract"
        assert named in out
        assert "not a readable Parquet file" in out and "fix: restore the file from git" in out
        assert _tracked(clone) == before
        assert sh(["git", "status", "--porcelain"], clone).splitlines() == ["?? data/results/local/"]
    finally:
        shard.unlink()


def test_a_malformed_case_row_fails_the_stage_and_deletes_nothing(clone: Path) -> None:
    before = _tracked(clone)
    row = clone / "cases/torch/broken.yaml"
    row.write_text("schema_version: 1\ncase_id: torch.broken\nnotes: a: b\n")
    try:
        out = _repro_fails(clone)
        assert "Running stage 'sample'" in out
        assert "cases/torch/broken.yaml: not valid YAML (mapping values are not allowed" in out
        assert "at line 3, column 9); fix: " in out
        assert _tracked(clone) == before
        assert sh(["git", "status", "--porcelain"], clone).splitlines() == ["?? cases/torch/broken.yaml"]
    finally:
        row.unlink()
