"""`portability submission package`: copy a contributor's runs into a submission folder and
describe the machine and code in system.json.

pyarrow and json only (no pandas): it runs on a bare device machine beside `portability run`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from portability_data.dataset.submission.chain import package_chain
from portability_data.dataset.submission.files import (
    RUN_ID,
    SYSTEM_FILE,
    SubmissionError,
    file_sha256,
    parquet_magic_problem,
)
from portability_data.tables.atomic import atomic_write_bytes

SUBMISSION_FORMAT = 1
HOST_FIELDS = ("host", "cpu_model", "cpu_flags", "cpu_count", "memory_mb", "os", "python")
DEVICE_FIELDS = ("device", "device_model", "accelerator", "driver")
# Per run in system.json: what ran, where, how, and with which code.
RUN_FIELDS = (
    "run_id", "source", "framework", "framework_version", "device", "device_model", "mode", "repeats",
    "status", "n_results", "timeout_s", "timer_floor_ms", "started_at", "finished_at", "params_hash",
    "git_commit", "code_modified", "harness_digest", "cases_digest",
)  # fmt: skip


def locate_run(repo_root: Path, run_id: str) -> tuple[Path, Path]:
    """(shard, runs row) of a run made in this checkout, under whichever source it ran as."""
    if not RUN_ID.match(run_id):
        raise SubmissionError(f"run id {run_id!r} is not a run id (letters, digits, _ . : - only)")
    shards = sorted((repo_root / "data" / "results").glob(f"*/{run_id}.parquet"))
    if not shards:
        raise SubmissionError(
            f"run {run_id}: no shard data/results/<source>/{run_id}.parquet under {repo_root}; list "
            f"finished runs with `ls data/runs/*/` (an unfinished one: `portability run --resume {run_id}`)"
        )
    if len(shards) > 1:
        raise SubmissionError(
            f"run {run_id}: shards under several sources ({', '.join(str(p) for p in shards)}); "
            "a run id is unique: remove the copy that is not the run's"
        )
    runs = repo_root / "data" / "runs" / shards[0].parent.name / f"{run_id}.parquet"
    if not runs.is_file():
        raise SubmissionError(
            f"run {run_id}: shard {shards[0]} has no runs row {runs}; was it copied by hand?"
        )
    return shards[0], runs


def _json_or_text(value: str | None) -> Any:
    """A JSON column of the runs row as data (its text where it is not JSON)."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return value


def _plain(value: Any) -> Any:
    """A runs-row value as JSON can hold it (timestamps as ISO 8601)."""
    return value.isoformat() if hasattr(value, "isoformat") else value


def _distinct(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, kept = set(), []
    for item in items:
        key = json.dumps(item, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def system_description(
    run_rows: list[dict[str, Any]], files: dict[str, list[dict[str, str]]]
) -> dict[str, Any]:
    """What system.json says: the host(s), devices and framework builds the runs rows record, and
    per run the code that ran it (git commit, harness and case digests) and its files' sha256."""
    runs = []
    for row in run_rows:
        runs.append(
            {
                **{key: _plain(row.get(key)) for key in RUN_FIELDS},
                "case_digests": _json_or_text(row.get("case_digests")),
                "files": files[row["run_id"]],
            }
        )
    return {
        "format": SUBMISSION_FORMAT,
        "made_by": "portability submission package",
        "hosts": _distinct([{key: row.get(key) for key in HOST_FIELDS} for row in run_rows]),
        "devices": _distinct([{key: row.get(key) for key in DEVICE_FIELDS} for row in run_rows]),
        "frameworks": _distinct(
            [
                {
                    "framework": row["framework"],
                    "framework_version": row["framework_version"],
                    "build": _json_or_text(row.get("build")),
                    "packages": _json_or_text(row.get("packages")),
                }
                for row in run_rows
            ]
        ),
        "git_commits": sorted({row["git_commit"] for row in run_rows if row.get("git_commit")}),
        "harness_digests": sorted({row["harness_digest"] for row in run_rows if row.get("harness_digest")}),
        "runs": runs,
    }


def package(repo_root: Path, run_ids: Sequence[str], out: Path) -> dict[str, Any]:
    """Copy the runs' shards and runs rows (byte for byte) into `out` under results/<source>/ and
    runs/<source>/, and write out/system.json; returns what system.json says."""
    repo_root = Path(repo_root).resolve()
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SubmissionError(f"{out} exists and is not an empty folder; package into a new folder")
    located = [(run_id, *locate_run(repo_root, run_id)) for run_id in dict.fromkeys(run_ids)]
    if not located:
        raise SubmissionError("no run ids given; name the runs to submit (`ls data/runs/*/`)")
    run_rows, files, chains = [], {}, {}
    for run_id, shard, runs in located:
        for path in (shard, runs):
            why = parquet_magic_problem(path)
            if why:
                raise SubmissionError(f"{path}: {why}; re-run the run, the file was damaged")
        table = pq.read_table(runs)
        if table.num_rows != 1:
            raise SubmissionError(f"{runs}: {table.num_rows} runs rows, a run writes one; re-run the run")
        run_rows.append(table.to_pylist()[0])
        files[run_id] = []
        for folder, path in (("results", shard), ("runs", runs)):
            relative = f"{folder}/{path.parent.name}/{path.name}"
            (out / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out / relative)
            files[run_id].append({"path": relative, "sha256": file_sha256(out / relative)})
        chain = package_chain(repo_root, shard.parent.name, run_id, out)  # None: a run before chains
        if chain is not None:
            files[run_id].append({"path": chain.pop("path"), "sha256": chain.pop("sha256")})
            if "log_file" in chain:  # the worker log the chain seals
                files[run_id].append(chain.pop("log_file"))
        chains[run_id] = chain
    system = system_description(run_rows, files)
    for described in system["runs"]:  # the chain's head and count: what the check recomputes
        described["chain"] = chains[described["run_id"]]
    atomic_write_bytes(out / SYSTEM_FILE, (json.dumps(system, indent=2, sort_keys=True) + "\n").encode())
    return system
