"""Runner benchmarks (issue: the runner): measured in one run against baselines on the same cases.

1. Harness overhead per subtest: `portability run` (worker process, event pipe, fsync'd journal,
   shard) against plain pytest over the same case files in one process (the harness plugin
   loaded in both, so the difference is what the runner adds). Target: <= 10%.
2. A whole suite: one worker serving every case file against one process per case file (the
   study's way: the framework imported again for every test file).

Usage: python benchmarks/bench_runner.py [--framework torch] [--cases ID ...] [--rounds 3]
    [--per-case-rounds 1]
Prints a table and writes benchmarks/results/bench_runner_<framework>.json. Timings are wall-clock
medians; plain pytest and the runner alternate round by round, so a slow spell of a shared machine hits both
alike. The one-process-per-case baseline is an order of magnitude slower and is timed
``--per-case-rounds`` times (default once).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from portability_data.case_rows import load_rows  # noqa: E402
from portability_data.runner import Paths, RunSpec, run  # noqa: E402


def plain_pytest(files: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--import-mode=importlib",
            "-o",
            "addopts=",
            *files,
        ],
        cwd=REPO,
        capture_output=True,
        check=False,
    )
    return time.perf_counter() - start


def process_per_case(files: list[str]) -> float:
    start = time.perf_counter()
    for file in files:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--import-mode=importlib",
                "-o",
                "addopts=",
                file,
            ],
            cwd=REPO,
            capture_output=True,
            check=False,
        )
    return time.perf_counter() - start


def runner(framework: str, case_ids: tuple[str, ...]) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        paths = Paths(REPO, REPO / "cases", Path(tmp) / "results", Path(tmp) / "runs", Path(tmp) / "journal")
        start = time.perf_counter()
        run_id = run(
            RunSpec(framework=framework, device="cpu", repeats=1, cases=case_ids), paths, log=lambda m: None
        )
        elapsed = time.perf_counter() - start
        rows = pq.read_table(Path(tmp) / "results" / "portability" / f"{run_id}.parquet").num_rows
    return elapsed, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", default="torch")
    parser.add_argument("--cases", nargs="*", help="case ids (default: every active case of the framework)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-case-rounds", type=int, default=1)
    args = parser.parse_args()
    rows = [r for r in load_rows(REPO / "cases", REPO, (args.framework,)) if r["status"] == "active"]
    if args.cases:
        rows = [r for r in rows if r["case_id"] in set(args.cases)]
    files = [r["test_file"] for r in rows]
    ids = tuple(r["case_id"] for r in rows)
    measured: dict[str, list[float]] = {"plain_pytest": [], "runner": [], "process_per_case": []}
    subtests = 0
    for round_ in range(args.rounds):  # interleaved, so drift of the machine hits all alike
        measured["plain_pytest"].append(plain_pytest(files))
        elapsed, subtests = runner(args.framework, ids)
        measured["runner"].append(elapsed)
        if round_ < args.per_case_rounds:
            measured["process_per_case"].append(process_per_case(files))
    median = {k: statistics.median(v) for k, v in measured.items()}
    result = {
        "framework": args.framework,
        "case_files": len(files),
        "subtests": subtests,
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
    out = REPO / "benchmarks" / "results" / f"bench_runner_{args.framework}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{args.framework}: {len(files)} case files, {subtests} subtests, median of {args.rounds} rounds")
    for name, value in median.items():
        print(f"  {name:18s} {value:8.2f} s")
    print(
        f"  runner overhead vs plain pytest: {result['runner_overhead_vs_plain_pytest']:+.1%} "
        f"({result['runner_overhead_ms_per_subtest']:.2f} ms per subtest; target <= +10%)"
    )
    print(f"  one process per case file / runner: {result['process_per_case_vs_runner']:.2f}x")


if __name__ == "__main__":
    main()
