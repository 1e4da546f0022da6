"""The CI step for PyTorch on the litert path (.ci/litert.sh, issue 57): litert-torch's environment
installs, and its case runs, beside the suite (niced, so the suite keeps the CPU) where the disk holds
it beside the others, after the suite otherwise or where it ran out of disk beside them; an install
or a case that fails fails CI loudly, with the log. `df`, `python3` and the environments' pip and
python are fakes here (tests/test_ci_xla.py's); the real step runs in CI (.ci/run)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.test_ci_xla import FAKE_DF, FAKE_PYTHON3, XLA_CASE, write_executable

CASE = "-m pytest -q -p no:typeguard tests/test_edge_paths.py -k torch-litert"
# The fake `python3 -m venv` of a whole .ci/run also gives the environment CI's code checkers.
FAKE_PYTHON3_WITH_CHECKERS = FAKE_PYTHON3 + (
    'for tool in ruff mypy; do printf \'#!/usr/bin/env bash\\necho "%s $*"\\n\' "$tool" > "$3/bin/$tool"\n'
    '  chmod +x "$3/bin/$tool"; done\n'
)


def fake_environment(tmp_path: Path, free_gb: int, **fakes: str) -> dict[str, str]:
    write_executable(tmp_path / "fakes" / "df", FAKE_DF)
    write_executable(tmp_path / "fakes" / "python3", FAKE_PYTHON3_WITH_CHECKERS)
    return {
        "PATH": f"{tmp_path / 'fakes'}:{os.environ['PATH']}",
        "FAKE_FREE_GB": str(free_gb),
        "FAKE_PIP": "ok",
        **fakes,
    }


# Between the two halves, the suite: it lasts until the litert job beside it (if any) has ended.
SUITE = """echo "litert beside the suite: ${litert_install:-no}"
if [ -n "$litert_install" ]; then
  while kill -0 "$litert_install" 2>/dev/null; do sleep 0.05; done
