"""The runner benchmark's baselines: run like the runner's worker, and fail loudly (cheap cases only;
the benchmark itself is not run here)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from portability_data.runner.supervisor import RunSpec

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_runner.py"
SPEC = RunSpec(framework="torch", device="cpu", mode="eager", repeats=1)


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_runner", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_missing_case_file_stops_the_baseline(bench: ModuleType) -> None:
    missing = "cases/torch/test_does_not_exist.py"
    with pytest.raises(bench.BaselineError) as info:
        bench.run_baseline("plain_pytest", [missing], SPEC)
    text = str(info.value)
    assert "baseline 'plain_pytest': pytest exited with code 4" in text  # usage error: no such file
    assert "command: " in text and "test_does_not_exist.py" in text
    assert "not found" in text  # the tail of pytest's own output


def test_a_broken_case_file_stops_the_baseline(bench: ModuleType, tmp_path: Path) -> None:
    broken = tmp_path / "test_broken.py"
    broken.write_text("def test_x(:\n")
    with pytest.raises(bench.BaselineError, match=r"(?s)'process_per_case'.*exited with code 2.*SyntaxError"):
        bench.process_per_case([str(broken)], SPEC)


def test_a_case_file_without_tests_stops_the_baseline(bench: ModuleType, tmp_path: Path) -> None:
    empty = tmp_path / "test_empty.py"
    empty.write_text("X = 1\n")
    with pytest.raises(bench.BaselineError, match="exited with code 5"):
        bench.run_baseline("plain_pytest", [str(empty)], SPEC)


def test_failed_subtests_are_data_and_the_environment_is_the_workers(
    bench: ModuleType, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    case = tmp_path / "test_env.py"
    case.write_text(
        "import json, os, sys\n"
        "def test_environment():\n"
        "    keys = ('PYTEST_DISABLE_PLUGIN_AUTOLOAD', 'PORTABILITY_DEVICE', 'PORTABILITY_MODE',\n"
        "            'PORTABILITY_FRAMEWORK', 'PORTABILITY_EVENTS_FD', 'HOME')\n"
        "    env = {k: os.environ.get(k) for k in keys}\n"
        f"    open({str(seen)!r}, 'w').write(json.dumps({{'env': env, 'cwd': os.getcwd()}}))\n"
        "def test_fails():\n"
        "    assert False\n"
    )
    seconds, tests = bench.run_baseline("plain_pytest", [str(case)], SPEC)  # exit 1: accepted, data
    assert tests == 2 and seconds > 0
    facts = json.loads(seen.read_text())
    env = facts["env"]
    assert env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"  # as in runner.worker_environment
    assert (env["PORTABILITY_DEVICE"], env["PORTABILITY_MODE"], env["PORTABILITY_FRAMEWORK"]) == (
        "cpu",
        "eager",
        "torch",
    )
    assert env["PORTABILITY_EVENTS_FD"] is None  # a baseline has no event pipe
    assert env["HOME"] == facts["cwd"] != str(Path.cwd())  # a scratch folder, as the worker's


def test_count_tests_reads_the_summary_line(bench: ModuleType) -> None:
    assert bench.count_tests("..F\n1 failed, 2 passed, 3 warnings in 0.05s\n") == 3
    assert bench.count_tests("1 passed, 1 skipped, 2 errors in 1.20s (0:00:01)") == 4
    assert bench.count_tests("no tests ran in 0.01s") == 0


def test_the_benchmark_exits_non_zero_naming_the_arm(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken_plain(files: list[str], spec: RunSpec) -> tuple[float, int]:
        return bench.run_baseline("plain_pytest", ["cases/torch/test_does_not_exist.py"], spec)

    monkeypatch.setattr(bench, "plain_pytest", broken_plain)
    monkeypatch.setattr(bench, "runner", lambda spec: pytest.fail("the runner arm must not start"))
    monkeypatch.setattr(sys, "argv", ["bench_runner.py", "--framework", "torch", "--rounds", "1"])
    with pytest.raises(SystemExit) as info:
        bench.main()
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "FAILED: baseline 'plain_pytest'" in err and "command: " in err


def test_a_case_file_that_aborts_is_recorded_as_crashed_and_the_arm_goes_on(
    bench: ModuleType, tmp_path: Path
) -> None:
    """powerSGD's case aborts its pytest process (SIGABRT, exit -6): the runner isolates it, so the
    one-process-per-case baseline must survive it too, not stop the benchmark."""
    aborts = tmp_path / "test_aborts.py"
    aborts.write_text("import os\ndef test_abort():\n    os.abort()\n")
    fine = tmp_path / "test_fine.py"
    fine.write_text("def test_ok():\n    pass\n")
    seconds, tests, crashed = bench.process_per_case([str(aborts), str(fine)], SPEC)
    assert crashed == [str(aborts)]
    assert tests == 1 and seconds > 0  # the file after the crash ran
    with pytest.raises(bench.BaselineCrashed, match="exited with code -6"):  # one process: still loud
        bench.run_baseline("plain_pytest", [str(aborts), str(fine)], SPEC)
