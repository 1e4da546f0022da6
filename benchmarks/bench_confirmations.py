"""Confirmations by fork (runner/fork_worker.py) against spawned workers: how much faster, and is
every verdict the same?

A census run confirms each failing pair alone in a fresh worker; spawned, each pays the
framework's import (seconds) for a subtest of a fraction of one. This takes the failing census
pairs of the newest committed census shard of each framework (eager; up to `--pairs` per
framework, drawn with `--seed`), and runs every one alone through the real `AloneRunner` twice per
round, once spawned and once forked, alternating which goes first over `--rounds` rounds (so the
host's drift hits both alike). Per framework: the wall seconds of each arm (sum over the pairs,
the forking process's own start included), the ratio spawn / fork (the speed-up), and whether
every pair's outcome and error type by fork equals the spawned one (they must: the fork is a
fresh worker, or it is not a confirmation).

With `--device xla` (torch only, run by the torch_xla environment's python with PJRT_DEVICE=CPU)
the pairs come from the newest xla eager census shard and both arms run on XLA's CPU backend,
where the forking process also preloads torch_xla and torch's test databases (fork_worker.preload).

Run it on a quiet host. Writes benchmarks/results/bench_confirmations.json (bench_confirmations_xla
.json for xla) and prints a summary.

Usage: python benchmarks/bench_confirmations.py [--pairs 12] [--seed 0] [--rounds 2]
       [--frameworks torch jax tensorflow] [--device cpu|xla]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from portability_data.runner.confirmation import AloneRunner
from portability_data.runner.spec import Paths, RunSpec

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
FAILING = ("failed", "error", "crashed")


def failing_pairs(framework: str, device: str, count: int, seed: int) -> tuple[str, list[str]]:
    """(run id, test ids) of up to `count` failing pairs of the newest eager census shard."""
    shards = sorted(
        (REPO / "data" / "results" / "portability").glob(f"{framework}-{device}-eager-census-*.parquet")
    )
    if not shards:
        return "", []
    newest = max(shards, key=lambda path: path.stem.split("-census-")[1])
    rows = pq.read_table(newest, columns=["test_id", "outcome"]).to_pylist()
    failing = sorted({r["test_id"] for r in rows if r["outcome"] in FAILING})
    return newest.stem, sorted(random.Random(seed).sample(failing, min(count, len(failing))))


def one_arm(
    framework: str, device: str, method: str, test_ids: list[str], scratch: Path
) -> tuple[float, dict[str, list]]:
    """(wall seconds, test id -> [outcome, error type]) of every pair confirmed by `method`."""
    paths = Paths.under(REPO)
    spec = RunSpec(framework=framework, device=device, repeats=1, timeout_s=300, suite="census")
    alone = AloneRunner(spec, paths, scratch, scratch / f"{framework}-{method}.log", method)
    verdicts = {}
    started = time.perf_counter()
    try:
        for test_id in test_ids:
            ran = alone.run(test_id)
            if ran["worker"] != method:
                raise SystemExit(
                    f"{framework}: asked for {method}, ran by {ran['worker']} ({alone.fork_refused})"
                )
            verdicts[test_id] = [ran["outcome"], ran["error_type"]]
    finally:
        alone.close()
    return time.perf_counter() - started, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--frameworks", nargs="+", default=["torch", "jax", "tensorflow"])
    parser.add_argument("--device", choices=["cpu", "xla"], default="cpu")
    args = parser.parse_args()
    if args.device == "xla" and args.frameworks != ["torch"]:
        parser.error("--device xla measures torch only: add --frameworks torch")
    report: dict = {
        "pairs": args.pairs, "seed": args.seed, "rounds": args.rounds, "device": args.device,
        "frameworks": {},
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-confirm-") as name:
        scratch = Path(name)
        for framework in args.frameworks:
            run_id, test_ids = failing_pairs(framework, args.device, args.pairs, args.seed)
            if not test_ids:
                print(f"{framework}: no eager census shard with failing pairs; skipped")
                continue
            walls: dict[str, list[float]] = {"spawn": [], "fork": []}
            seen: dict[str, dict] = {}
            for round_no in range(args.rounds):
                order = ("spawn", "fork") if round_no % 2 == 0 else ("fork", "spawn")
                for method in order:
                    wall, verdicts = one_arm(framework, args.device, method, test_ids, scratch)
                    walls[method].append(wall)
                    if method in seen and seen[method] != verdicts:
                        raise SystemExit(f"{framework}: {method} gave other verdicts in round {round_no}")
                    seen[method] = verdicts
            differing = {
                t: [seen["spawn"][t], seen["fork"][t]]
                for t in test_ids
                if seen["spawn"][t] != seen["fork"][t]
            }
            spawn_s, fork_s = min(walls["spawn"]), min(walls["fork"])
            report["frameworks"][framework] = {
                "shard": run_id,
                "test_ids": test_ids,
                "wall_s": walls,
                "per_pair_s": {"spawn": spawn_s / len(test_ids), "fork": fork_s / len(test_ids)},
                "speedup": spawn_s / fork_s,
                "verdicts_equal": not differing,
                "differing": differing,
                "outcomes": seen["fork"],
            }
            print(
                f"{framework}: {len(test_ids)} failing pairs of {run_id}; per pair "
                f"{spawn_s / len(test_ids):.2f} s spawned, {fork_s / len(test_ids):.2f} s forked: "
                f"{spawn_s / fork_s:.2f}x; "
                f"verdicts equal: {not differing}"
            )
    RESULTS.mkdir(exist_ok=True)
    name = "bench_confirmations.json" if args.device == "cpu" else f"bench_confirmations_{args.device}.json"
    (RESULTS / name).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