fi
echo "the suite ends; the litert case ran during it: $([ -s .ci-litert-case.log ] && echo yes || echo no)"
"""


def ci_litert_step(
    repo_root: Path, tmp_path: Path, free_gb: int, **fakes: str
) -> subprocess.CompletedProcess[str]:
    """Source .ci/xla.sh and .ci/litert.sh in a scratch checkout and run them around a suite as .ci/run
    does."""
    steps = repo_root / ".ci"
    script = (
        f"set -euo pipefail\nsource {steps / 'xla.sh'}\nsource {steps / 'litert.sh'}\n"
        f"xla_start\nlitert_start\n{SUITE}xla_finish\nlitert_finish\necho finished\n"
    )
    return subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env=fake_environment(tmp_path, free_gb, **fakes),
        capture_output=True,
        text=True,
        timeout=60,
    )


def litert_pip_calls(tmp_path: Path) -> int:
    return (tmp_path / "pip-calls.log").read_text().count(".[litert-torch]")


def test_with_room_for_all_three_it_installs_and_runs_the_case_beside_the_suite_niced(
    repo_root: Path, tmp_path: Path
) -> None:
    done = ci_litert_step(repo_root, tmp_path, free_gb=40)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "litert beside the suite: no" not in done.stdout
    assert "the litert case ran during it: yes" in done.stdout
    assert litert_pip_calls(tmp_path) == 1
    assert re.search(r"the litert-torch environment: installed in \d+ s beside the suite", done.stdout)
    # its output comes after the suite's (and the xla step's), from the case's log
    case = f".ci-venv-litert python (niceness 10): PORTABILITY_REQUIRE_LITERT_TORCH=1 {CASE}"
    assert case in done.stdout
    assert done.stdout.index("tests/test_xla_device.py") < done.stdout.index(case)
    assert done.stdout.rstrip().endswith("finished")


@pytest.mark.parametrize("free_gb", [19, 12])
def test_without_room_for_all_three_it_installs_after_the_suite(
    repo_root: Path, tmp_path: Path, free_gb: int
) -> None:
    """19 GB: xla beside the suite, litert after; 12 GB: both after (xla's choice is what it was)."""
    done = ci_litert_step(repo_root, tmp_path, free_gb=free_gb)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "litert beside the suite: no" in done.stdout
    assert "the litert case ran during it: no" in done.stdout
    assert re.search(r"the litert-torch environment: installed in \d+ s after the suite", done.stdout)
    assert f".ci-venv-litert python (niceness 0): PORTABILITY_REQUIRE_LITERT_TORCH=1 {CASE}" in done.stdout
    assert (
        f"PORTABILITY_REQUIRE_XLA=1 PORTABILITY_XLA_PYTHON={tmp_path}/.ci-venv-xla/bin/python" in done.stdout
    )
    assert done.stdout.rstrip().endswith("finished")


def test_out_of_disk_beside_the_suite_it_installs_again_after_it(repo_root: Path, tmp_path: Path) -> None:
    done = ci_litert_step(repo_root, tmp_path, free_gb=40, FAKE_PIP_LITERT="nospace-once")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the litert case ran during it: no" in done.stdout
    assert "ran out of disk beside the suite: installing it again alone" in done.stdout
    assert re.search(r"installed in \d+ s after the suite", done.stdout)
    assert f"(niceness 0): PORTABILITY_REQUIRE_LITERT_TORCH=1 {CASE}" in done.stdout
    assert litert_pip_calls(tmp_path) == 2


@pytest.mark.parametrize(
    "free_gb, pip, said",
    [
        (40, "broken", "No matching distribution found"),
        (12, "broken", "No matching distribution found"),
        (40, "nospace", "No space left on device"),  # beside, then alone: out of disk both times
        (12, "nospace", "No space left on device"),
    ],
)
def test_an_install_that_fails_fails_ci_with_its_log(
    repo_root: Path, tmp_path: Path, free_gb: int, pip: str, said: str
) -> None:
    done = ci_litert_step(repo_root, tmp_path, free_gb=free_gb, FAKE_PIP_LITERT=pip)
    assert done.returncode == 1
    assert "CI: the litert-torch environment did not install (.ci-venv-litert.log):" in done.stdout
    assert said in done.stdout.split("did not install")[1]
    assert ".ci-venv-litert python" not in done.stdout
    assert "finished" not in done.stdout


@pytest.mark.parametrize("free_gb", [40, 12])
def test_a_failing_case_fails_ci_with_its_output(repo_root: Path, tmp_path: Path, free_gb: int) -> None:
    done = ci_litert_step(repo_root, tmp_path, free_gb=free_gb, FAKE_CASE="3")
    assert done.returncode == 3
    said = done.stdout
    assert f"PORTABILITY_REQUIRE_LITERT_TORCH=1 {CASE}" in said
    assert said.index(CASE) < said.index("CI: PyTorch's litert case failed (above)")
    assert "finished" not in said


def test_ci_runs_every_step_in_order_with_the_litert_environment_beside_the_suite(
    repo_root: Path, tmp_path: Path
) -> None:
    """The whole of .ci/run on fakes: the suite, the code checks, the xla step and the litert step all
    run, in that order, and the litert environment installed beside the suite."""
    shutil.copytree(repo_root / ".ci", tmp_path / ".ci")
    env = {**fake_environment(tmp_path, 40), "PORTABILITY_CI_NO_BROWSER": "1"}
    done = subprocess.run(
        ["bash", ".ci/run"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    steps = [
        ".venv python (niceness 0): PORTABILITY_REQUIRE_LITERT_TORCH= -m pytest -q -n auto --dist loadfile\n",
        "ruff check src tests benchmarks\n",
        "ruff format --check src tests benchmarks\n",
        "mypy \n",
        "the xla environment: installed in",
        f"{XLA_CASE}\n",
        "the litert-torch environment: installed in",
        f".ci-venv-litert python (niceness 10): PORTABILITY_REQUIRE_LITERT_TORCH=1 {CASE}\n",
        "CI wall time: ",
    ]
    where = [done.stdout.find(step) for step in steps]
    assert -1 not in where and where == sorted(where), done.stdout
    assert "beside the suite" in done.stdout
    calls = (tmp_path / "pip-calls.log").read_text()
    assert all(f"-e .[{extra}]" in calls for extra in ("all", "xla", "litert-torch")), calls
