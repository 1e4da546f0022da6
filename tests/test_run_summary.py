"""`portability run` shows progress while it runs and a summary at the end, and its exit status
tells a run whose case files could not be collected (1) from one where only the framework failed
(0: that is data). The progress is fed by the rows the supervisor journals."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from tqdm import tqdm

from portability_data.runner.progress import BarProgress, LineProgress, RunProgress, terminal_progress
from portability_data.runner.run_summary import RunSummary
from portability_data.runner.supervisor import Paths, RunSpec, run, shard_path
from tests.conftest import REPO_ROOT, CaseRepo

FINE = """
import pytest

@pytest.mark.parametrize("n", [1, 2, 3])
def test_n(n):
    assert n < 3

def test_skipped():
    pytest.skip("not on this device")
"""
BROKEN = '"""x."""\nimport torch\n\ndef test_a(:\n    pass\n'


def run_cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    command = [sys.executable, "-m", "portability_data.cli", "run", "--framework", "torch", *args]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)


def test_a_case_file_that_cannot_be_collected_fails_the_run_naming_file_and_line(
    case_repo: CaseRepo,
) -> None:
    case_repo.add("torch", "broken", BROKEN)
    case_repo.add("torch", "fine", FINE)
    out = run_cli(case_repo.root, "--repeats", "1", "--no-confirm", "--timeout", "60")
    assert out.returncode == 1, out.stderr
    run_id = out.stdout.strip()
    assert len(run_id.splitlines()) == 1  # stdout stays the run id alone, for scripts
    rows = pq.read_table(shard_path(Paths.under(case_repo.root), run_id, "local")).to_pylist()
    assert [r["outcome"] for r in rows if r["case_id"] == "torch.broken"] == ["error"]  # kept as data
    lines = out.stderr.strip().splitlines()
    reason = "could not be collected: cases/torch/test_broken.py:4: SyntaxError: invalid syntax"
    assert f"torch/cpu/eager [1/2] torch.broken: {reason}" in lines  # the per-case line while it runs
    assert "torch/cpu/eager [2/2] torch.fine: 2 passed, 1 failed, 0 errors, 1 skipped (" in out.stderr
    assert f"torch.broken: {reason}" in lines  # and again under the summary table
    assert lines[-1].startswith("FAILED: 1 of 2 case file(s) could not run") and run_id in lines[-1]
    assert "\r" not in out.stderr  # no bar in a log


def test_a_run_where_only_the_framework_fails_exits_zero_with_a_summary_table(case_repo: CaseRepo) -> None:
    case_repo.add("torch", "fine", FINE)
    out = run_cli(case_repo.root, "--repeats", "2", "--no-confirm", "--timeout", "60")
    assert out.returncode == 0, out.stderr
    run_id = out.stdout.strip()
    lines = out.stderr.strip().splitlines()
    header = lines.index(f"run {run_id}: outcomes of every subtest run, per case")
    assert lines[header + 1].split() == [
        "case",
        "passed",
        "failed",
        "errors",
        "skipped",
        "host_fallback",
        "other",
    ]
    assert lines[header + 3].split() == ["torch.fine", "4", "2", "0", "2", "0", "0"]
    assert lines[header + 5].split() == ["total", "4", "2", "0", "2", "0", "0"]
    assert "[1/2] torch.fine (repeat 1/2): 2 passed, 1 failed" in out.stderr
    assert lines[-1].startswith("OK: all 1 case(s) ran; 2 subtest run(s) did not pass")
    assert lines[-1].endswith(run_id)


class Recorder(RunProgress):
    """Writes down what the runner told it, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def started(self, run_id: str, n_cases: int, repeats: int) -> None:
        self.calls.append(("started", n_cases, repeats))

    def case_started(self, case: dict[str, Any], repeat: int) -> None:
        self.calls.append(("case", case["case_id"], repeat))

    def row(self, row: dict[str, Any]) -> None:
        self.calls.append(("row", row["subtest"], row["outcome"]))

    def case_finished(self, case: dict[str, Any], repeat: int) -> None:
        self.calls.append(("done", case["case_id"], repeat))

    def confirming(self, n_subtests: int) -> None:
        self.calls.append(("confirming", n_subtests))

    def confirmed(self, test_id: str, verdict: str) -> None:
        self.calls.append(("confirmed", test_id.split("::")[-1], verdict))

    def close(self) -> None:
        self.calls.append(("close",))


def test_the_runner_reports_each_case_row_and_confirmation_as_journaled(case_repo: CaseRepo) -> None:
    case_repo.add("torch", "fine", FINE)
    recorder = Recorder()
    paths = Paths.under(case_repo.root)
    run_id = run(
        RunSpec("torch", "cpu", repeats=1, timeout_s=60), paths, log=lambda m: None, progress=recorder
    )
    assert recorder.calls == [
        ("started", 1, 1),
        ("case", "torch.fine", 0),
        ("row", "test_n[1]", "passed"),
        ("row", "test_n[2]", "passed"),
        ("row", "test_n[3]", "failed"),
        ("row", "test_skipped", "skipped"),
        ("done", "torch.fine", 0),
        ("confirming", 1),
        ("confirmed", "test_n[3]", "confirmed"),
        ("close",),
    ]
    summary = RunSummary.of_shard(run_id, shard_path(paths, run_id))
    assert summary.not_run == [] and summary.total().short() == "2 passed, 1 failed, 0 errors, 1 skipped"


