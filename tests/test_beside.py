"""The jobs beside the suite (tests/beside.py) when the suite runs on several cores (pytest-xdist):
a job two workers' tests wait on runs once, both read its output, and nothing is left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO_ROOT

CONFTEST = f"""
import sys

sys.path.insert(0, {str(REPO_ROOT)!r})
from tests import beside


def pytest_configure(config):
    beside.configure(config)


def pytest_unconfigure(config):
    beside.unconfigure(config)


def pytest_collection_finish(session):
    beside.arrange(session.items)


def pytest_sessionfinish(session):
    beside.stop()
"""

WAITING_TEST = """
import os
from pathlib import Path

from tests import beside

RAN = Path({ran!r})


def job(folder):
    return beside.Job([["sh", "-c", f"sleep 1; echo once >> {{RAN}}; echo made in $PWD"]], cwd=folder)


BESIDE = {{"shared": (job, ["test_{name}"])}}


def test_{name}():
    done = beside.finished("shared", job)
    assert done.returncode == 0 and done.stdout.startswith("made in "), done
    with open({seen!r}, "a") as seen:
        seen.write(os.environ.get("PYTEST_XDIST_WORKER", "none") + " " + str(done.folder) + "\\n")
"""


def test_a_job_two_workers_wait_on_runs_once_and_is_cleaned_up(tmp_path: Path) -> None:
    project, temporary = tmp_path / "project", tmp_path / "tmp"
    project.mkdir()
    temporary.mkdir()
    ran, seen = tmp_path / "ran", tmp_path / "seen"
    (project / "pytest.ini").write_text("[pytest]\naddopts =\n")
    (project / "conftest.py").write_text(CONFTEST)
    for name in ("one", "two"):
        (project / f"test_{name}.py").write_text(
            textwrap.dedent(WAITING_TEST.format(ran=str(ran), seen=str(seen), name=name))
        )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile"],
        cwd=project,
        env={**os.environ, "TMPDIR": str(temporary)},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert ran.read_text() == "once\n"  # not once per worker
    lines = [line.split() for line in seen.read_text().splitlines()]
    assert len(lines) == 2 and {worker for worker, _ in lines} == {"gw0", "gw1"}, lines
    assert lines[0][1] == lines[1][1]  # both read the one job's folder
    assert not list(temporary.glob("portability-beside-*")), "the shared folder outlived the session"
