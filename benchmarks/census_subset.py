"""A drawn subset of a committed census, as a scratch checkout the real runner can run: shared by
the census benchmarks (bench_compile_cache.py, bench_census_floor.py), so that each measures the
same kind of chunk the same way.

The checkout holds the real harness conftest, the framework's census conftest where it has one,
the census module of each origin and its committed manifest cut down to the drawn entries. Pairs
the newest committed census of that setting recorded as timeouts, crashes or memory kills are left
out (a JAX eager gcd on edge integers runs for hours with jit disabled and the census stops it at its
timeout: a benchmark of seconds would measure the timeout alone; a torch integer op that raises
SIGFPE kills the process, which the runner's workers survive and the floor's one process cannot).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

REPO = Path(__file__).resolve().parent.parent


def manifest(framework: str, origin: str) -> dict[str, Any]:
    """The committed census manifest of one origin (cases/<framework>/census/<origin>.yaml)."""
    return yaml.safe_load((REPO / "cases" / framework / "census" / f"{origin}.yaml").read_text())


# outcomes no single process survives or finishes in seconds: the floor runs every pair in one
# process (a torch integer op that raises SIGFPE kills it), and a timeout is measured as the timeout
LEFT_OUT = ("timeout", "crashed", "memory")


def timed_out(framework: str, device: str, mode: str) -> set[str]:
    """`entry-dtype` pairs whose newest committed census row of the setting was a timeout, a crash
    or the memory cap (every census shard of the setting read, oldest first, newest row kept)."""
    pattern = f"{framework}-{device}-{mode}-census-*.parquet"
    newest: dict[str, str] = {}
    for shard in sorted((REPO / "data" / "results" / "portability").glob(pattern)):
        for row in pq.read_table(shard, columns=["subtest", "outcome"]).to_pylist():
            newest[row["subtest"].split("[", 1)[1].rstrip("]")] = row["outcome"]
    return {pair for pair, outcome in newest.items() if outcome in LEFT_OUT}


def draw(
    framework: str, origin: str, entries: int, seed: int, device: str = "cpu", mode: str = "eager"
) -> dict[str, list[str]]:
    """`entries` entries of the origin drawn with `seed`: entry -> its dtypes (timeouts and crashes left out;
    an entry left with none is dropped)."""
    listed = manifest(framework, origin)["entries"]
    skipped = timed_out(framework, device, mode)
    drawn = random.Random(seed).sample(listed, min(entries, len(listed)))
    chosen = {e["entry"]: [d for d in e["dtypes"] if f"{e['entry']}-{d}" not in skipped] for e in drawn}
    return {entry: dtypes for entry, dtypes in sorted(chosen.items()) if dtypes}


def checkout(root: Path, framework: str, wanted: dict[str, dict[str, list[str]]]) -> Path:
    """A scratch checkout at `root` running only the wanted (origin -> entry -> dtypes) pairs."""
    census = REPO / "cases" / framework / "census"
    folder = root / "cases" / framework / "census"
    folder.mkdir(parents=True)
    shutil.copy(REPO / "cases" / "conftest.py", root / "cases" / "conftest.py")
    if (census / "conftest.py").is_file():
        shutil.copy(census / "conftest.py", folder / "conftest.py")
    for extra in census.glob("*.yml"):  # side files a census module reads (TensorFlow's mapping)
        shutil.copy(extra, folder / extra.name)
    for origin, entries in wanted.items():
        shutil.copy(census / f"test_{origin}.py", folder / f"test_{origin}.py")
        cut = manifest(framework, origin)
        kept = [e for e in cut["entries"] if e["entry"] in entries]
        cut["entries"] = [{**e, "dtypes": entries[e["entry"]]} for e in kept]
        (folder / f"{origin}.yaml").write_text(yaml.safe_dump(cut, sort_keys=False))
    return root


def statuses(results_dir: Path, run_id: str) -> dict[str, tuple[Any, ...]]:
    """subtest -> (outcome, error type, confirmation, samples failed) of one run's shard."""
    [shard] = results_dir.glob(f"*/{run_id}.parquet")
    columns = ["subtest", "outcome", "error_type", "confirmation", "samples_failed"]
    rows = pq.read_table(shard, columns=columns).to_pylist()
    return {r["subtest"]: tuple(r[c] for c in columns[1:]) for r in rows}
