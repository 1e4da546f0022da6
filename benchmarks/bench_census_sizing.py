"""Census sizing (issue 19, the census): what running every OpInfo entry on its own samples costs.

Measured in one process, on the entries of ``op_db`` (torch's OpInfo database), CPU only:
(a) eager census: per entry, the dtypes to try are the union of ``op.supported_dtypes(dt)`` over
    device types cpu and cuda (cuda's are readable without a GPU); each dtype is marked declared
    supported on cpu or not. Per (entry, dtype), after ``torch.manual_seed(0)``: the time to
    generate the samples (``list(op.sample_inputs("cpu", dtype, requires_grad=False))``) and their
    number, the time to run the op eagerly on every sample (``op(sample.input, *sample.args,
    **sample.kwargs)``, exceptions caught per sample, their types counted) and, where the entry has
    a NumPy reference (``op.ref``), the time to compute it on every sample (``sample.numpy()``,
    nothing judged). An entry whose generation for one dtype takes more than ``--skip-after``
    seconds (20) is skipped from there on and recorded;
(b) the fresh-worker floor: ``python -c "import torch; from torch.testing._internal.
    common_methods_invocations import op_db"`` in a subprocess, median of 3, measured in the same
    run; the projected cost of confirming every failing (entry, dtype) alone in a fresh worker is
    that floor (plus the pair's own time) times their number;
(c) compiled subset: ``--compiled`` entries (20) drawn at random among those with float32,
    float32 only: ``torch.compile(fn, fullgraph=True)`` + the first call, and the entry's samples
    (the first ``--compiled-max-samples``, 100) through that one compiled function, against eager
    on the same samples, ``torch._dynamo.reset()`` between entries. Each new shape, rank or constant
    argument is a recompile; dynamo's default limit (8) would make fullgraph fail hard past it, so
    the limit is raised (``--recompile-limit``, 1000) and the graphs compiled are counted.
    Inductor's on-disk cache makes a second run's compiles far cheaper: for a cold figure, run
    with ``TORCHINDUCTOR_CACHE_DIR`` set to an empty folder (recorded in the results).

Entries are taken in an order shuffled by ``--seed``; ``--limit N`` keeps the first N, and
``--budget S`` stops the eager census after S seconds (the entries done are then a random subset;
the totals are also given scaled up to all of op_db). A pair "fails" when its generation raises or
at least one sample raises; "declared unsupported, fails" is expected, "declared supported, fails"
and "declared unsupported, works" are the census's findings.

Usage: python benchmarks/bench_census_sizing.py [--limit N] [--seed 0] [--budget S] [--compiled 20]
    [--skip-after 20] [--out JSON]
Prints a summary and writes benchmarks/results/census_sizing.json (or --out). Timings are wall
clock (``time.perf_counter``), one measurement each: a sizing, not a comparison of arms, so the
only ratio claimed (compiled over eager) is measured on the same samples in the same run.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"

import torch  # noqa: E402
from torch._dynamo.utils import counters  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

FLOOR_CODE = "import torch; from torch.testing._internal.common_methods_invocations import op_db"


def entry_id(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def exc_name(exc: BaseException) -> str:
    return type(exc).__qualname__


def exc_message(exc: BaseException) -> str:
    """A message shape: first line, numbers and quoted names blanked, so like failures group."""
    line = (str(exc).strip().splitlines() or [""])[0]
    line = re.sub(r"'[^']*'|\"[^\"]*\"", "'_'", line)
    return f"{exc_name(exc)}: {re.sub(r'[0-9]+', 'N', line)[:100]}"


def fresh_worker_floor(rounds: int = 3) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", FLOOR_CODE], check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def run_pair(op, dtype: torch.dtype, supported_cpu: bool, skip_after: float) -> dict:
    row: dict = {"dtype": dtype_name(dtype), "declared_cpu": supported_cpu}
    torch.manual_seed(0)
    start = time.perf_counter()
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
    except Exception as exc:
        row["gen_s"] = time.perf_counter() - start
        row["gen_error"] = exc_name(exc)
        row["gen_message"] = exc_message(exc)
        row.update(samples=0, exec_s=0.0, failing=0, fails=True)
        return row
    row["gen_s"] = gen_s = time.perf_counter() - start
    row["samples"] = len(samples)
    if gen_s > skip_after:
        row.update(exec_s=0.0, failing=0, fails=False, skipped=True)
        return row
    errors: collections.Counter[str] = collections.Counter()
    messages: collections.Counter[str] = collections.Counter()
    start = time.perf_counter()
    for sample in samples:
        try:
            op(sample.input, *sample.args, **sample.kwargs)
        except Exception as exc:
            errors[exc_name(exc)] += 1
            messages[exc_message(exc)] += 1
    row["exec_s"] = time.perf_counter() - start
    row["failing"] = sum(errors.values())
    row["fails"] = row["failing"] > 0
    if errors:
        row["errors"] = dict(errors)
        row["messages"] = dict(messages)
    if op.ref is not None:
        ref_errors: collections.Counter[str] = collections.Counter()
        start = time.perf_counter()
        for sample in samples:
            try:
                n_input, n_args, n_kwargs = sample.numpy()
                op.ref(n_input, *n_args, **n_kwargs)
            except Exception as exc:
                ref_errors[exc_name(exc)] += 1
        row["ref_s"] = time.perf_counter() - start
        if ref_errors:
            row["ref_errors"] = dict(ref_errors)
    return row


def census(ops: list, skip_after: float, budget: float | None) -> tuple[list[dict], bool]:
    entries = []
    start = time.perf_counter()
    for i, op in enumerate(ops):
        if budget is not None and time.perf_counter() - start > budget:
            return entries, True
        cpu = set(op.supported_dtypes("cpu"))
        dtypes = sorted(cpu | set(op.supported_dtypes("cuda")), key=str)
        entry: dict = {"entry": entry_id(op), "has_ref": op.ref is not None, "dtypes": len(dtypes)}
        entry["declared_cpu"] = sum(d in cpu for d in dtypes)
        entry["not_declared_cpu"] = len(dtypes) - entry["declared_cpu"]
        pairs = []
        t0 = time.perf_counter()
        for dtype in dtypes:
            row = run_pair(op, dtype, dtype in cpu, skip_after)
            pairs.append(row)
            if row.get("skipped"):
                entry["skipped"] = f"generation for {row['dtype']} took {row['gen_s']:.1f} s"
                break
        entry["pairs"] = pairs
        entry["wall_s"] = time.perf_counter() - t0
        entries.append(entry)
        failing = sum(p["fails"] for p in pairs)
        print(
            f"[{i + 1}/{len(ops)} {time.perf_counter() - start:7.1f}s] {entry['entry']}: "
            f"{len(pairs)} dtypes, {sum(p['samples'] for p in pairs)} samples, {failing} failing, "
            f"{entry['wall_s']:.2f}s",
            file=sys.stderr,
            flush=True,
        )
    return entries, False


def compiled_subset(ops: list, count: int, seed: int, max_samples: int, recompile_limit: int) -> list[dict]:
    candidates = [
        op
        for op in ops
        if torch.float32 in set(op.supported_dtypes("cpu")) | set(op.supported_dtypes("cuda"))
    ]
    chosen = random.Random(seed).sample(candidates, min(count, len(candidates)))
    # one compiled function serves an entry's samples; each new shape, rank or constant kwarg is a
    # recompile, and past the limit fullgraph=True fails hard (FailOnRecompileLimitHit)
    torch._dynamo.config.recompile_limit = recompile_limit
    torch._dynamo.config.accumulated_recompile_limit = max(recompile_limit, 256)
    rows = []
    for op in chosen:
        torch._dynamo.reset()
        torch.manual_seed(0)
        samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=False))
        row: dict = {"entry": entry_id(op), "samples_generated": len(samples)}
        samples = samples[:max_samples] if max_samples else samples
        row["samples"] = len(samples)
        eager_fail = 0
        start = time.perf_counter()
        for sample in samples:
            try:
                op(sample.input, *sample.args, **sample.kwargs)
            except Exception:
                eager_fail += 1
        row["eager_s"] = time.perf_counter() - start
        row["eager_failing"] = eager_fail

        def fn(x, *args, _op=op.op, **kwargs):
            return _op(x, *args, **kwargs)

        counters.clear()
        compiled_fn = torch.compile(fn, fullgraph=True)
        errors: collections.Counter[str] = collections.Counter()
        messages: collections.Counter[str] = collections.Counter()
        per_sample = []
        start = time.perf_counter()
        for sample in samples:
            t0 = time.perf_counter()
            try:
                compiled_fn(sample.input, *sample.args, **sample.kwargs)
            except Exception as exc:
                errors[exc_name(exc)] += 1
                messages[exc_message(exc)] += 1
            per_sample.append(time.perf_counter() - t0)
        row["compiled_s"] = time.perf_counter() - start
        row["compile_first_call_s"] = per_sample[0] if per_sample else 0.0
        row["compiled_max_call_s"] = max(per_sample, default=0.0)
        row["compiled_failing"] = sum(errors.values())
        row["graphs"] = counters["stats"].get("unique_graphs", 0)
        if errors:
            row["compiled_errors"] = dict(errors)
            row["compiled_messages"] = dict(messages)
        rows.append(row)
        print(
            f"[compiled] {row['entry']}: {len(samples)} samples, eager {row['eager_s']:.3f}s, "
            f"compiled {row['compiled_s']:.2f}s (first call {row['compile_first_call_s']:.2f}s), "
            f"{row['compiled_failing']} failing, {row['graphs']} graphs",
            file=sys.stderr,
            flush=True,
        )
    torch._dynamo.reset()
    return rows


def summarise(entries, stopped, floor, compiled, total_entries, wall_s) -> dict:
    pairs = [p for e in entries for p in e["pairs"]]
    gen = sum(p["gen_s"] for p in pairs)
    exe = sum(p["exec_s"] for p in pairs)
    ref = sum(p.get("ref_s", 0.0) for p in pairs)
    errors: collections.Counter[str] = collections.Counter()
    messages: collections.Counter[str] = collections.Counter()
    for p in pairs:
        errors.update(p.get("errors", {}))
        messages.update(p.get("messages", {}))
        if "gen_error" in p:
            errors[f"{p['gen_error']} (generation)"] += 1
            messages[f"(generation) {p['gen_message']}"] += 1
    ran = [p for p in pairs if not p.get("skipped")]
    classes = {
        "declared_supported_works": sum(p["declared_cpu"] and not p["fails"] for p in ran),
        "declared_supported_fails": sum(p["declared_cpu"] and p["fails"] for p in ran),
        "declared_unsupported_fails": sum(not p["declared_cpu"] and p["fails"] for p in ran),
        "declared_unsupported_works": sum(
            not p["declared_cpu"] and not p["fails"] and p["samples"] > 0 for p in ran
        ),
        "declared_unsupported_no_samples": sum(
            not p["declared_cpu"] and not p["fails"] and p["samples"] == 0 for p in ran
        ),
    }
    failing_pairs = [p for p in ran if p["fails"]]
    findings = [p for p in ran if p["declared_cpu"] == p["fails"] and (p["fails"] or p["samples"] > 0)]
    floor_s = statistics.median(floor)
    scale = total_entries / max(len(entries), 1)
    samples = sum(p["samples"] for p in pairs)
    failing_samples = sum(p["failing"] for p in ran)

    def confirm(rows):
        own = sum(p["gen_s"] + p["exec_s"] for p in rows)
        floor_only = len(rows) * floor_s
        return {"pairs": len(rows), "floor_only_s": floor_only, "with_own_time_s": floor_only + own}

    summary = {
        "entries_in_op_db": total_entries,
        "entries_measured": len(entries),
        "stopped_by_budget": stopped,
        "entries_skipped_slow_generation": {e["entry"]: e["skipped"] for e in entries if "skipped" in e},
        "entries_with_ref": sum(e["has_ref"] for e in entries),
        "pairs": len(pairs),
        "pairs_declared_cpu": sum(p["declared_cpu"] for p in pairs),
        "pairs_not_declared_cpu": sum(not p["declared_cpu"] for p in pairs),
        "samples": samples,
        "samples_failing": failing_samples,
        "pairs_generation_raised": sum("gen_error" in p for p in pairs),
        "wall_s": {
            "generation": gen,
            "execution": exe,
            "reference": ref,
            "total_census": sum(e["wall_s"] for e in entries),
            "whole_run": wall_s,
        },
        "pairs_by_class": classes,
        "pairs_failing": len(failing_pairs),
        "findings": len(findings),
        "top_exception_types": dict(errors.most_common(12)),
        "top_exception_messages": dict(messages.most_common(15)),
        "slowest_entries_s": {
            e["entry"]: round(e["wall_s"], 2) for e in sorted(entries, key=lambda e: -e["wall_s"])[:10]
        },
        "fresh_worker_floor_s": {"runs": floor, "median": floor_s},
        "confirm_every_failing_pair": confirm(failing_pairs),
        "confirm_findings_only": confirm(findings),
        "confirm_every_failing_sample_floor_only_s": failing_samples * floor_s,
        "projected_all_op_db": {
            "scale": scale,
            "pairs": len(pairs) * scale,
            "samples": samples * scale,
            "census_s": sum(e["wall_s"] for e in entries) * scale,
            "pairs_failing": len(failing_pairs) * scale,
            "confirm_every_failing_pair_s": len(failing_pairs) * scale * floor_s,
            "confirm_findings_only_s": len(findings) * scale * floor_s,
        },
    }
    if compiled:
        eager = sum(r["eager_s"] for r in compiled)
        comp = sum(r["compiled_s"] for r in compiled)
        firsts = [r["compile_first_call_s"] for r in compiled]
        summary["compiled_subset"] = {
            "entries": len(compiled),
            "samples": sum(r["samples"] for r in compiled),
            "eager_s": eager,
            "compiled_s": comp,
            "compiled_over_eager": comp / eager if eager else None,
            "compile_first_call_s": {
                "median": statistics.median(firsts),
                "max": max(firsts),
                "mean": statistics.mean(firsts),
            },
            "compiled_s_per_entry_mean": comp / len(compiled),
            "compiled_s_per_sample": comp / max(sum(r["samples"] for r in compiled), 1),
            "graphs": sum(r["graphs"] for r in compiled),
            "samples_failing_eager": sum(r["eager_failing"] for r in compiled),
            "samples_failing_compiled": sum(r["compiled_failing"] for r in compiled),
            "projected_float32_all_op_db_s": comp / len(compiled) * total_entries,
            "projected_all_census_samples_s": comp
            / max(sum(r["samples"] for r in compiled), 1)
            * samples
            * scale,
        }
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, help="entries to measure (default: all of op_db)")
    parser.add_argument("--seed", type=int, default=0, help="order of the entries (and compiled draw)")
    parser.add_argument("--budget", type=float, help="stop the eager census after this many seconds")
    parser.add_argument("--compiled", type=int, default=20, help="entries in the compiled subset (0: none)")
    parser.add_argument(
        "--compiled-max-samples", type=int, default=100, help="first N samples per compiled entry (0: all)"
    )
    parser.add_argument(
        "--recompile-limit", type=int, default=1000, help="dynamo recompile limit (default 8)"
    )
    parser.add_argument("--skip-after", type=float, default=20.0, help="generation seconds to skip an entry")
    parser.add_argument("--out", type=Path, default=RESULTS / "census_sizing.json")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    started = time.perf_counter()
    ops = list(op_db)
    random.Random(args.seed).shuffle(ops)
    if args.limit is not None:
        ops = ops[: args.limit]
    floor = fresh_worker_floor()
    print(f"fresh-worker floor: {[round(t, 2) for t in floor]} s", file=sys.stderr, flush=True)
    entries, stopped = census(ops, args.skip_after, args.budget)
    compiled = (
        compiled_subset(
            list(op_db), args.compiled, args.seed, args.compiled_max_samples, args.recompile_limit
        )
        if args.compiled
        else []
    )
    wall_s = time.perf_counter() - started
    summary = summarise(entries, stopped, floor, compiled, len(op_db), wall_s)
    result = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "inductor_cache_dir": os.environ.get("TORCHINDUCTOR_CACHE_DIR"),
        "options": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "summary": summary,
        "compiled": compiled,
        "entries": entries,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(summary, indent=2))
    print(f"wrote {args.out} ({wall_s:.0f} s)")


if __name__ == "__main__":
    main()
