"""Report benchmark (issue 57): `portability report` on the committed data, today's source against
the source before issue 57 (a git revision, extracted with `git archive`), in the same run on the
same data, alternating rounds so that load on the host falls on both arms.

Why this baseline: the claim is "the report got faster without changing a byte of its text", so the
honest comparison is the same command on the same tables with the old code; a baseline of "reading
the inputs alone" would flatter neither arm. A third arm runs today's source serially
(run_report(parallel=False)), which splits the gain into less work (shared reads, one reading per
distinct failure, one supersede, constrained figures laid out and drawn once) and the second
process (the data-only sections on another core). Every round checks that each arm wrote the
same report.md and metrics.json as the baseline, or the benchmark stops.

Each arm runs in a fresh interpreter (imports included, as `dvc repro` pays them), from the
repository root (data/, params.yaml), writing to its own temporary folder.

Usage: python benchmarks/bench_report.py [--rounds 3] [--baseline-rev 8c9790c]
    [--out benchmarks/results/bench_report.json]
Prints each arm's median seconds and the ratios, and writes the JSON. About 3 x 45 s per round
on 2 quiet cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# main before issue 57's report changes: the report as it was measured at ~41 s
BASELINE_REV = "8c9790c"
CALL = (
    "import sys; from pathlib import Path; from portability_data.report.build import run_report; "
    "out = Path(sys.argv[1]); run_report(Path('data'), out, out / 'metrics.json'{extra})"
)


def extract_source(rev: str, into: Path) -> Path:
    """src/ of `rev` unpacked under `into` (git archive: the committed bytes, no worktree needed)."""
    archive = into / "src.tar"
    with archive.open("wb") as handle:
        subprocess.run(["git", "-C", str(REPO), "archive", rev, "src"], stdout=handle, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def run_arm(src: Path, out: Path, extra: str = "") -> tuple[float, float]:
    """Wall and CPU seconds (user + system, its processes together) of one report written to
    `out` by the package under `src`, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", CALL.format(extra=extra), str(out)],
        cwd=REPO,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/bench_report.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-report-") as scratch:
        root = Path(scratch)
        arms = {
            "before": (extract_source(args.baseline_rev, root), ""),
            "after": (REPO / "src", ""),
            "after_serial": (REPO / "src", ", parallel=False"),
        }
        seconds: dict[str, list[float]] = {arm: [] for arm in arms}
        cpu: dict[str, list[float]] = {arm: [] for arm in arms}
        for round_ in range(args.rounds):
            written = {}
            for arm, (src, extra) in arms.items():
                out = root / f"{arm}-{round_}"
                wall, used = run_arm(src, out, extra)
                seconds[arm].append(wall)
                cpu[arm].append(used)
                written[arm] = [(out / name).read_bytes() for name in ("report.md", "metrics.json")]
            for arm, files in written.items():
                if files != written["before"]:
                    raise SystemExit(f"round {round_}: {arm} wrote another report.md or metrics.json")
            took = ", ".join(f"{a} {s[-1]:.1f} s (cpu {cpu[a][-1]:.1f} s)" for a, s in seconds.items())
            print(f"round {round_}: {took}")
    medians = {arm: statistics.median(values) for arm, values in seconds.items()}
    payload: dict[str, Any] = {
        "baseline_rev": args.baseline_rev,
        "rounds": args.rounds,
        "host": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "seconds": seconds,
        "median_s": medians,
        "cpu_s": cpu,  # user + system of the report's processes: less moved by other load than wall
        "median_cpu_s": {arm: statistics.median(values) for arm, values in cpu.items()},
        "before_vs_after": medians["before"] / medians["after"],
        "serial_vs_after": medians["after_serial"] / medians["after"],
        "same_report_md_and_metrics": True,
    }
    print(
        f"before {medians['before']:.1f} s, after {medians['after']:.1f} s "
        f"({payload['before_vs_after']:.2f}x), after serially {medians['after_serial']:.1f} s; "
        "report.md and metrics.json identical"
    )
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n")
    tmp.replace(args.out)


if __name__ == "__main__":
    main()
