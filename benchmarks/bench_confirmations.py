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

With `--compare preload` (issue 57) both arms fork, and what differs is what the forking process
preloaded: `before` as before issue 57 (PORTABILITY_FORK_PRELOAD_MORE=0), `after` with the runner's
case modules and the device path's packages (fork_worker.RUNNER_MODULES, PATH_MODULES);
`--settings framework:device:mode ...` takes the failing pairs of the newest
`{framework}-{device}-{mode}-census-*` shard of each setting. The ratio is then before / after,
and every verdict must again be equal.

With `--compare plugin_cache` (issue 57) both arms fork, and what differs is where jax2onnx's
plugin programs come from (runner/compile_cache.py): `off` compiles them in every confirmation
(PORTABILITY_PLUGIN_CACHE=off), `warm` reads them from a plugin cache in the scratch folder, filled
once before the first round by one unmeasured confirmation (its seconds are reported as `cold_fill_s`).
The ratio is off / warm, and every verdict must again be equal. Use it with
`--settings jax:onnxruntime:compiled`.

Run it on a quiet host (or say how loaded it was: the report records the load average). Writes
benchmarks/results/bench_confirmations.json (bench_confirmations_xla.json for xla,
bench_confirmations_preload.json for --compare preload, bench_confirmations_plugin_cache.json for
--compare plugin_cache) and prints a summary.

