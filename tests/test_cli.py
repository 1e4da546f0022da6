"""Every pipeline step is a `portability` subcommand with a real --help."""

from __future__ import annotations

import subprocess
import sys

import pytest

from portability_data.cli import main

COMMANDS = [
    ["enumerate"],
    ["declared"],
    ["frequencies"],
    ["sample"],
    ["cases"],
    ["case", "new"],
    ["case", "check"],
    ["run"],
    ["run-stage"],
    ["reference", "import"],
    ["aggregate"],
    ["report"],
    ["dataset", "build"],
    ["dataset", "card"],
    ["dataset", "publish"],
    ["schemas", "export"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's own main in this process (argparse prints the help and exits 0): a fresh interpreter
    per command cost ~0.5 s of imports, sixteen times; the entry point is test_unknown_device's."""
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    out = capsys.readouterr()
    assert exited.value.code == 0, out.err
    assert out.out.startswith("usage: portability " + " ".join(command))
    # a real description, not just the usage line
    assert len([line for line in out.out.splitlines() if line.strip()]) >= 3


def test_unknown_device_is_refused_before_anything_runs() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "portability_data.cli", "run", "--framework", "torch", "--device", "npu"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2 and "invalid choice: 'npu'" in out.stderr


def test_run_needs_a_framework_except_to_close_a_run(tmp_path) -> None:
    """--close RUN_ID: the run id names the framework; a new run must say whose cases it runs,
    and --close goes with neither --dry-run nor --resume (each refused with what to do)."""
    cli = [sys.executable, "-m", "portability_data.cli", "run"]
    bare = subprocess.run(
        [*cli, "--device", "cpu"], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert bare.returncode != 0 and "--framework is required" in bare.stderr
    both = [*cli, "--close", "torch-cpu-eager-20990101T000000Z-abcdef", "--dry-run"]
    mixed = subprocess.run(both, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert mixed.returncode != 0 and "not with --dry-run or --resume" in mixed.stderr


def test_run_does_not_import_the_pipeline_stack() -> None:
    code = (
        "import sys; from portability_data import cli; "
        "from portability_data.runner import supervisor, harness, worker, failures, case_rows, progress, "
        "spec, journal, worker_process, provenance; "
        "heavy = [m for m in ('pandas', 'pandera', 'dvc', 'datasets') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tables_written_by_the_cli_carry_the_dataset_version(repo_root, tmp_path) -> None:
    import pyarrow.parquet as pq
    import yaml

    out = tmp_path / "cases.parquet"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "portability_data.cli",
            "cases",
            "--no-collect",
            "--api",
            "none",
            "--samples",
            "none",
            "--out",
            str(out),
        ],
        cwd=repo_root,
        check=True,
        capture_output=True,
    )
    version = yaml.safe_load((repo_root / "params.yaml").read_text())["dataset"]["version"]
    assert pq.read_schema(out).metadata[b"dataset_version"] == version.encode()
