"""Compile-cache benchmark (issue 57): the wall time of the same census chunk run through the real
runner with no persistent compile cache, with an empty one (cold: it compiles and writes every
program) and again with the cache the cold run filled (warm: a re-run), in the same run on the
same host, each round on a fresh cache folder. Target: warm <= 25% of cold for a JAX eager chunk.

The chunk: `--entries` entries drawn with `--seed` from the committed manifest of `--origin`
(census_subset.draw), every dtype of each, as `portability run --suite census` runs them (one
repeat, failures confirmed alone in a fresh worker, `--jobs` workers). Every arm must give the
same statuses (outcome, error type, confirmation, samples failed) for every pair, or the benchmark
stops: a cache may make a run faster, never change a label.

For torch_xla run it with the xla environment's Python, `--framework torch --device xla --origin
opinfo`, PJRT_DEVICE=CPU and PORTABILITY_COMPILE_CACHE_XLA=on (the runner leaves torch_xla's cache
off: torch_xla 2.9 cannot load what it writes, runner/compile_cache.py; expect warm ~ cold there).

Usage: python benchmarks/bench_compile_cache.py [--framework jax] [--device cpu] [--origin numpy]
    [--entries 20] [--seed 0] [--rounds 2] [--jobs 1] [--out benchmarks/results/bench_compile_cache.json]
Prints each arm's median seconds and warm / cold, and writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from census_subset import REPO, checkout, draw, statuses

from portability_data.runner.compile_cache import CACHE_ENV, OFF
from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run


def timed_run(spec: RunSpec, paths: Paths, cache: str, jobs: int) -> tuple[float, str]:
    """Wall seconds of one run with PORTABILITY_COMPILE_CACHE=`cache`, and its run id."""
    os.environ[CACHE_ENV] = cache
    started = time.perf_counter()
    run_id = run(spec, paths, log=lambda message: None, jobs=jobs)
    return time.perf_counter() - started, run_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", default="jax")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--origin", default="numpy")
    parser.add_argument("--entries", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per pair (the census's)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/bench_compile_cache.json")
    args = parser.parse_args()
    wanted = {args.origin: draw(args.framework, args.origin, args.entries, args.seed, args.device)}
    pairs = sum(len(dtypes) for dtypes in wanted[args.origin].values())
    spec = RunSpec(
        framework=args.framework, device=args.device, repeats=1, timeout_s=args.timeout, suite="census"
    )
    seconds: dict[str, list[float]] = {"no_cache": [], "cold": [], "warm": []}
    with tempfile.TemporaryDirectory(prefix="bench-compile-cache-") as scratch:
        paths = Paths.under(checkout(Path(scratch) / "repo", args.framework, wanted))
        timed_run(spec, paths, OFF, args.jobs)  # untimed: the OS's file cache warm for every arm after
        for round_ in range(args.rounds):
            cache = Path(scratch) / f"cache-{round_}"  # fresh each round: cold is cold
            labels = {}
            for arm, setting in (("no_cache", OFF), ("cold", str(cache)), ("warm", str(cache))):
                took, run_id = timed_run(spec, paths, setting, args.jobs)
                seconds[arm].append(took)
                labels[arm] = statuses(paths.results_dir, run_id)
            if not labels["cold"] == labels["warm"] == labels["no_cache"]:
                differ = sorted(k for k in labels["cold"] if labels["cold"][k] != labels["warm"].get(k))
                raise SystemExit(f"round {round_}: the cache changed labels: {differ or 'no_cache arm'}")
            entries = len(list(cache.rglob("*-cache"))) or len([p for p in cache.rglob("*") if p.is_file()])
            took = ", ".join(f"{arm} {values[-1]:.1f} s" for arm, values in seconds.items())
            print(f"round {round_}: {took}; {entries} cache entries; labels equal")
    medians = {arm: statistics.median(values) for arm, values in seconds.items()}
    payload: dict[str, Any] = {
        "framework": args.framework,
        "device": args.device,
        "origin": args.origin,
        "entries": len(wanted[args.origin]),
        "pairs": pairs,
        "seed": args.seed,
        "jobs": args.jobs,
        "rounds": args.rounds,
        "host": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "seconds": seconds,
        "median_s": medians,
        "warm_vs_cold": medians["warm"] / medians["cold"],
        "cold_vs_no_cache": medians["cold"] / medians["no_cache"],
        "labels_equal": True,
    }
    print(
        f"{args.framework} {args.device} census, {pairs} pairs: no cache {medians['no_cache']:.1f} s, "
        f"cold {medians['cold']:.1f} s, warm {medians['warm']:.1f} s "
        f"(warm / cold {payload['warm_vs_cold']:.2f}); labels equal"
    )
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(args.out)


if __name__ == "__main__":
    main()
