"""The census against its floor (issue 57): the same (entry, dtype, sample) set run as bare calls
plus the oracle computation in one process (the floor: what any correct census must do) against
the real runner (`portability run --suite census`) with one worker and with two, in the same run
on the same host, on the numpy origin of JAX or torch (function vs NumPy on the generator's
inputs).

The floor, in one fresh interpreter (its start and the framework's import counted, as every
census pays them once): per pair and per input kind of the manifest, the generator's sample, the
arrays put on the device, the function called once (JAX with jit disabled, as the eager census
runs it), the result read back, NumPy on the same host arrays, and the two compared (NaN equal
NaN). The runner adds what the floor leaves out, and each is a line of the difference: a worker
process and pytest collection per worker, the harness's warm-up call before the timed one, the
device oracle's and dtype ledger's bookkeeping, the journal (one fsync'd line per row), failures
confirmed alone in a fresh worker, and the shard and runs row at the end. Pairs whose bare call
kills a process (SIGFPE) are left out of every arm and named in the JSON: the floor's one process
cannot survive them. Target: the runner with one worker within 1.5x of the floor. Compile caches
are off in every arm (the floor has none).

Usage: python benchmarks/bench_census_floor.py [--framework jax] [--entries 25] [--seed 0]
    [--rounds 2] [--out benchmarks/results/bench_census_floor_<framework>.json]
Prints each arm's median seconds and the ratios, and writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from census_subset import REPO, checkout, draw, statuses

ORIGIN = "numpy"


def floor(framework: str, pairs: dict[str, list[str]], root: Path) -> dict[str, int]:
    """The bare work of a census of these pairs in this process (the manifest as the checkout at
    `root` cuts it, as the runner's census module reads it): samples, and samples that raised or
    were not close."""
    import importlib
    import warnings

    import numpy as np
    import yaml

    from portability_data.runner.generator import sample

    cut = root / "cases" / framework / "census" / f"{ORIGIN}.yaml"
    entries = {e["entry"]: e for e in yaml.safe_load(cut.read_text())["entries"]}

    def resolve(module: Any, name: str) -> Any:
        head, _, attribute = name.rpartition(".")
        if head:
            module = importlib.import_module(f"{module.__name__}.{head}")
        return getattr(module, attribute)

    if framework == "jax":
        import jax
        import jax.numpy as jnp

        device = jax.devices("cpu")[0]
        to_device = lambda array: jax.device_put(array, device)  # noqa: E731
        to_host = lambda value: jax.tree_util.tree_map(np.asarray, value)  # noqa: E731
        function_of = lambda name: resolve(jnp, name)  # noqa: E731
        eager: Any = jax.disable_jit()
    else:
        import contextlib

        import torch

        to_device = torch.as_tensor
        to_host = lambda value: value.numpy() if isinstance(value, torch.Tensor) else value  # noqa: E731
        function_of = lambda name: resolve(torch, entries[name]["function"].removeprefix("torch."))  # noqa: E731
        eager = contextlib.nullcontext()
    counts = {"samples": 0, "failed": 0}
    with eager, warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, dtypes in pairs.items():
            entry, reference = entries[name], resolve(np, name)
            for dtype in dtypes:
                for kind in entry["kinds"][dtype]:
                    given = sample(name, dtype, kind, entry["arity"])
                    counts["samples"] += 1
                    try:
                        actual = to_host(function_of(name)(*[to_device(a) for a in given.args]))
                        expected = reference(*[a.copy() for a in given.args])
                        same = np.allclose(
                            np.asarray(actual, dtype=complex),
                            np.asarray(expected, dtype=complex),
                            rtol=1e-3,
                            atol=1e-5,
                            equal_nan=True,
                        )
                        counts["failed"] += not same
                    except Exception:  # a failing sample is paid for too
                        counts["failed"] += 1
    return counts


def timed_floor(framework: str, pairs: dict[str, list[str]], root: Path) -> tuple[float, dict[str, int]]:
    """Wall seconds of `floor` in a fresh interpreter, and its counts."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--floor-of",
            json.dumps({"framework": framework, "pairs": pairs, "root": str(root)}),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return time.perf_counter() - started, json.loads(done.stdout.strip().splitlines()[-1])


def crashing(framework: str, pairs: dict[str, list[str]], root: Path) -> dict[str, list[str]]:
    """Pairs whose bare calls kill a process (a torch integer op on edge values raises SIGFPE): the
    runner's workers survive them, the floor's one process cannot, so every arm leaves them out.
    Found before any timing, each entry in its own fresh interpreter, then each dtype of an entry
    that died."""

    def dies(subset: dict[str, list[str]]) -> bool:
        asked = json.dumps({"framework": framework, "pairs": subset, "root": str(root)})
        done = subprocess.run([sys.executable, __file__, "--floor-of", asked], capture_output=True)
        return done.returncode < 0

    found: dict[str, list[str]] = {}
    for entry, dtypes in pairs.items():
        if dies({entry: dtypes}):
            found[entry] = [dtype for dtype in dtypes if dies({entry: [dtype]})]
    return found


def timed_runner(framework: str, root: Path, jobs: int, timeout: float) -> tuple[float, str]:
    """Wall seconds of the real runner on the checkout at `root`, and the run id."""
    from portability_data.runner.compile_cache import CACHE_ENV, OFF
    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.supervisor import run

    os.environ[CACHE_ENV] = OFF
    spec = RunSpec(framework=framework, device="cpu", repeats=1, timeout_s=timeout, suite="census")
    started = time.perf_counter()
    run_id = run(spec, Paths.under(root), log=lambda message: None, jobs=jobs)
    return time.perf_counter() - started, run_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=["jax", "torch"], default="jax")
    parser.add_argument("--entries", type=int, default=25)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per pair (the census's)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--floor-of", help=argparse.SUPPRESS)  # the floor's own process
    args = parser.parse_args()
    if args.floor_of:
        asked = json.loads(args.floor_of)
        print(json.dumps(floor(asked["framework"], asked["pairs"], Path(asked["root"]))))
        return
    pairs = draw(args.framework, ORIGIN, args.entries, args.seed)
    seconds: dict[str, list[float]] = {"floor": [], "runner_jobs1": [], "runner_jobs2": []}
    with tempfile.TemporaryDirectory(prefix="bench-census-floor-") as scratch:
        probe_root = checkout(Path(scratch) / "probe", args.framework, {ORIGIN: pairs})
        left_out = crashing(args.framework, pairs, probe_root)
        pairs = {
            entry: kept
            for entry, dtypes in pairs.items()
            if (kept := [d for d in dtypes if d not in left_out.get(entry, [])])
        }
        n_pairs = sum(len(dtypes) for dtypes in pairs.values())
        root = checkout(Path(scratch) / "repo", args.framework, {ORIGIN: pairs})
        for round_ in range(args.rounds):  # alternating arms, so that load falls on each
            took, counts = timed_floor(args.framework, pairs, root)
            seconds["floor"].append(took)
            labels = []
            for jobs in (1, 2):
                took, run_id = timed_runner(args.framework, root, jobs, args.timeout)
                seconds[f"runner_jobs{jobs}"].append(took)
                labels.append(statuses(root / "data" / "results", run_id))
            if labels[0] != labels[1]:
                raise SystemExit(f"round {round_}: --jobs 2 gave other labels than --jobs 1")
            print(f"round {round_}: " + ", ".join(f"{a} {s[-1]:.1f} s" for a, s in seconds.items()))
    medians = {arm: statistics.median(values) for arm, values in seconds.items()}
    outcomes = [label[0] for label in labels[0].values()]
    payload: dict[str, Any] = {
        "framework": args.framework,
        "origin": ORIGIN,
        "entries": len(pairs),
        "pairs": n_pairs,
        "samples": counts["samples"],
        "floor_samples_raised_or_not_close": counts["failed"],  # a plain allclose: cost, not a verdict
        "runner_failed_pairs": sum(o != "passed" for o in outcomes),
        "left_out_killing_the_process": left_out,
        "seed": args.seed,
        "rounds": args.rounds,
        "host": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "seconds": seconds,
        "median_s": medians,
        "runner_jobs1_vs_floor": medians["runner_jobs1"] / medians["floor"],
        "runner_jobs2_vs_floor": medians["runner_jobs2"] / medians["floor"],
        "jobs1_vs_jobs2": medians["runner_jobs1"] / medians["runner_jobs2"],
    }
    print(
        f"{args.framework} {ORIGIN}, {n_pairs} pairs, {counts['samples']} samples: floor "
        f"{medians['floor']:.1f} s, runner --jobs 1 {medians['runner_jobs1']:.1f} s "
        f"({payload['runner_jobs1_vs_floor']:.2f}x), --jobs 2 {medians['runner_jobs2']:.1f} s "
        f"({payload['runner_jobs2_vs_floor']:.2f}x); jobs 1 / jobs 2 {payload['jobs1_vs_jobs2']:.2f}"
    )
    out = args.out or REPO / "benchmarks" / "results" / f"bench_census_floor_{args.framework}.json"
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(out)


if __name__ == "__main__":
    main()
