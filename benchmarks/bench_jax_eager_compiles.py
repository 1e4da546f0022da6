"""Where the JAX eager census's time goes (issue 20): how much of a pair is XLA compilation?

The study ran JAX with jit disabled (METHOD.md section 5), so the census's eager mode does too:
every primitive a jax.numpy function binds is then compiled by XLA for its own shapes and dtypes
before it runs, once per worker process. This benchmark measures that directly, outside the
harness but doing what the census module does per sample (cases/jax/census/test_numpy.py:
device_put of the generator's arrays, the call twice as `timed` does (warm-up, then the timed
call), the result read back, NumPy's reference on the same host arrays), with JAX's own
monitoring events summed per pair: tracing, lowering to MLIR, and the backend compile
(`/jax/core/compile/*_duration`), and the count of backend compiles.

`--entries` entries are drawn with `--seed` from cases/jax/census/numpy.yaml and every (entry,
dtype) pair of theirs runs in census order in this one process, as a census worker runs its share
(warm: a primitive compiled for an earlier pair is reused); then `--cold` of those pairs run again,
each in a fresh process (cold: what a failure's confirmation pays). Per arm: wall seconds, seconds
in JAX's compile events, their share, compiles per pair; and an estimate for the whole census
(the manifest's entry count x the warm arm's mean entry wall / census.jobs). The estimate is an
extrapolation from the drawn entries, not a bound: a few entries cost most of the census (the
heavy tail a small draw misses), so quote the compile share, which is measured.

Run it on a quiet host. Writes benchmarks/results/bench_jax_eager_compiles.json.

Usage: python benchmarks/bench_jax_eager_compiles.py [--entries 25] [--cold 12] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "cases" / "jax" / "census" / "numpy.yaml"
RESULTS = REPO / "benchmarks" / "results"
COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)


def timed_out_pairs() -> set[str]:
    """Pairs the newest committed JAX eager census recorded as timeouts (gcd's while_loop on edge
    integers runs for hours with jit disabled): left out here, as the census stops them at 60 s."""
    shards = sorted((REPO / "data" / "results" / "portability").glob("jax-cpu-eager-census-*.parquet"))
    if not shards:
        return set()
    rows = pq.read_table(shards[-1], columns=["subtest", "outcome"]).to_pylist()
    return {r["subtest"].split("[", 1)[1].rstrip("]") for r in rows if r["outcome"] == "timeout"}


def draw_pairs(manifest: dict[str, Any], count: int, seed: int) -> list[tuple[str, str]]:
    """Every pair of `count` entries drawn with `seed`, in the census's order (entry, then dtype),
    but the pairs the census timed out on."""
    entries = random.Random(seed).sample(manifest["entries"], min(count, len(manifest["entries"])))
    skipped = timed_out_pairs()
    return sorted((e["entry"], d) for e in entries for d in e["dtypes"] if f"{e['entry']}-{d}" not in skipped)


def measure(pairs: list[tuple[str, str]], manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Each pair run as the census module runs it, jit disabled; wall and compile seconds."""
    import importlib
    import warnings

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import monitoring

    from portability_data.runner.generator import sample

    entries = {e["entry"]: e for e in manifest["entries"]}
    spent = {"compile_s": 0.0, "compiles": 0}

    def on_duration(event: str, duration: float, **_: Any) -> None:
        if event in COMPILE_EVENTS:
            spent["compile_s"] += duration
        if event == COMPILE_EVENTS[-1]:
            spent["compiles"] += 1

    monitoring.register_event_duration_secs_listener(on_duration)

    def resolve(module: Any, name: str) -> Any:  # as cases/jax/census/test_numpy.py resolves names
        head, _, attribute = name.rpartition(".")
        if head:
            module = importlib.import_module(f"{module.__name__}.{head}")
        return getattr(module, attribute)

    device = jax.devices("cpu")[0]
    rows = []
    with jax.disable_jit(), warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for name, dtype in pairs:
            entry = entries[name]
            function, reference = resolve(jnp, name), resolve(np, name)
            spent.update(compile_s=0.0, compiles=0)
            started = time.perf_counter()
            error = None
            for kind in entry["kinds"][dtype]:
                given = sample(name, dtype, kind, entry["arity"])
                try:
                    on_device = [jax.device_put(a, device) for a in given.args]
                    for _ in range(2):  # timed: a warm-up call, then the timed one
                        out = jax.block_until_ready(function(*on_device))
                    jax.tree_util.tree_map(np.asarray, out)
                    host = [a.astype(d.dtype) for a, d in zip(given.args, on_device, strict=True)]
                    reference(*host)
                except Exception as exc:  # a failing sample is data here too: it was paid for
                    error = type(exc).__name__
            wall = time.perf_counter() - started
            rows.append({"pair": f"{name}-{dtype}", "wall_s": wall, "error": error, **spent})
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    wall = sum(r["wall_s"] for r in rows)
    compile_s = sum(r["compile_s"] for r in rows)
    return {
        "pairs": len(rows),
        "wall_s": round(wall, 2),
        "compile_s": round(compile_s, 2),
        "compile_share": round(compile_s / wall, 3) if wall else None,
        "compiles_per_pair": round(sum(r["compiles"] for r in rows) / max(len(rows), 1), 1),
        "mean_pair_s": round(wall / max(len(rows), 1), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=25)
    parser.add_argument("--cold", type=int, default=12, help="pairs also run alone in a fresh process")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--one", nargs=2, metavar=("ENTRY", "DTYPE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    manifest = yaml.safe_load(MANIFEST.read_text())
    if args.one:  # the cold arm's child: one pair in this fresh process
        print(json.dumps(measure([tuple(args.one)], manifest)[0]))
        return
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    jobs = int(params["census"]["jobs"])
    pairs = draw_pairs(manifest, args.entries, args.seed)
    warm = measure(pairs, manifest)
    cold = []
    for name, dtype in random.Random(args.seed + 1).sample(pairs, min(args.cold, len(pairs))):
        done = subprocess.run(
            [sys.executable, __file__, "--one", name, dtype], capture_output=True, text=True, check=True
        )
        cold.append(json.loads(done.stdout.strip().splitlines()[-1]))
    total_pairs = sum(len(e["dtypes"]) for e in manifest["entries"])
    warm_summary = summary(warm)
    census_estimate_s = len(manifest["entries"]) * warm_summary["wall_s"] / args.entries / jobs
    report = {
        "seed": args.seed,
        "entries": args.entries,
        "jax_numpy_pairs_in_manifest": total_pairs,
        "jobs": jobs,
        "warm": warm_summary,
        "cold": summary(cold),
        "census_test_time_estimate_min": round(census_estimate_s / 60, 1),
        "census_compile_estimate_min": round(census_estimate_s * warm_summary["compile_share"] / 60, 1),
        "slowest_warm": sorted(warm, key=lambda r: -r["wall_s"])[:10],
        "rows": {"warm": warm, "cold": cold},
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_jax_eager_compiles.json").write_text(json.dumps(report, indent=1) + "\n")
    w, c = report["warm"], report["cold"]
    print(
        f"warm: {w['pairs']} pairs, {w['wall_s']} s, {w['compile_share']:.0%} in compilation, "
        f"{w['compiles_per_pair']} compiles/pair; cold: {c['pairs']} pairs, {c['mean_pair_s']} s/pair, "
        f"{c['compile_share']:.0%} in compilation; jax.numpy census ({total_pairs} pairs, {jobs} jobs): "
        f"about {report['census_test_time_estimate_min']} min of test time (extrapolated from "
        f"{args.entries} entries), of which {report['census_compile_estimate_min']} min compiling"
    )


if __name__ == "__main__":
    main()
