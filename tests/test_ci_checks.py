"""CI's code checks (.ci/run, issue 56): `ruff check`, `ruff format --check` and mypy, with the dev
extra's pinned tools. The repository passes them now, and the lines .ci/run runs fail loudly and name
the file when a file breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests import beside
from tests.conftest import REPO_ROOT

SCRIPTS = Path(sys.executable).parent


def ci_lines(first: str, count: int) -> str:
    """`count` lines of .ci/run from the one starting with `first`, as a script (set -euo pipefail)."""
    lines = (REPO_ROOT / ".ci" / "run").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    return "set -euo pipefail\n" + "\n".join(lines[start : start + count]) + "\n"


def run_ci(script: str, root: Path) -> subprocess.CompletedProcess[str]:
    (root / ".venv").mkdir(exist_ok=True)
    if not (root / ".venv" / "bin").exists():
        (root / ".venv" / "bin").symlink_to(SCRIPTS, target_is_directory=True)
    env = {**os.environ, "PATH": f"{SCRIPTS}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-c", script], cwd=root, env=env, capture_output=True, text=True, check=False, timeout=600
    )


def test_the_repository_is_formatted_and_lint_clean() -> None:
    for check in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [str(SCRIPTS / "ruff"), *check, "src", "tests", "benchmarks"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, f"ruff {' '.join(check)}:\n{done.stdout}{done.stderr}"


def test_ci_fails_on_an_unformatted_file_and_names_it(tmp_path: Path) -> None:
    for folder in ("src", "tests", "benchmarks"):
        (tmp_path / folder).mkdir()
    shutil.copy(REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "src" / "tidy.py").write_text('"""Formatted."""\n\nX = {"a": 1}\n')
    script = ci_lines(".venv/bin/ruff check", 3)
    assert run_ci(script, tmp_path).returncode == 0
    (tmp_path / "src" / "untidy.py").write_text('"""Not formatted."""\n\nX = {"a":1,\n  "b" :2}\n')
    done = run_ci(script, tmp_path)
    assert done.returncode == 1
    said = done.stdout + done.stderr
    assert "File would be reformatted\n --> src/untidy.py" in said
    assert "tidy.py" not in said.replace("untidy.py", "")
    assert "CI: ruff format would change the files above" in done.stdout


def mypy_here_job(folder: Path) -> beside.Job:
    """mypy as CI runs it, on the repository with its own cache."""
    return beside.Job([[str(SCRIPTS / "mypy")]], cwd=REPO_ROOT)


def mypy_wrong_job(folder: Path) -> beside.Job:
    """CI's mypy line on a copy of tables/ with one wrong return type."""
    copy = folder / "repo"
    shutil.copytree(REPO_ROOT / "src" / "portability_data" / "tables", copy / "src/portability_data/tables")
    (copy / "src/portability_data/__init__.py").write_text("")
    for checked in ("runner", "readings"):  # the other folders [tool.mypy] files names, empty here
        (copy / "src/portability_data" / checked).mkdir()
        (copy / "src/portability_data" / checked / "__init__.py").write_text("")
    shutil.copy(REPO_ROOT / "pyproject.toml", copy / "pyproject.toml")
    (copy / "src/portability_data/tables/wrong.py").write_text(
        '"""A wrong return type."""\n\n\ndef count() -> int:\n    return "one"\n'
    )
    (copy / ".venv").mkdir()
    (copy / ".venv" / "bin").symlink_to(SCRIPTS, target_is_directory=True)
    return beside.Job([["bash", "-c", ci_lines(".venv/bin/mypy", 1)]], cwd=copy)


# Two mypy runs (~10 s) beside the suite.
MYPY_TEST = "test_mypy_passes_and_fails_loudly_on_a_type_error"
BESIDE = {"mypy-here": (mypy_here_job, [MYPY_TEST]), "mypy-wrong": (mypy_wrong_job, [MYPY_TEST])}


def test_mypy_passes_and_fails_loudly_on_a_type_error(tmp_path: Path) -> None:
    """mypy as CI runs it (pyproject's [tool.mypy]) passes on the repository; the same settings on a
    copy of tables/ with one wrong return type fail and name the file and line. On the repository
    with its own cache (.mypy_cache, as `mypy` there keeps it, like ruff's): CI's mypy step after the
    suite then reads it instead of checking cold again (~10 s); mypy re-checks what changed. Both
    run beside the suite (tests/beside.py)."""
    here = beside.finished("mypy-here", mypy_here_job, tmp_path / "here")
    assert here.returncode == 0 and "Success: no issues found" in here.stdout, here.stdout + here.stderr
    failed = beside.finished("mypy-wrong", mypy_wrong_job, tmp_path / "wrong")
    assert failed.returncode == 1
    assert 'src/portability_data/tables/wrong.py:5: error: Incompatible return value type (got "str"' in (
        failed.stdout
    )
    assert "CI: mypy found the type errors above" in failed.stdout
