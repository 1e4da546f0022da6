"""A process's first validated table write, with pandera's dask annotation types kept out
(tables/schemas.py `_without_dask_annotations`) against with them loaded, measured in the same run.

Every pipeline stage, CLI call and worker-side writer that writes or reads a table validates it
with pandera, and the first model it builds asks pandera for its index annotation types, which
import `dask.dataframe` wherever dask is installed (the `distributed` extra). Each round starts two
fresh interpreters, alternating which goes first: the baseline imports `pandera.typing.dask` itself
before anything else (so the real module, and dask, load as they did before the stub), the other
does not. Both then read the committed `cases` table and write it back through `write_table`
(validation included) to a scratch file, and report the seconds from interpreter start to the end
of the write. The machine's load is printed beside the figures: run it on a quiet host.

Usage: python benchmarks/bench_table_start.py [--rounds 7] [--out PATH]
Writes benchmarks/results/bench_table_start.json (or PATH) and prints median seconds and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from portability_data.tables.atomic import atomic_write_bytes

REPO = Path(__file__).resolve().parent.parent
RESULT = REPO / "benchmarks" / "results" / "bench_table_start.json"

CHILD = """
import sys, time
started = time.perf_counter()
if sys.argv[1] == "with_dask_types":
    import pandera.typing.dask
from pathlib import Path
from portability_data.tables.tableio import read_table, write_table
frame = read_table("cases", Path(sys.argv[2]))
write_table("cases", frame, Path(sys.argv[3]))
print(time.perf_counter() - started, "dask" in sys.modules)
"""
ARMS = ("with_dask_types", "without")


def one(arm: str, scratch: Path) -> tuple[float, bool]:
    """(seconds from start to the written table, whether dask was imported) of one fresh process."""
    out = scratch / f"{arm}.parquet"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, arm, str(REPO / "data" / "cases"), str(out)],
        capture_output=True,
        text=True,
        check=True,
        cwd=scratch,
    )
    seconds, dask_loaded = done.stdout.split()
    return float(seconds), dask_loaded == "True"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args(argv)
    times: dict[str, list[float]] = {arm: [] for arm in ARMS}
    dask_seen: dict[str, set[bool]] = {arm: set() for arm in ARMS}
    with tempfile.TemporaryDirectory() as scratch:
        for round_ in range(args.rounds):
            for arm in ARMS if round_ % 2 == 0 else ARMS[::-1]:
                seconds, dask_loaded = one(arm, Path(scratch))
                times[arm].append(seconds)
                dask_seen[arm].add(dask_loaded)
    medians = {arm: statistics.median(values) for arm, values in times.items()}
    result = {
        "rounds": args.rounds,
        "load_before_after": [round(v, 2) for v in os.getloadavg()],
        "median_s": {arm: round(value, 3) for arm, value in medians.items()},
        "seconds": {arm: [round(v, 3) for v in values] for arm, values in times.items()},
        "dask_imported": {arm: sorted(seen) for arm, seen in dask_seen.items()},
        "ratio_without_over_with": round(medians["without"] / medians["with_dask_types"], 3),
    }
    atomic_write_bytes(args.out, (json.dumps(result, indent=2) + "\n").encode())
    for arm in ARMS:
        seen = dask_seen[arm]
        print(f"{arm:>16}: median {medians[arm]:.2f} s to the first validated write, dask imported {seen}")
    print(f"ratio without / with: {result['ratio_without_over_with']} (load {result['load_before_after']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