Usage: python benchmarks/bench_confirmations.py [--pairs 12] [--seed 0] [--rounds 2]
       [--frameworks torch jax tensorflow] [--device cpu|xla] [--mode eager|compiled]
       [--compare method|preload|plugin_cache] [--settings jax:onnxruntime:compiled ...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from portability_data.runner.compile_cache import PLUGIN_CACHE_ENV
from portability_data.runner.confirmation import AloneRunner
from portability_data.runner.fork_worker import PRELOAD_MORE_ENV as PRELOAD_ENV
from portability_data.runner.spec import Paths, RunSpec

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
FAILING = ("failed", "error", "crashed")


def failing_pairs(
    framework: str, device: str, count: int, seed: int, mode: str = "eager"
) -> tuple[str, list[str]]:
    """(run id, test ids) of up to `count` failing pairs of the newest census shard of the setting."""
    shards = sorted(
        (REPO / "data" / "results" / "portability").glob(f"{framework}-{device}-{mode}-census-*.parquet")
    )
    if not shards:
        return "", []
    newest = max(shards, key=lambda path: path.stem.split("-census-")[1])
    rows = pq.read_table(newest, columns=["test_id", "outcome"]).to_pylist()
    failing = sorted({r["test_id"] for r in rows if r["outcome"] in FAILING})
    return newest.stem, sorted(random.Random(seed).sample(failing, min(count, len(failing))))


PRELOAD_ARMS = {"before": "0", "after": "1"}  # PORTABILITY_FORK_PRELOAD_MORE per --compare preload arm


def one_arm(
    framework: str, device: str, method: str, test_ids: list[str], scratch: Path, mode: str = "eager"
) -> tuple[float, dict[str, list], list[float], list[str]]:
    """(wall seconds, test id -> [outcome, error type], each pair's seconds, what the forking
    process preloaded) of every pair confirmed by `method`."""
    paths = Paths.under(REPO)
    spec = RunSpec(framework=framework, device=device, mode=mode, repeats=1, timeout_s=300, suite="census")
    alone = AloneRunner(spec, paths, scratch, scratch / f"{framework}-{device}-{method}.log", method)
    verdicts, each, preloaded = {}, [], []
    started = time.perf_counter()
    try:
        for test_id in test_ids:
            begun = time.perf_counter()
            ran = alone.run(test_id)
            each.append(time.perf_counter() - begun)
            if ran["worker"] != method:
                raise SystemExit(
                    f"{framework}: asked for {method}, ran by {ran['worker']} ({alone.fork_refused})"
                )
            verdicts[test_id] = [ran["outcome"], ran["error_type"]]
            preloaded = ran["preloaded"]
    finally:
        alone.close()
    return time.perf_counter() - started, verdicts, each, preloaded


def run_arm(
    arm: str, compare: str, setting: tuple[str, str, str], test_ids: list[str], scratch: Path
) -> tuple:
    """One arm: spawn or fork (--compare method), or fork without or with the device path's
    packages preloaded (--compare preload: PORTABILITY_FORK_PRELOAD_MORE, read by fork_worker)."""
    framework, device, mode = setting
    if compare == "method":
        return one_arm(framework, device, arm, test_ids, scratch, mode)
    variable, value = (
        (PRELOAD_ENV, PRELOAD_ARMS[arm])
        if compare == "preload"
        else (PLUGIN_CACHE_ENV, "off" if arm == "off" else str(scratch / "plugin-cache"))
    )
    os.environ[variable] = value
    try:
        return one_arm(framework, device, "fork", test_ids, scratch, mode)
    finally:
        os.environ.pop(variable, None)


ARMS = {"method": ("spawn", "fork"), "preload": ("before", "after"), "plugin_cache": ("off", "warm")}


def measure(
    setting: tuple[str, str, str], compare: str, test_ids: list[str], rounds: int, scratch: Path
) -> dict:
    """Both arms over `rounds` rounds, alternating which goes first; walls, verdicts, ratio."""
    arms = ARMS[compare]
    cold_fill_s = None
    if compare == "plugin_cache":  # the warm arm's cache, filled by one confirmation not measured
        cold_fill_s = run_arm("warm", compare, setting, test_ids[:1], scratch)[0]
    walls: dict[str, list[float]] = {arm: [] for arm in arms}
    pair_s: dict[str, list[list[float]]] = {arm: [] for arm in arms}
    seen: dict[str, dict] = {}
    preloaded: dict[str, list[str]] = {}
    for round_no in range(rounds):
        for arm in arms if round_no % 2 == 0 else arms[::-1]:
            wall, verdicts, each, preloaded[arm] = run_arm(arm, compare, setting, test_ids, scratch)
            walls[arm].append(wall)
            pair_s[arm].append(each)
            if arm in seen and seen[arm] != verdicts:
                raise SystemExit(f"{setting}: {arm} gave other verdicts in round {round_no}")
            seen[arm] = verdicts
    first, second = arms
    differing = {t: [seen[first][t], seen[second][t]] for t in test_ids if seen[first][t] != seen[second][t]}
    best = {arm: min(walls[arm]) for arm in arms}
    return {
        "test_ids": test_ids,
        "wall_s": walls,
        "pair_s": pair_s,
        "per_pair_s": {arm: best[arm] / len(test_ids) for arm in arms},
        # without the forking process's own start (the first pair of each arm pays it)
        "per_pair_after_first_s": {
            arm: min(statistics.median(each[1:]) for each in pair_s[arm]) if len(test_ids) > 1 else None
            for arm in arms
        },
        "ratio": best[first] / best[second],
        "verdicts_equal": not differing,
        "differing": differing,
        "outcomes": seen[second],
        "preloaded": preloaded,
        "cold_fill_s": cold_fill_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--frameworks", nargs="+", default=["torch", "jax", "tensorflow"])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mode", choices=["eager", "compiled"], default="eager")
    parser.add_argument("--settings", nargs="+", default=None, metavar="FRAMEWORK:DEVICE:MODE")
    parser.add_argument("--compare", choices=sorted(ARMS), default="method")
    args = parser.parse_args()
    if args.device == "xla" and args.frameworks != ["torch"]:
        parser.error("--device xla measures torch only: add --frameworks torch")
    settings = [tuple(s.split(":")) for s in args.settings or []] or [
        (framework, args.device, args.mode) for framework in args.frameworks
    ]
    report: dict = {
        "pairs": args.pairs, "seed": args.seed, "rounds": args.rounds, "compare": args.compare,
        "device": args.device, "host": f"{os.cpu_count()} cores, load average {os.getloadavg()}",
        "frameworks": {},
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-confirm-") as name:
        for setting in settings:
            framework, device, mode = setting
            run_id, test_ids = failing_pairs(framework, device, args.pairs, args.seed, mode)
            if not test_ids:
                print(f"{framework} {device} {mode}: no census shard with failing pairs; skipped")
                continue
            result = {"shard": run_id, **measure(setting, args.compare, test_ids, args.rounds, Path(name))}
            key = framework if args.compare == "method" and not args.settings else ":".join(setting)
            report["frameworks"][key] = result
            first, second = result["per_pair_s"]
            print(
                f"{key}: {len(test_ids)} failing pairs of {run_id}; per pair "
                f"{result['per_pair_s'][first]:.2f} s {first}, {result['per_pair_s'][second]:.2f} s "
                f"{second}: {result['ratio']:.2f}x; verdicts equal: {result['verdicts_equal']}",
                flush=True,
            )
            write(report, args.compare, args.device)
    write(report, args.compare, args.device)


def write(report: dict, compare: str, device: str) -> None:
    """The report so far (after each setting: a long run interrupted keeps what it measured)."""
    report["load_average_after"] = os.getloadavg()
    RESULTS.mkdir(exist_ok=True)
    if compare in ("preload", "plugin_cache"):
        name = f"bench_confirmations_{compare}.json"
    else:
        name = "bench_confirmations.json" if device == "cpu" else f"bench_confirmations_{device}.json"
    (RESULTS / name).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
