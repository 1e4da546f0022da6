"""Loader benchmark: a config loaded cold (a fresh `datasets` cache) from the checkout, against
reading the same Parquet files with pyarrow alone, measured in the same run.

Issue 19 asks that the results config still load cold in < 5 s once the census shards are in. The
loader does more than read: it validates every file against its contract (a drifted shard fails
with its name) and builds an Arrow cache keyed on the files' fingerprint. The baseline is what
that costs at the least: `pyarrow.parquet.read_table` of the same files, concatenated. Each round
runs both arms in fresh subprocesses (imports included, as a user's first `load_dataset` pays
them), alternating, with a new empty cache directory for the loader every time.

Usage: python benchmarks/bench_loader.py [--configs results support_matrix outcomes] [--rounds 3]
    [--data-dir data] [--out PATH | --update-committed]
Prints a table (median seconds, rows, ratio loader / baseline) and writes the JSON to a new file,
benchmarks/results/local/bench_loader-<UTC time>.json (git-ignored): a routine run never rewrites
the committed benchmarks/results/bench_loader.json, which only `--update-committed` replaces (when
the measurement is meant to become the project's claim, committed with what changed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from portability_data.tables.atomic import atomic_write_bytes

REPO = Path(__file__).resolve().parent.parent
COMMITTED = REPO / "benchmarks" / "results" / "bench_loader.json"

LOADER = """
import sys
from portability_data.dataset.loader import load_dataset
table = load_dataset(sys.argv[1], data_dir=sys.argv[2], cache_dir=sys.argv[3])
print(table.num_rows)
"""

BASELINE = """
import sys
import pyarrow as pa, pyarrow.parquet as pq
from portability_data.dataset.folder import files_of
from pathlib import Path
tables = [pq.read_table(path) for path in files_of(Path(sys.argv[2]), sys.argv[1])]
print(sum(t.num_rows for t in tables))
"""


def timed_child(code: str, args: list[str]) -> tuple[float, int]:
    """Seconds and rows of one fresh interpreter running `code` (fails loudly)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"arm failed ({' '.join(args)}):\n{done.stderr[-2000:]}")
    return seconds, int(done.stdout.strip().splitlines()[-1])


def result_path(out: Path | None, update_committed: bool) -> Path:
    """Where this run's JSON goes: the committed file only when asked, else `--out` or a new file."""
    if update_committed:
        return COMMITTED
    if out is not None:
        return out
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return REPO / "benchmarks" / "results" / "local" / f"bench_loader-{stamp}.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="*", default=["results", "support_matrix", "outcomes"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", default=str(REPO / "data"))
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--out", type=Path, help="result file (default: a new file under benchmarks/results/local/)"
    )
    where.add_argument(
        "--update-committed", action="store_true", help=f"replace the committed {COMMITTED.relative_to(REPO)}"
    )
    args = parser.parse_args()
    out = result_path(args.out, args.update_committed)
    report = {"rounds": args.rounds, "data_dir": args.data_dir, "configs": {}}
    print(f"{'config':<16} {'rows':>8} {'loader s':>9} {'pyarrow s':>10} {'ratio':>6}")
    for config in args.configs:
        loader, baseline, rows = [], [], set()
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="bench-loader-cache-") as cache:
                seconds, count = timed_child(LOADER, [config, args.data_dir, cache])
            loader.append(seconds)
            rows.add(count)
            seconds, count = timed_child(BASELINE, [config, args.data_dir])
            baseline.append(seconds)
            rows.add(count)
        if len(rows) != 1:
            raise SystemExit(f"{config}: the arms read different row counts {sorted(rows)}")
        median_loader, median_baseline = statistics.median(loader), statistics.median(baseline)
        ratio = median_loader / median_baseline
        report["configs"][config] = {
            "rows": rows.pop(),
            "loader_s": loader,
            "baseline_s": baseline,
            "median_loader_s": round(median_loader, 3),
            "median_baseline_s": round(median_baseline, 3),
            "ratio": round(ratio, 2),
        }
        entry = report["configs"][config]
        print(f"{config:<16} {entry['rows']:>8} {median_loader:>9.2f} {median_baseline:>10.2f} {ratio:>6.2f}")
    atomic_write_bytes(out, (json.dumps(report, indent=2) + "\n").encode())
    print(
        f"-> {out}" + ("" if args.update_committed else f" (the committed {COMMITTED.name} is left as it is)")
    )


if __name__ == "__main__":
    main()
