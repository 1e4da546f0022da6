"""Runner benchmarks (issue: the runner): measured in one run against baselines on the same cases.

1. Harness overhead per subtest: `portability run` (worker process, event pipe, fsync'd journal,
   shard) against plain pytest over the same case files in one process. Target: <= 10%.
2. A whole suite: one worker serving every case file against one process per case file (the
   study's way: the framework imported again for every test file).

Like with like: every arm runs pytest with the same plugin set and environment. The baselines get
the runner's own worker environment (`runner.worker_environment`: PYTEST_DISABLE_PLUGIN_AUTOLOAD=1,
PORTABILITY_DEVICE / MODE / FRAMEWORK / ROOTDIR, PYTHONPATH, HOME and TMPDIR in a scratch folder,
TF_CPP_MIN_LOG_LEVEL; only the event pipe's descriptor is left out, as a baseline has no pipe),
the worker's pytest arguments (`worker.py`) and its working directory (a scratch folder, case files
by absolute path). So the only plugin in any arm is the harness, loaded the same way in all of them
(by cases/conftest.py); what the runner arm adds is the runner itself.

A baseline fails loudly: pytest exiting with anything but 0 (all passed) or 1 (some subtest failed,
which is data), or running no test, stops the benchmark with a message naming the arm, the command
and the tail of its output (exit 2). One exception: in the one-process-per-case arm, a case file
whose pytest is killed by a signal (an abort in the framework, as the runner's worker isolates and
records as crashed) is recorded as crashed, its time counted, and the arm goes on: a case that
aborts is part of the suite the study's way pays for too. Crashed files are listed in the result.

Usage: python benchmarks/bench_runner.py [--framework torch] [--cases ID ...] [--rounds 3]
    [--per-case-rounds 1] [--device cpu] [--mode eager] [--out PATH]
Prints a table and writes benchmarks/results/bench_runner_<framework>.json (or --out). Timings are
wall-clock medians; plain pytest and the runner alternate round by round, so a slow spell of a
shared machine hits both alike. The one-process-per-case baseline is an order of magnitude slower
and is timed ``--per-case-rounds`` times (default once).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from portability_data.runner.case_rows import load_rows  # noqa: E402
from portability_data.runner.spec import Paths, RunSpec  # noqa: E402
from portability_data.runner.supervisor import run  # noqa: E402
from portability_data.runner.worker_process import worker_environment  # noqa: E402

# The worker's pytest arguments after the target (worker.py), the root given the same way.
PYTEST_ARGS = (
    "-q",
    "-p",
    "no:cacheprovider",
    "--rootdir",
    str(REPO),
    "--import-mode=importlib",
    "-o",
    "addopts=",
    "-W",
    "ignore::DeprecationWarning",
)
OK_EXIT_CODES = (0, 1)  # 1: some subtest failed (data); 2+: interrupted, internal, usage, no tests
TAIL_CHARS = 3000
SHOWN_ENV = (
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "PORTABILITY_DEVICE",
    "PORTABILITY_MODE",
    "PORTABILITY_FRAMEWORK",
)
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?)\b")
_SUMMARY = re.compile(r"\bin \d+(?:\.\d+)?s\b")


class BaselineError(RuntimeError):
    """A baseline's pytest was interrupted, misused, failed to collect, or ran no test."""


class BaselineCrashed(BaselineError):
    """A baseline's pytest was killed by a signal (negative exit status): a case aborted the process."""

    def __init__(self, message: str, seconds: float, tests: int) -> None:
        super().__init__(message)
        self.seconds = seconds
        self.tests = tests


def _paths(scratch: Path) -> Paths:
    return Paths(REPO, REPO / "cases", scratch / "results", scratch / "runs", scratch / "journal")


def baseline_environment(spec: RunSpec, scratch: Path) -> dict[str, str]:
    """The runner's worker environment for `spec`, without the event pipe a baseline does not have."""
    env = worker_environment(spec, _paths(scratch), scratch, events_fd=-1)
    env.pop("PORTABILITY_EVENTS_FD")
    return env


def count_tests(output: str) -> int:
    """Tests pytest ran, from its closing summary line ("3 passed, 1 failed in 0.12s"); 0 if none."""
    for line in reversed(output.splitlines()):
        if _SUMMARY.search(line):
            return sum(int(n) for n, _ in _COUNT.findall(line))
    return 0


def run_baseline(arm: str, files: list[str], spec: RunSpec) -> tuple[float, int]:
    """(seconds, tests run) of one pytest process over `files` (paths relative to the repository or
    absolute), run as the runner's worker runs them. Raises BaselineError on exit codes other than
    0 and 1 or when no test ran; BaselineCrashed (one) when a signal killed pytest."""
    targets = [str(REPO / f) for f in files]  # absolute paths stay as they are
    command = [sys.executable, "-m", "pytest", *targets, *PYTEST_ARGS]
    with tempfile.TemporaryDirectory(prefix="bench-scratch-") as scratch_name:
        scratch = Path(scratch_name)
        env = baseline_environment(spec, scratch)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=scratch, env=env, capture_output=True, check=False)
        elapsed = time.perf_counter() - start
    output = (done.stdout + done.stderr).decode(errors="replace")
    tests = count_tests(output)
    problem = None
    if done.returncode not in OK_EXIT_CODES:
        problem = f"pytest exited with code {done.returncode} (0 or 1 expected)"
    elif tests == 0:
        problem = "pytest ran no test"
    if problem:
        shown = " ".join(f"{k}={env.get(k)}" for k in SHOWN_ENV)
        message = (
            f"baseline {arm!r}: {problem}\n"
            f"  command: {shlex.join(command)}\n"
            f"  environment: {shown}\n"
            f"  output (last {TAIL_CHARS} characters):\n{output[-TAIL_CHARS:]}"
        )
        if done.returncode < 0:
            raise BaselineCrashed(message, elapsed, tests)
        raise BaselineError(message)
    return elapsed, tests


