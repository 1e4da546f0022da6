"""`portability scan` speed on a repository of 1,000 files, beside the usage counter alone, one run.

The repository: the first 1,000 .py files (sorted paths) of installed packages of the corpus that
use the frameworks (torchmetrics, optax, chex, keras, einops: the pipeline extra), copied into a
temporary folder with their package layout. Measured in the same run, one core:
(a) the counter alone: read each file and ``count_source`` it (the usage counter's bare and resolved
    counts), in process;
(b) the scan's finding of calls: ``scan_paths`` on the folder (walk, read, parse, resolve, call
    sites with line and column), in process;
(c) the whole command as a user runs it: ``portability scan <folder> --format json`` in a fresh
    process (interpreter start, the tables read and checked, the output written), wall time.
Targets: (c) a few seconds ("a repository of 1,000 files in seconds"); (b) within 1.5x of (a).

Usage: python benchmarks/bench_scan.py [--files 1000] [--rounds 3] [--out JSON]
Prints the figures and writes benchmarks/results/bench_scan.json. Timings are best-of-rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
sys.path.insert(0, str(REPO / "src"))

from portability_data.pipeline.frequencies.calls import count_source  # noqa: E402
from portability_data.pipeline.frequencies.index import ApiIndex  # noqa: E402
from portability_data.pipeline.scan.findings import scan_paths  # noqa: E402
from portability_data.tables.tableio import read_file  # noqa: E402

PACKAGES = ("torchmetrics", "optax", "chex", "keras", "einops")


def repository(folder: Path, files: int) -> list[Path]:
    """Copy the first `files` .py files of PACKAGES (installed) into `folder`, keeping their paths."""
    import importlib.util

    found: list[tuple[Path, Path]] = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        root = Path(spec.origin).parent
        found.extend((root.parent, p) for p in sorted(root.rglob("*.py")))
    chosen = found[:files]
    if len(chosen) < files:
        raise SystemExit(f"only {len(chosen)} .py files in {', '.join(PACKAGES)}; install the pipeline extra")
    out = []
    for base, path in chosen:
        target = folder / path.relative_to(base)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        out.append(target)
    return out


def best(rounds: int, run) -> float:
    times = []
    for _ in range(rounds):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_scan.json")
    args = parser.parse_args()
    api = ApiIndex.from_frame(read_file("api", REPO / "data" / "api" / "api.parquet").to_pandas(), kinds=())
    counter_api = ApiIndex.from_frame(read_file("api", REPO / "data" / "api" / "api.parquet").to_pandas())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "repo"
        files = repository(folder, args.files)
        size = sum(p.stat().st_size for p in files)
        counter_s = best(args.rounds, lambda: [count_source(p.read_bytes(), counter_api) for p in files])
        found = scan_paths([folder], api)
        scan_s = best(args.rounds, lambda: scan_paths([folder], api))
        command = [str(Path(sys.executable).parent / "portability"), "scan", str(folder), "--format", "json"]
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        walls = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, check=False)
            walls.append(time.perf_counter() - start)
            if done.returncode != 0:
                raise SystemExit(f"portability scan failed ({done.returncode}): {done.stderr[-2000:]}")
        document = json.loads(done.stdout)
    result = {
        "files": len(files),
        "bytes": size,
        "packages": list(PACKAGES),
        "calls": len(found.sites),
        "functions": len(document["functions"]),
        "counter_alone_cpu_s": round(counter_s, 3),
        "scan_calls_cpu_s": round(scan_s, 3),
        "scan_over_counter": round(scan_s / counter_s, 3),
        "portability_scan_wall_s": round(min(walls), 3),
        "rounds": args.rounds,
        "targets": {"portability_scan_wall_s": "a few seconds", "scan_over_counter": "<= 1.5"},
    }
    print(
        f"{len(files)} files ({size / 1e6:.1f} MB), {len(found.sites)} calls of {result['functions']} "
        f"functions\n  (a) counter alone:        {counter_s:.2f} s CPU\n"
        f"  (b) scan's call finding:  {scan_s:.2f} s CPU ({scan_s / counter_s:.2f}x the counter)\n"
        f"  (c) portability scan:     {min(walls):.2f} s wall, whole command"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
