"""Census `--jobs` (issue 19): does running census entries in two workers side by side shorten
the census, and does it change any verdict?

The real runner (runner/supervisor.run) on a scratch checkout holding the real harness conftest,
the real OpInfo census module and its manifest cut down to `--entries` entries (drawn with
`--seed` from cases/torch/census/opinfo.yaml, every dtype of each): the same census run with
jobs = 1 and with each of `--jobs` (default 2), alternated over `--rounds` rounds (1, 2, 1, 2 ...)
so drift of the host hits both arms alike; confirmations off (they are the same work in both arms
and have their own `--confirm-jobs`). Per arm: wall seconds of each run (worker start included:
what a user waits for), their median, the ratio of the baseline's median to the arm's (the
speed-up), and whether every subtest's outcome and error type equals the baseline's (they must:
a census verdict may not depend on how many workers ran beside it).

Run it on a quiet host (no other work: the speed-up is what the cores give). Writes
benchmarks/results/bench_census_jobs.json and prints a summary.

Usage: python benchmarks/bench_census_jobs.py [--entries 40] [--seed 0] [--rounds 2] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run

REPO = Path(__file__).resolve().parent.parent
CENSUS = REPO / "cases" / "torch" / "census"
RESULTS = REPO / "benchmarks" / "results"


def scratch_checkout(root: Path, entries: int, seed: int) -> tuple[Path, int]:
    """A checkout with the real conftest and OpInfo module, the manifest cut to `entries`."""
    (root / "cases" / "torch" / "census").mkdir(parents=True)
    shutil.copy(REPO / "cases" / "conftest.py", root / "cases" / "conftest.py")
    shutil.copy(CENSUS / "test_opinfo.py", root / "cases" / "torch" / "census" / "test_opinfo.py")
    manifest = yaml.safe_load((CENSUS / "opinfo.yaml").read_text())
    chosen = random.Random(seed).sample(manifest["entries"], entries)
    manifest["entries"] = sorted(chosen, key=lambda e: e["entry"])
    manifest_text = yaml.safe_dump(manifest, sort_keys=False)
    (root / "cases" / "torch" / "census" / "opinfo.yaml").write_text(manifest_text)
    return root, sum(len(e["dtypes"]) for e in chosen)


def one_run(root: Path, jobs: int) -> tuple[float, dict[str, tuple[str, str | None]]]:
    """(wall seconds, subtest -> (outcome, error type)) of one census run with `jobs` workers."""
    paths = Paths.under(root)
    spec = RunSpec(framework="torch", device="cpu", repeats=1, timeout_s=300, suite="census")
    started = time.perf_counter()
    run_id = run(spec, paths, log=lambda message: None, confirm=False, jobs=jobs)
    seconds = time.perf_counter() - started
    shard = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
    return seconds, {row["test_id"]: (row["outcome"], row["error_type"]) for row in shard}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, nargs="*", default=[2])
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_census_jobs.json")
    args = parser.parse_args()
    arms = [1, *args.jobs]
    with tempfile.TemporaryDirectory(prefix="bench-census-jobs-") as scratch:
        root, pairs = scratch_checkout(Path(scratch) / "repo", args.entries, args.seed)
        walls: dict[int, list[float]] = {jobs: [] for jobs in arms}
        verdicts: dict[int, list[dict]] = {jobs: [] for jobs in arms}
        for round_number in range(args.rounds):
            for jobs in arms:
                seconds, found = one_run(root, jobs)
                walls[jobs].append(seconds)
                verdicts[jobs].append(found)
                done = f"{seconds:.1f} s, {len(found)} subtests"
                print(f"round {round_number + 1}, jobs {jobs}: {done}", flush=True)
    baseline = verdicts[1][0]
    base_median = statistics.median(walls[1])
    result = {
        "entries": args.entries,
        "pairs": pairs,
        "seed": args.seed,
        "rounds": args.rounds,
        "cpu_count": os.cpu_count(),
        "load_after": os.getloadavg()[0],
        "arms": {
            str(jobs): {
                "wall_s": [round(s, 2) for s in walls[jobs]],
                "median_s": round(statistics.median(walls[jobs]), 2),
                "speedup_vs_jobs_1": round(base_median / statistics.median(walls[jobs]), 2),
                "verdicts_equal_baseline": all(found == baseline for found in verdicts[jobs]),
                "differing": sorted(
                    {t for found in verdicts[jobs] for t in found if found.get(t) != baseline.get(t)}
                )[:20],
            }
            for jobs in arms
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for jobs in arms:
        arm = result["arms"][str(jobs)]
        print(
            f"jobs {jobs}: median {arm['median_s']} s over {args.rounds} run(s) of {pairs} pairs; "
            f"{arm['speedup_vs_jobs_1']}x jobs 1; verdicts equal to jobs 1: {arm['verdicts_equal_baseline']}"
        )


if __name__ == "__main__":
    main()
