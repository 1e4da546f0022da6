"""Loader benchmark: a config loaded cold (a fresh `datasets` cache) from the checkout, against
reading the same Parquet files with pyarrow alone, measured in the same run.

Issue 19 asks that the results config still load cold in < 5 s once the census shards are in. The
loader does more than read: it validates every file against its contract (a drifted shard fails
with its name) and builds an Arrow cache keyed on the files' fingerprint. The baseline is what
that costs at the least: `pyarrow.parquet.read_table` of the same files, concatenated. Each round
runs both arms in fresh subprocesses (imports included, as a user's first `load_dataset` pays
them), alternating, with a new empty cache directory for the loader every time.

Usage: python benchmarks/bench_loader.py [--configs results support_matrix outcomes] [--rounds 3]
    [--data-dir data] [--out benchmarks/results/bench_loader.json]
Prints a table (median seconds, rows, ratio loader / baseline) and writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="*", default=["results", "support_matrix", "outcomes"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", default=str(REPO / "data"))
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "bench_loader.json")
    args = parser.parse_args()
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
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
