"""The CI step for the xla device (.ci/xla.sh) on machines with more or less free disk.

CI machines differ in free disk, and one ran out with the xla environment (~7.4 GB) installing
beside the suite's: the step installs beside the suite, after it, or says loudly that it did not run,
and fails when the install fails for any other reason; beside the suite, the xla test runs niced
there too as soon as the environment is installed. `df` and `python3` are fakes here; the real step
runs in CI (.ci/run) and its test is tests/test_xla_device.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

FAKE_DF = """#!/usr/bin/env bash
echo "Filesystem 1024-blocks Used Available Capacity Mounted on"
echo "/dev/fake 999999999 1 $((FAKE_FREE_GB * 1048576)) 1% /"
"""
FAKE_PYTHON3 = """#!/usr/bin/env bash
# `python3 -m venv DIR`: a venv whose pip does what FAKE_PIP says (FAKE_PIP_LITERT for the litert-torch
# extra, where set; `nospace-once`: out of disk the first time only), and whose python says how it
# was called (the xla test's variables and CI's Chromium install, where set), at which niceness, and
# exits with FAKE_CASE (FAKE_XLA_CASE in the xla environment).
[ "$1 $2" = "-m venv" ] || exit 2
mkdir -p "$3/bin"
cat > "$3/bin/pip" <<'PIP'
#!/usr/bin/env bash
echo "pip $*" >> pip-calls.log
mode=$FAKE_PIP
case "$*" in *litert-torch*) mode=${FAKE_PIP_LITERT:-$FAKE_PIP} ;; esac
if [ "$mode" = nospace-once ]; then
  if [ -e pip-ran-out ]; then mode=ok; else touch pip-ran-out; mode=nospace; fi
fi
case "$mode" in
  ok) exit 0 ;;
  nospace) echo "ERROR: Could not install packages due to an OSError:" \
    "[Errno 28] No space left on device"; exit 1 ;;
  *) echo "ERROR: No matching distribution found for torch_xla==2.9.0"; exit 1 ;;
esac
PIP
cat > "$3/bin/python" <<'PY'
#!/usr/bin/env bash
xla=""
if [ -n "$PORTABILITY_REQUIRE_XLA" ]; then
  xla="PORTABILITY_REQUIRE_XLA=$PORTABILITY_REQUIRE_XLA PORTABILITY_XLA_PYTHON=$PORTABILITY_XLA_PYTHON "
fi
browser=""
if [ -n "$PORTABILITY_BROWSER_PENDING" ]; then
  apt=$(cat "$PORTABILITY_BROWSER_PENDING" 2>/dev/null || echo pending)
  browser="PORTABILITY_BROWSER_PENDING=$PORTABILITY_BROWSER_PENDING ($apt) "
fi
echo "$(basename "$(dirname "$(dirname "$0")")") python (niceness $(nice)):" \
  "${browser}${xla}PORTABILITY_REQUIRE_LITERT_TORCH=$PORTABILITY_REQUIRE_LITERT_TORCH $*"
