"""Table benchmark: many result shards read with their values validated in one pandera pass
(tables.tableio.read_shards, as the aggregate stage and the support matrix read them) against the
same shards validated one file at a time, the form read_shards had before, measured in the same run
on the same files.

`dvc repro` reads every committed result shard (186 at 2026-12-07, and one more per run landed), as
do the suite's tests that hold the committed data to its bars. A pandera pass costs about the same
for 100 rows as for 100,000, so one pass per file was most of the read. The per-file arm is also
the oracle: both arms must give equal frames, or the benchmark stops.

Usage: python benchmarks/bench_read_shards.py [--rounds 3] [--table results]
    [--dir data/results/portability] [--out benchmarks/results/bench_read_shards.json]
Prints the median seconds of each arm and their ratio, and writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from portability_data.tables.tableio import empty_frame, parquet_files, read_file, read_shards, validate

REPO = Path(__file__).resolve().parent.parent


def one_pass_per_file(table: str, files: list[Path]) -> pd.DataFrame:
    """The baseline: each file read, schema-checked and validated alone, then concatenated."""
    frames = [
        validate(table, read_file(table, file).to_pandas(types_mapper=pd.ArrowDtype), source=str(file))
        for file in files
    ]
    return pd.concat(frames, ignore_index=True) if frames else empty_frame(table)


def timed(arm: Callable[[], pd.DataFrame], rounds: int) -> tuple[list[float], pd.DataFrame]:
    seconds, frame = [], pd.DataFrame()
    for _ in range(rounds):
        began = time.perf_counter()
        frame = arm()
        seconds.append(time.perf_counter() - began)
    return seconds, frame


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--table", default="results")
    parser.add_argument("--dir", type=Path, default=REPO / "data" / "results" / "portability")
    out = REPO / "benchmarks" / "results" / "bench_read_shards.json"
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args()
    files = parquet_files(args.dir)
    if not files:
        raise SystemExit(f"{args.dir}: no Parquet files to read")
    per_file, baseline = timed(lambda: one_pass_per_file(args.table, files), args.rounds)
    together, frame = timed(lambda: read_shards(args.table, files).frame, args.rounds)
    pd.testing.assert_frame_equal(frame, baseline)  # the oracle: the same rows, values and types
    result = {
        "table": args.table,
        "files": len(files),
        "rows": len(frame),
        "rounds": args.rounds,
        "per_file_s": round(statistics.median(per_file), 3),
        "one_pass_s": round(statistics.median(together), 3),
        "ratio": round(statistics.median(together) / statistics.median(per_file), 3),
        "seconds": {"per_file": [round(s, 3) for s in per_file], "one_pass": [round(s, 3) for s in together]},
    }
    print(
        f"{len(files)} {args.table} shards, {len(frame):,} rows: one pandera pass per file "
        f"{result['per_file_s']} s, one pass for all {result['one_pass_s']} s (ratio {result['ratio']})"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
