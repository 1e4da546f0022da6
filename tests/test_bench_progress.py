"""The main job shows its progress wherever it runs and ends saying what it measured and where the
report is (issue 59): through a pipe, one line per case with the setting, the case's place and the
run's elapsed time; a `still running` line while a long case runs; in a terminal of zero columns
(where a tqdm bar draws nothing) lines, not a bar; and `portability bench` closes with the settings
it measured, the shards' folder and the report `dvc repro` builds."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
import yaml

from portability_data.runner.progress import BarProgress, LineProgress, setting_of, terminal_progress
from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import new_run_id, run, shard_path
from tests.conftest import REPO_ROOT, CaseRepo

JAX_COS = """
import jax.numpy as jnp
import numpy as np
import pytest

@pytest.mark.parametrize("n", [1, 3])
def test_cos(device, timed, n):
    out = timed(jnp.cos, jnp.zeros((n,)))
    np.testing.assert_allclose(np.asarray(out), np.ones(n))
"""
JAX_EXP = """
import jax.numpy as jnp
import numpy as np

def test_exp(device, timed):
    np.testing.assert_allclose(np.asarray(timed(jnp.exp, jnp.zeros((2,)))), np.ones(2))
"""
FINE = "def test_a():\n    assert True\n"
SLOW = "import time\n\ndef test_slow():\n    time.sleep(2.0)\n"


def cli(root: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    command = [sys.executable, "-m", "portability_data.cli", *args]
    return subprocess.run(command, cwd=root, env=env, text=True, check=False, timeout=600, **kwargs)


def test_bench_through_a_pipe_prints_a_line_per_case_and_closes_with_what_and_where(
    case_repo: CaseRepo,
) -> None:
    case_repo.add("jax", "numpy_cos", JAX_COS, function="jax.numpy.cos")
    case_repo.add("jax", "numpy_exp", JAX_EXP, function="jax.numpy.exp")
    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())  # the real quick profile
    params["run"].update(frameworks=["jax"], timeout_s=120)
    (case_repo.root / "params.yaml").write_text(yaml.safe_dump(params))
    out = cli(case_repo.root, "bench", capture_output=True)
    assert out.returncode == 0, out.stderr
    per_case = [line for line in out.stderr.splitlines() if line.startswith("jax/cpu/eager [")]
    pattern = (
        r"jax/cpu/eager \[(\d)/2\] (jax\.numpy\.\w+): (\d) passed, 0 failed, 0 errors, 0 skipped "
        r"\(\d+\.\d s; run 0:\d\d\)"
    )
    found = [re.fullmatch(pattern, line) for line in per_case]
    assert all(found) and [(m[1], m[2], m[3]) for m in found] == [
        ("1", "jax.numpy.cos", "2"),
        ("2", "jax.numpy.exp", "1"),
    ], out.stderr
    [shard] = sorted((case_repo.root / "data" / "results" / "local").glob("*.parquet"))
    run_id = shard.stem
    assert out.stdout.splitlines() == [
        "bench done (profile quick): 1 setting(s) of this machine, 1 measured now, 0 already measured "
        "by an earlier bench",
        f"  jax/cpu/eager: 2 case file(s) x 1 repeat(s), measured now: {run_id}",
        "shards: data/results/local/ (source local: this machine's, never pooled with the project's)",
        "next: `dvc repro` sets them beside the study's and ours and builds the report: reports/report.md "
        "(and reports/report.html, offline)",
    ]

    again = cli(case_repo.root, "bench", capture_output=True)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[:2] == [
        "bench done (profile quick): 1 setting(s) of this machine, 0 measured now, 1 already measured "
        "by an earlier bench",
        f"  jax/cpu/eager: 2 case file(s) x 1 repeat(s), measured earlier: {run_id}",
    ]


def test_a_long_case_says_it_is_still_running(case_repo: CaseRepo) -> None:
    """No subtest row comes for seconds: the log still gets a line each beat, naming the case. (The
    run's clock in the line is any m:ss: on a loaded machine the worker alone takes over 10 s to
    start, and a test never asserts on wall time. For the same reason a beat may fall between the
    case's one row and its closing line, and say 1 subtest done, and the fast case may get beats of
    its own: a CI rehearsal under load failed on the old form of this test.)"""
    case_repo.add("torch", "slow", SLOW)
    case_repo.add("torch", "zfine", FINE)
    stream = io.StringIO()
    progress = LineProgress(stream, beat_s=0.3)
    spec = RunSpec("torch", "cpu", repeats=1, timeout_s=60)
    run(spec, Paths.under(case_repo.root), log=lambda m: None, progress=progress, confirm=False)
    lines = stream.getvalue().splitlines()
    beats = [(i, line) for i, line in enumerate(lines) if "still running" in line]
    slow = [(i, line) for i, line in beats if "torch.slow" in line]
    assert slow and all(
        re.fullmatch(r"torch/cpu/eager \[1/2\] torch\.slow: still running, [01] subtest\(s\) done so far "
                     r"\(\d+ s; run \d+:\d\d\)", line)
        for _, line in slow
    ), lines  # fmt: skip
    done = "torch/cpu/eager [1/2] torch.slow: 1 passed"
    finished = [i for i, line in enumerate(lines) if line.startswith(done)]
    assert finished and all(i < finished[0] for i, _ in slow)  # none once the case is done
    # a beat names the case running then: the next one only after the slow one closed (its worker
    # may take more than a beat to start on a loaded machine, as in a CI rehearsal)
    assert all(i > finished[0] and "[2/2] torch.zfine" in line for i, line in beats if (i, line) not in slow)
    assert progress._stop.is_set()  # the run closed the progress: its thread has stopped


def test_the_setting_is_read_from_the_run_id() -> None:
    census = new_run_id(RunSpec("jax", "cpu", "compiled", suite="census"))
    assert setting_of(census) == "jax/cpu/compiled census"
    assert setting_of(new_run_id(RunSpec("tensorflow", "cpu"))) == "tensorflow/cpu/eager"


def _pty(columns: int) -> tuple[int, int]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 0 if columns == 0 else 24, columns, 0, 0))
    return master, slave


@pytest.mark.parametrize("columns", [0, 100])
def test_a_terminal_of_zero_columns_gets_lines_and_a_sized_one_the_bar(
    columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    master, slave = _pty(columns)
    with os.fdopen(slave, "w") as terminal:
        monkeypatch.setattr(sys, "stdout", terminal)
        chosen = terminal_progress(terminal)
    os.close(master)
    assert type(chosen) is (LineProgress if columns == 0 else BarProgress)


@pytest.mark.parametrize("columns", [0, 100])
def test_portability_run_in_a_terminal_of_zero_columns_prints_lines(
    case_repo: CaseRepo, columns: int
) -> None:
    """A real run on a pseudo-terminal: with zero columns the case lines, with a width the bar."""
    case_repo.add("torch", "fine", FINE)
    master, slave = _pty(columns)
    args = ["run", "--framework", "torch", "--repeats", "1", "--no-confirm", "--timeout", "60"]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    env.pop("COLUMNS", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "portability_data.cli", *args],
        cwd=case_repo.root, env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
    )  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the terminal's other end closed: the run exited
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert process.wait(timeout=600) == 0
    text = b"".join(chunks).decode(errors="replace")
    line = re.search(r"torch/cpu/eager \[1/1\] torch\.fine: 1 passed, 0 failed, 0 errors, 0 skipped \(", text)
    bar = "case/s" in text or "s/case" in text
    assert (line is not None, bar) == ((True, False) if columns == 0 else (False, True)), text
    run_id = re.findall(r"^(torch-cpu-eager-\S+?)\r?$", text, re.MULTILINE)[-1]  # stdout: the run id
    assert shard_path(Paths.under(case_repo.root), run_id, "local").is_file()


def test_the_heartbeat_names_the_confirmations_and_is_silent_between_cases() -> None:
    progress = LineProgress(io.StringIO(), beat_s=3600.0)
    progress.started("jax-cpu-eager-20261205T000000Z-abcdef", 1, 1)
    progress.case_started({"case_id": "jax.numpy.cos"}, 0)
    assert progress.heartbeat().startswith("jax/cpu/eager [1/1] jax.numpy.cos: still running, 0 subtest(s)")
    progress.case_finished({"case_id": "jax.numpy.cos"}, 0)
    assert progress.heartbeat() is None  # between cases: nothing is running
    progress.confirming(3)
    progress.confirmed("cases/jax/test_cos.py::test_cos[1]", "confirmed")
    assert re.fullmatch(
        r"jax/cpu/eager re-running failing subtests alone: 1 of 3 done \(run 0:0\d\)", progress.heartbeat()
    )
    progress.close()
    assert progress._stop.is_set()
