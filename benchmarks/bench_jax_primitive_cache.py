"""JAX's persistent compile cache on eager primitive dispatch alone (issue 57): why a warm census
re-run is not 25% of a cold one (bench_compile_cache.py measured 0.76 on a 20-entry chunk).

The JAX census runs eagerly, as the study ran JAX: every primitive call on a new (shape, dtype) is
lowered to a StableHLO module and compiled by XLA. A persistent cache saves the compile on a re-run,
but not the lowering (JAX must lower a module to compute its cache key) nor reading the executable
back. This benchmark isolates that cost from the rest of a census run (worker start, sample
generation, the oracles, confirmations): the same set of primitive calls, each (op, shape, dtype)
new to the process, in a fresh process per arm: no persistent cache, an empty one (cold) and the
one the cold arm filled (warm), each round on a fresh cache folder. A profiled warm and cold child
then splits where their time goes: lowering to MLIR, XLA compiling, reading the cache, the rest.

Usage: python benchmarks/bench_jax_primitive_cache.py [--ops 8] [--shapes 30] [--rounds 3]
    [--out benchmarks/results/bench_jax_primitive_cache.json]
Prints each arm's median seconds, warm / cold, and the profiled split; writes the JSON.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# jax.numpy ufuncs each lowering to one or a few primitives, with float32 and int32 operands
UNARY = ("sin", "cos", "exp", "tanh", "abs", "sqrt", "log1p", "negative", "floor", "sign", "square", "cbrt")
# Where a profiled child's time goes, by the JAX function that does it (cumulative seconds):
# lowering a jaxpr to an MLIR module (the cache key needs it), the compile-or-read step, and within
# it the persistent cache's read.
SPLIT = {
    "lowering": ("interpreters/mlir.py", "lower_jaxpr_to_module"),
    "compile_or_read": ("_src/compiler.py", "compile_or_get_cached"),
    "cache_read": ("_src/compiler.py", "_cache_read"),
}


def calls(n_ops: int, n_shapes: int) -> list[tuple[str, tuple[int, ...], str]]:
    """The (op, shape, dtype) calls of one arm: each new to a fresh process."""
    return [
        (op, (n,), dtype)
        for op in UNARY[:n_ops]
        for n in range(1, n_shapes + 1)
        for dtype in ("float32", "int32")
    ]


def child(arm: str, cache: str, n_ops: int, n_shapes: int, profile: bool) -> dict[str, Any]:
    """Run the calls eagerly in this process with the arm's cache setting; seconds (and the split)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    if arm == "no_cache":
        jax.config.update("jax_enable_compilation_cache", False)
    else:
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    todo = [(getattr(jnp, op), np.ones(shape, dtype)) for op, shape, dtype in calls(n_ops, n_shapes)]
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    with jax.disable_jit():
        if profiler:
            profiler.enable()
        for function, operand in todo:
            function(operand).block_until_ready()
        if profiler:
            profiler.disable()
    seconds = time.perf_counter() - started
    result: dict[str, Any] = {"arm": arm, "seconds": seconds, "calls": len(todo)}
    if profiler:
        stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        split = {name: 0.0 for name in SPLIT}
        for (filename, _, function), (_, _, _, cumulative, _) in stats.items():
            for name, (where, called) in SPLIT.items():
                if function == called and filename.endswith(where):
                    split[name] = max(split[name], cumulative)
        split["xla_compile"] = max(0.0, split["compile_or_read"] - split["cache_read"])
        split["rest"] = max(0.0, seconds - split["lowering"] - split["compile_or_read"])
        result["split_s"] = split
    return result


def in_fresh_process(
    arm: str, cache: Path, args: argparse.Namespace, profile: bool = False
) -> dict[str, Any]:
    command = [
        sys.executable, __file__, "--child", arm, "--cache", str(cache),
        "--ops", str(args.ops), "--shapes", str(args.shapes), *(["--profile"] if profile else []),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False, env={**os.environ})
    if done.returncode != 0:
        raise SystemExit(f"the {arm} child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=8)
    parser.add_argument("--shapes", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=REPO / "benchmarks/results/bench_jax_primitive_cache.json"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.cache, args.ops, args.shapes, args.profile)))
        return
    seconds: dict[str, list[float]] = {"no_cache": [], "cold": [], "warm": []}
    with tempfile.TemporaryDirectory(prefix="bench-jax-primitive-cache-") as scratch:
        n_calls = 0
        for round_ in range(args.rounds):
            cache = Path(scratch) / f"cache-{round_}"  # fresh each round: cold is cold
            for arm in seconds:
                ran = in_fresh_process(arm, cache, args)
                seconds[arm].append(ran["seconds"])
                n_calls = ran["calls"]
            print(
                f"round {round_}: "
                + ", ".join(f"{arm} {values[-1]:.2f} s" for arm, values in seconds.items())
            )
        profiled_cache = Path(scratch) / "cache-profiled"
        split = {arm: in_fresh_process(arm, profiled_cache, args, profile=True) for arm in ("cold", "warm")}
    medians = {arm: statistics.median(values) for arm, values in seconds.items()}
    payload: dict[str, Any] = {
        "calls": n_calls,
        "ops": list(UNARY[: args.ops]),
        "shapes": args.shapes,
        "dtypes": ["float32", "int32"],
        "rounds": args.rounds,
        "host": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "seconds": seconds,
        "median_s": medians,
        "warm_vs_cold": medians["warm"] / medians["cold"],
        "cold_vs_no_cache": medians["cold"] / medians["no_cache"],
        "ms_per_call": {arm: 1000 * value / n_calls for arm, value in medians.items()},
        "profiled_split_s": {arm: ran["split_s"] for arm, ran in split.items()},
        "profiled_s": {arm: ran["seconds"] for arm, ran in split.items()},
    }
    print(
        f"{n_calls} eager primitive calls, each new to its process: no cache {medians['no_cache']:.2f} s, "
        f"cold {medians['cold']:.2f} s, warm {medians['warm']:.2f} s "
        f"(warm / cold {payload['warm_vs_cold']:.2f})"
    )
    for arm, ran in split.items():
        print(
            f"profiled {arm} ({ran['seconds']:.2f} s): "
            + ", ".join(f"{k} {v:.2f} s" for k, v in ran["split_s"].items())
        )
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(args.out)


if __name__ == "__main__":
    main()