def plain_pytest(files: list[str], spec: RunSpec) -> tuple[float, int]:
    return run_baseline("plain_pytest", files, spec)


def process_per_case(files: list[str], spec: RunSpec) -> tuple[float, int, list[str]]:
    """(seconds, tests run, case files whose process a signal killed): a crashing case file is
    recorded and timed, not fatal, as the runner's worker survives it too (the other errors are)."""
    seconds = 0.0
    tests = 0
    crashed: list[str] = []
    for file in files:
        try:
            elapsed, ran = run_baseline("process_per_case", [file], spec)
        except BaselineCrashed as exc:
            elapsed, ran = exc.seconds, exc.tests
            crashed.append(file)
            print(f"bench_runner: {file}: crashed in its own pytest process ({exc.args[0].splitlines()[0]})")
        seconds += elapsed
        tests += ran
    return seconds, tests, crashed


def runner(spec: RunSpec) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        paths = _paths(Path(tmp))
        start = time.perf_counter()
        run_id = run(spec, paths, log=lambda m: None)
        elapsed = time.perf_counter() - start
        rows = pq.read_table(Path(tmp) / "results" / "portability" / f"{run_id}.parquet").num_rows
    return elapsed, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", default="torch")
    parser.add_argument("--cases", nargs="*", help="case ids (default: every active case of the framework)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-case-rounds", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="PORTABILITY_DEVICE of every arm")
    parser.add_argument("--mode", default="eager", help="PORTABILITY_MODE of every arm")
    parser.add_argument(
        "--out", type=Path, help="result file (default benchmarks/results/bench_runner_<fw>.json)"
    )
    args = parser.parse_args()
    rows = [r for r in load_rows(REPO / "cases", REPO, (args.framework,)) if r["status"] == "active"]
    if args.cases:
        unknown = set(args.cases) - {r["case_id"] for r in rows}
        if unknown:
            parser.error(f"unknown or inactive {args.framework} case(s): {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r["case_id"] in set(args.cases)]
    files = [r["test_file"] for r in rows]
    ids = tuple(r["case_id"] for r in rows)
    spec = RunSpec(framework=args.framework, device=args.device, mode=args.mode, repeats=1, cases=ids)
    spec.validate()
    measured: dict[str, list[float]] = {"plain_pytest": [], "runner": [], "process_per_case": []}
    counted: dict[str, int] = {}
    crashed: list[str] = []
    try:
        for round_ in range(args.rounds):  # interleaved, so drift of the machine hits all alike
            elapsed, counted["plain_pytest"] = plain_pytest(files, spec)
            measured["plain_pytest"].append(elapsed)
            elapsed, counted["runner"] = runner(spec)
            measured["runner"].append(elapsed)
            if round_ < args.per_case_rounds:
                elapsed, counted["process_per_case"], crashed = process_per_case(files, spec)
                measured["process_per_case"].append(elapsed)
    except BaselineError as exc:
        print(f"bench_runner: FAILED: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    if len(set(counted.values())) > 1:
        print(
            f"bench_runner: WARNING: the arms ran different numbers of subtests: {counted}", file=sys.stderr
        )
    subtests = counted["runner"]
    median = {k: statistics.median(v) for k, v in measured.items()}
    result = {
        "framework": args.framework,
        "device": args.device,
        "mode": args.mode,
        "case_files": len(files),
        "subtests": subtests,
        "subtests_per_arm": counted,
        "process_per_case_crashed_files": crashed,
        "rounds": args.rounds,
        "per_case_rounds": min(args.per_case_rounds, args.rounds),
        "seconds": measured,
        "median_s": median,
        "runner_overhead_vs_plain_pytest": median["runner"] / median["plain_pytest"] - 1,
        "runner_overhead_ms_per_subtest": (median["runner"] - median["plain_pytest"])
        * 1e3
        / max(subtests, 1),
        "process_per_case_vs_runner": median["process_per_case"] / median["runner"],
    }
    out = args.out or REPO / "benchmarks" / "results" / f"bench_runner_{args.framework}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"{args.framework} ({args.device}, {args.mode}): {len(files)} case files, {subtests} subtests, "
        f"median of {args.rounds} rounds"
    )
    for name, value in median.items():
        print(f"  {name:18s} {value:8.2f} s  ({counted[name]} subtests)")
    print(
        f"  runner overhead vs plain pytest: {result['runner_overhead_vs_plain_pytest']:+.1%} "
        f"({result['runner_overhead_ms_per_subtest']:.2f} ms per subtest; target <= +10%)"
    )
    print(f"  one process per case file / runner: {result['process_per_case_vs_runner']:.2f}x")
    if crashed:
        print(f"  crashed in their own process (timed, counted as run): {', '.join(crashed)}")
    print(f"  written to {out}")


if __name__ == "__main__":
    main()