def collection_row(case_id: str, test_file: str, error_type: str, message: str) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "test_id": f"{test_file}::<collection>",
        "subtest": "<collection>",
        "outcome": "error",
        "failure_category": "other",
        "error_type": error_type,
        "error_message": message,
    }


IMPORT_ERROR = """ImportError while importing test module '/tmp/r/cases/torch/test_imp.py'.
Traceback:
cases/torch/test_imp.py:3: in <module>
    import not_a_module_anywhere
E   ModuleNotFoundError: No module named 'not_a_module_anywhere'"""


def test_bar_on_a_terminal_lines_in_a_log() -> None:
    assert type(terminal_progress(io.StringIO())) is LineProgress  # pytest's stdout is no terminal
    stream = io.StringIO()
    bar = BarProgress(tqdm, stream)
    case = {"case_id": "torch.imp", "test_file": "cases/torch/test_imp.py"}
    bar.started("run-1", 2, 1)
    bar.case_started(case, 0)
    bar.row(collection_row("torch.imp", case["test_file"], "ModuleNotFoundError", IMPORT_ERROR))
    bar.case_finished(case, 0)
    bar.case_started({"case_id": "torch.ok"}, 0)
    bar.row({"case_id": "torch.ok", "test_id": "cases/torch/test_ok.py::test_a", "outcome": "passed"})
    bar.case_finished({"case_id": "torch.ok"}, 0)
    bar.close()
    text = stream.getvalue()
    assert "2/2" in text and "passed 1 failed 0 errors 1 skipped 0" in text
    assert (
        "[1/2] torch.imp: could not be collected: cases/torch/test_imp.py:3: "
        "ModuleNotFoundError: No module named 'not_a_module_anywhere'" in text
    )


def test_harness_errors_count_as_not_run_and_failures_as_data() -> None:
    rows = [
        {"case_id": "jax.a", "test_id": "cases/jax/test_a.py::test_x", "outcome": "failed"},
        {
            "case_id": "jax.b",
            "test_id": "cases/jax/test_b.py::test_y",
            "outcome": "failed",
            "failure_category": "harness",
            "error_type": "TypeError",
            "error_message": "partial_timed() takes 1 positional argument but 2 were given",
        },
    ]
    summary = RunSummary.of_rows("run-2", rows)
    assert [c.case_id for c in summary.not_run] == ["jax.b"]
    assert summary.cases["jax.b"].not_run == [
        "harness error: cases/jax/test_b.py: partial_timed() takes 1 positional argument but 2 were given "
        "(TypeError)"
    ]
    assert summary.verdict().startswith("FAILED: 1 of 2 case file(s) could not run")
    assert RunSummary.of_rows("run-3", rows[:1]).verdict().startswith("OK: all 1 case(s) ran")


def test_one_progress_serves_several_runs_and_counts_each_from_one() -> None:
    """`portability bench` hands one progress object to every run it makes."""
    stream = io.StringIO()
    lines = LineProgress(stream)
    for run_id, case_id in (("run-torch", "torch.a"), ("run-jax", "jax.b")):
        lines.started(run_id, 1, 1)
        lines.case_started({"case_id": case_id}, 0)
        lines.row({"case_id": case_id, "test_id": "cases/x/test_x.py::test_a", "outcome": "passed"})
        lines.case_finished({"case_id": case_id}, 0)
    text = stream.getvalue()
    assert "[1/1] torch.a" in text and "[1/1] jax.b" in text and "[2/1]" not in text


def test_host_fallback_is_counted_as_itself_not_as_a_crash() -> None:
    """On XLA a subtest that ran with ops on the host is `host_fallback`: the progress line, the
    table and the verdict name it apart from timeouts, crashes and memory (it did not pass)."""
    from portability_data.runner.run_summary import CaseCounts, RunSummary

    counts = CaseCounts("torch.optim.Adamax")
    for outcome in ("passed", "host_fallback", "host_fallback", "crashed"):
        counts.add({"outcome": outcome, "test_id": "cases/torch/test_optim_Adamax.py::t"})
    assert (
        counts.short() == "1 passed, 0 failed, 0 errors, 0 skipped, 2 host fallback, 1 timeout/crashed/memory"
    )
    summary = RunSummary("run-x", {"torch.optim.Adamax": counts})
    assert summary.table()[-1].split() == ["total", "1", "0", "0", "0", "2", "1"]
    assert summary.verdict().startswith("OK: all 1 case(s) ran; 3 subtest run(s) did not pass")
