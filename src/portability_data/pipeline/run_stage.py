"""The DVC `run` stage: run every framework x device x mode of params.yaml that this checkout
has no complete run for, and write a manifest of the runs that cover the current cases.

Shards are source data, not stage outputs (DESIGN.md): a shard from another machine is added by
git and picked up by `aggregate`. So this stage skips a combination when a complete run of the
same framework, device, mode and parameters over the same case files and the same harness is
already in data/runs (the params hash covers both digests: a changed harness re-measures), and only
the manifest is its output.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from portability_data.runner.census_rows import CENSUS_FOLDER
from portability_data.runner.provenance import ORACLE_FILE, harness_digest
from portability_data.runner.spec import SOURCE, Paths, RunSpec
from portability_data.runner.supervisor import run
from portability_data.tables.atomic import atomic_write_bytes


def cases_digest(repo_root: Path, framework: str, suite: str = "curated") -> str:
    """sha256 over the suite's row and test files (names and contents): the framework's case
    files, or its census manifests and modules (cases/<framework>/census/)."""
    digest = hashlib.sha256()
    folder = repo_root / "cases" / framework
    paths = sorted((folder / CENSUS_FOLDER if suite == "census" else folder).glob("*"))
    if suite == "census":
        paths.append(ORACLE_FILE)
    for path in paths:
        if path.suffix in (".py", ".yaml") and path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def existing_runs(runs_dir: Path) -> dict[str, dict[str, Any]]:
    """Finished runs in data/runs by params hash: complete ones, and partial ones a person closed
    with `portability run --close` (the stage does not redo a run someone chose to stop; resume
    it by hand). A complete run wins over a partial one; else the latest."""
    found: dict[str, dict[str, Any]] = {}
    columns = ["run_id", "params_hash", "status", "finished_at"]
    for path in sorted(runs_dir.rglob("*.parquet")):
        for row in pq.read_table(path, columns=columns).to_pylist():
            key = row["params_hash"]
            if row["status"] not in ("complete", "partial") or not key:
                continue
            if key not in found or found[key]["status"] != "complete" or row["status"] == "complete":
                found[key] = row
    return found


def setting_spec(
    framework: str,
    device: str,
    mode: str,
    repeats: int,
    run_params: dict[str, Any],
    source: str = SOURCE,
    suite: str = "curated",
) -> RunSpec:
    """The run of one framework x device x mode under params.yaml's run limits (all active cases);
    a framework named in `timeout_s_by_framework` gets its own limit per subtest."""
    timeout = run_params.get("timeout_s_by_framework", {}).get(framework, run_params["timeout_s"])
    return RunSpec(
        framework=framework,
        device=device,
        mode=mode,
        repeats=int(repeats),
        timeout_s=float(timeout),
        memory_mb=int(run_params["memory_mb"]),
        cases=(),
        source=source,
        suite=suite,
    )


def run_stage(
    run_params: dict[str, Any],
    repo_root: Path,
    manifest: Path,
    only: tuple[str, ...] = (),
    suite: str = "curated",
) -> list[str]:
    """Run what is missing; write the manifest (run ids covering the current cases); return it.
    `only` limits the frameworks (to run two streams side by side; the stage itself runs all). The
    census stage is the same over suite census with params.yaml's census section."""
    paths = Paths.under(repo_root)
    done = existing_runs(paths.runs_dir)
    covering = []
    harness = harness_digest(paths.cases_dir)
    for framework in run_params["frameworks"]:
        if only and framework not in only:
            continue
        digest = cases_digest(paths.repo_root, framework, suite) + harness
        for device in run_params["devices"]:
            for mode in run_params.get("modes_by_framework", {}).get(framework, run_params["modes"]):
                spec = setting_spec(framework, device, mode, run_params["repeats"], run_params, suite=suite)
                key = spec.params_hash(digest)
                if key in done:
                    state = "up to date" if done[key]["status"] == "complete" else "partial, closed by hand"
                    print(f"{framework}/{device}/{mode}: {state} ({done[key]['run_id']})", flush=True)
                    covering.append(done[key]["run_id"])
                    continue
                print(f"{framework}/{device}/{mode}: running", flush=True)
                confirm_jobs = int(run_params.get("confirm_jobs", 1))
                jobs = int(run_params.get("jobs", 1)) if suite == "census" else 1
                covering.append(run(spec, paths, params_hash=key, confirm_jobs=confirm_jobs, jobs=jobs))
    text = json.dumps({"runs": covering}, indent=2) + "\n"
    atomic_write_bytes(manifest, text.encode())
    return covering