case "$0" in *.ci-venv-xla/*) exit "${FAKE_XLA_CASE:-0}" ;; esac
exit "${FAKE_CASE:-0}"
PY
chmod +x "$3/bin/pip" "$3/bin/python"
"""
# Between the two halves, the suite: it lasts until the xla job beside it (if any) has ended.
SUITE = """echo "started in the background: ${xla_install:-no}"
if [ -n "$xla_install" ]; then
  while kill -0 "$xla_install" 2>/dev/null; do sleep 0.05; done
fi
echo "the suite ends; the xla test ran during it: $([ -s .ci-xla-case.log ] && echo yes || echo no)"
"""
XLA_CASE = "-m pytest -q tests/test_xla_device.py"


def write_executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def ci_xla_step(
    repo_root: Path, tmp_path: Path, free_gb: int, pip: str, case: int = 0
) -> subprocess.CompletedProcess[str]:
    """Source .ci/xla.sh in a scratch checkout and run its two halves around a suite as .ci/run does."""
    write_executable(tmp_path / "fakes" / "df", FAKE_DF)
    write_executable(tmp_path / "fakes" / "python3", FAKE_PYTHON3)
    steps = f"set -euo pipefail\nsource {repo_root / '.ci' / 'xla.sh'}\n"
    script = f"{steps}xla_start\n{SUITE}xla_finish\necho finished\n"
    env = {
        "PATH": f"{tmp_path / 'fakes'}:{os.environ['PATH']}",
        "FAKE_FREE_GB": str(free_gb),
        "FAKE_PIP": pip,
        "FAKE_XLA_CASE": str(case),
    }
    return subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )


def xla_case(tmp_path: Path, niceness: int) -> str:
    """What the fake environment's python says when CI runs the xla test in it."""
    return (
        f".ci-venv-xla python (niceness {niceness}): PORTABILITY_REQUIRE_XLA=1 PORTABILITY_XLA_PYTHON="
        f"{tmp_path}/.ci-venv-xla/bin/python PORTABILITY_REQUIRE_LITERT_TORCH= {XLA_CASE}"
    )


def test_with_room_for_both_it_installs_then_runs_the_xla_test_beside_the_suite_niced(
    repo_root: Path, tmp_path: Path
) -> None:
    done = ci_xla_step(repo_root, tmp_path, free_gb=40, pip="ok")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "started in the background: no" not in done.stdout
    assert "the xla test ran during it: yes" in done.stdout
    assert "--no-cache-dir" in (tmp_path / "pip-calls.log").read_text()
    assert re.search(r"the xla environment: installed in \d+ s, \d+\.\d GB beside the suite", done.stdout)
    # its output comes after the suite's, from the test's log
    assert xla_case(tmp_path, 10) in done.stdout
    assert done.stdout.index("the suite ends") < done.stdout.index(xla_case(tmp_path, 10))
    assert done.stdout.rstrip().endswith("finished")
    # a failing xla test fails CI, with its output
    failing = tmp_path / "failing"
    failing.mkdir()
    done = ci_xla_step(repo_root, failing, free_gb=40, pip="ok", case=3)
    assert done.returncode == 3
    assert done.stdout.index(xla_case(failing, 10)) < done.stdout.index("CI: the xla test failed (above)")
    assert "finished" not in done.stdout


def test_with_room_for_it_alone_it_installs_after_the_suite(repo_root: Path, tmp_path: Path) -> None:
    done = ci_xla_step(repo_root, tmp_path, free_gb=12, pip="ok")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "started in the background: no" in done.stdout
    assert "the xla test ran during it: no" in done.stdout
    assert (tmp_path / "pip-calls.log").exists()
    assert re.search(r"the xla environment: installed in \d+ s, \d+\.\d GB after the suite", done.stdout)
    assert xla_case(tmp_path, 0) in done.stdout


@pytest.mark.parametrize("free_gb, pip", [(3, "ok"), (12, "nospace"), (40, "nospace")])
def test_without_room_it_says_so_and_why_and_removes_what_it_half_installed(
    repo_root: Path, tmp_path: Path, free_gb: int, pip: str
) -> None:
    done = ci_xla_step(repo_root, tmp_path, free_gb=free_gb, pip=pip)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"NOT RUN: tests/test_xla_device.py: this machine has {free_gb} GB free" in done.stdout
    assert "the xla environment needs 11 GB" in done.stdout
    assert ".ci-venv-xla python" not in done.stdout
    assert not (tmp_path / ".ci-venv-xla").exists()
    assert (tmp_path / "pip-calls.log").exists() == (pip == "nospace")


@pytest.mark.parametrize("free_gb", [12, 40])
def test_an_install_that_fails_for_another_reason_fails_ci(
    repo_root: Path, tmp_path: Path, free_gb: int
) -> None:
    done = ci_xla_step(repo_root, tmp_path, free_gb=free_gb, pip="broken")
    assert done.returncode == 1
    assert "the xla environment did not install:" in done.stdout
    assert "No matching distribution found for torch_xla==2.9.0" in done.stdout
    assert "finished" not in done.stdout and "NOT RUN" not in done.stdout
