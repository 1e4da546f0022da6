"""Every stage that reads case files meets a malformed one with a message that names the file, the
place and the fix (as `portability case check` does), exit status 2, no traceback, and no output
written: `sample`, `cases`, the run stage (`run-stage`), the census stage (`run-stage --suite
census`) and `support-matrix` (the census manifests of torch), each through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from portability_data.cli import main
from tests.conftest import REPO_ROOT, CaseRepo, example_rows

BROKEN_ROW = "cases/torch/broken.yaml"
BROKEN_MANIFEST = "cases/torch/census/opinfo.yaml"


@pytest.fixture
def repo(case_repo: CaseRepo, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout with one good case, the real params.yaml (no earlier harness: no runs here) and
    the inputs the stages read, the working folder of the test."""
    case_repo.add("torch", "argsort", "def test_a():\n    pass\n", function="torch.argsort")
    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())
    for section in ("run", "census"):
        params[section].pop("earlier_harness", None)
    (case_repo.root / "params.yaml").write_text(yaml.safe_dump(params))
    from portability_data.tables.tableio import write_table

    rows = example_rows()
    for table, path in (
        ("frequencies", "data/frequencies/frequencies.parquet"),
        ("samples", "data/samples/mince2023.parquet"),
        ("api", "data/api/api.parquet"),
        ("declared", "data/declared/declared.parquet"),
        ("results", "data/results/portability/torch-cpu-eager-1.parquet"),
        ("runs", "data/runs/portability/torch-cpu-eager-1.parquet"),
    ):
        write_table(table, pd.DataFrame(rows[table]), case_repo.root / path)
    monkeypatch.chdir(case_repo.root)
    return case_repo.root


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command; it must exit 2 with one message (what main prints for bad input)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err, err
    return err


def _broken_row(repo: Path) -> None:
    (repo / BROKEN_ROW).write_text("schema_version: 1\ncase_id: torch.broken\nnotes: a: b\n")


def _says_the_row_is_broken(err: str) -> None:
    assert f"{BROKEN_ROW}: not valid YAML (mapping values are not allowed" in err, err
    assert "at line 3, column 9); fix: write the row as a YAML mapping" in err, err
    assert "<unicode string>" not in err


def test_sample_checks_the_case_rows_before_anything(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _broken_row(repo)
    out = repo / "data/samples/fresh.parquet"
    err = _refused(
        [
            "sample",
            "--frequencies",
            "data/frequencies/frequencies.parquet",
            "--reference-samples",
            "data/samples/mince2023.parquet",
            "--cases-dir",
            "cases",
            "--out",
            str(out),
        ],
        capsys,
    )
    _says_the_row_is_broken(err)
    assert not out.exists()


def test_a_row_of_the_wrong_shape_is_named_too(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Valid YAML, wrong shape (the sample stage read `samples` as a list and met an integer)."""
    text = (repo / "cases/torch/argsort.yaml").read_text().replace("samples: []", "samples: 3")
    (repo / "cases/torch/argsort.yaml").write_text(text)
    err = _refused(["sample", "--cases-dir", "cases", "--out", "fresh.parquet"], capsys)
    assert "cases/torch/argsort.yaml: field 'samples': must be a list of sample ids, got 3; fix:" in err


def test_cases_stage(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _broken_row(repo)
    out = repo / "data/cases/cases.parquet"
    err = _refused(
        ["cases", "--api", "data/api/api.parquet", "--samples", "data/samples", "--out", str(out)], capsys
    )
    _says_the_row_is_broken(err)
    assert not out.exists()


def test_run_stage_checks_every_row_before_it_measures(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The broken row is jax's, the last framework: torch's good case is not run before the stage
    stops (nothing measured, no shard, no manifest)."""
    (repo / "cases/jax").mkdir()
    (repo / "cases/jax/broken.yaml").write_text("schema_version: 1\ncase_id: jax.broken\nnotes: a: b\n")
    err = _refused(["run-stage", "--out", "data/run_manifest.json"], capsys)
    assert "cases/jax/broken.yaml: not valid YAML (mapping values are not allowed" in err, err
    assert not (repo / "data/run_manifest.json").exists()
    assert sorted(p.name for p in (repo / "data/results").rglob("*.parquet")) == ["torch-cpu-eager-1.parquet"]


def _broken_manifest(repo: Path) -> None:
    folder = repo / BROKEN_MANIFEST
    folder.parent.mkdir(parents=True)
    folder.write_text("manifest_version: 1\norigin: opinfo\nentries: [unclosed\n")


@pytest.mark.parametrize(
    "argv",
    [
        ["run-stage", "--suite", "census", "--out", "data/census/census_manifest.json"],
        ["run-stage", "--out", "data/run_manifest.json"],
        ["support-matrix", "--out", "data/census/support_matrix.parquet"],
    ],
    ids=["census", "run", "support_matrix"],
)
def test_a_malformed_census_manifest_is_named(
    repo: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    _broken_manifest(repo)
    err = _refused(argv, capsys)
    assert f"{BROKEN_MANIFEST}: cannot read the census manifest (" in err, err
    assert "re-run `portability census-harvest`" in err
    assert not (repo / argv[-1]).exists()
