"""Rows tied to what the runner saw: the journal's digest chain (runner/row_chain.py), carried by a
submission as `chain/<source>/<run_id>.chain.json` and recomputed here from the shard's rows.

A row edited, invented, dropped or reordered after the run, a confirmation verdict changed, or a
chain truncated or edited is refused, naming the row (subtest, repeat) and the check. A run
without a chain (made before the runner wrote one, or checked in place where no chain lies) is
not refused: the report warns that its rows cannot be tied to a runner.

What it cannot prove: that the runner, harness and hardware were unmodified and honest (a patched
runner writes a valid chain over any rows); DATASET_CARD.md says so.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from portability_data.dataset.submission.files import SubmissionError, file_sha256
from portability_data.dataset.submission.problems import CheckReport, Submitted, listed_values
from portability_data.runner.row_chain import (
    CHAIN_FORMAT,
    CHAIN_SUFFIX,
    chain_head,
    chain_path,
    confirm_digest,
    row_digest,
)
from portability_data.tables.contracts import CONFIRMED_OUTCOMES

CHAIN_FOLDER = "chain"  # <submission>/chain/<source>/<run_id>.chain.json
WORKER_LOG_SUFFIX = ".worker.log"  # <submission>/chain/<source>/<run_id>.worker.log: what the workers printed
FIX = (
    "submit the shard, its runs row and its chain as `portability run` wrote them and "
    "`portability submission package` copied them (a row cannot be mended by hand: re-run the run)"
)


def is_chain_file(relative: Path) -> bool:
    """Whether a path inside a submission folder is where `package` puts a run's chain."""
    return (
        len(relative.parts) == 3
        and relative.parts[0] == CHAIN_FOLDER
        and relative.name.endswith((CHAIN_SUFFIX, WORKER_LOG_SUFFIX))
    )


def package_chain(repo_root: Path, source: str, run_id: str, out: Path) -> dict[str, Any] | None:
    """Copy the run's chain (data/.journal/<run_id>.chain.json) into the submission; returns what
    system.json says of it (its file, head and record count), None for a run without one."""
    found = chain_path(repo_root / "data" / ".journal" / f"{run_id}.jsonl")
    if not found.is_file():
        return None
    try:
        sidecar = json.loads(found.read_text(encoding="utf-8"))
        head, records = sidecar["head"], sidecar["records"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SubmissionError(f"{found}: not the chain the runner wrote ({exc}); re-run the run") from None
    relative = f"{CHAIN_FOLDER}/{source}/{run_id}{CHAIN_SUFFIX}"
    (out / relative).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(found, out / relative)
    described = {"path": relative, "sha256": file_sha256(out / relative), "head": head, "records": records}
    log = found.with_name(f"{run_id}.log")
    if "worker_log" in sidecar and log.is_file():  # the log the finish sealed: the check holds it to that
        log_relative = f"{CHAIN_FOLDER}/{source}/{run_id}{WORKER_LOG_SUFFIX}"
        shutil.copyfile(log, out / log_relative)
        described["log_file"] = {"path": log_relative, "sha256": file_sha256(out / log_relative)}
    return described


def _row_name(test_id: str, repeat: Any) -> str:
    """The row as a reviewer finds it: its test id (census modules share subtest names), repeat."""
    return f"{test_id} (repeat {repeat})"


def _described(folder: Path | None, run_id: str) -> dict[str, Any] | None:
    """system.json's word on the run's chain (None: no folder, no system.json or no chain)."""
    if folder is None:
        return None
    try:
        system = json.loads((folder / "system.json").read_text(encoding="utf-8"))
        run = next(r for r in system["runs"] if r.get("run_id") == run_id)
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None  # the system check says what is wrong with it
    chain = run.get("chain")
    return chain if isinstance(chain, dict) else None


def _load(path: Path, run_id: str, report: CheckReport) -> list[list[Any]] | None:
    """The chain's records once its head, count, run and format hold (untrusted JSON, no code)."""
    try:
        sidecar = json.loads(path.read_text(encoding="utf-8"))
        records = sidecar["chain"]
        assert sidecar["format"] == CHAIN_FORMAT and sidecar["run_id"] == run_id
        assert isinstance(records, list) and all(
            isinstance(r, list) and len(r) == 4 and r[0] in ("row", "confirm") and isinstance(r[1], str)
            for r in records
        )
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as exc:
        report.add(
            str(path), "chain", f"not the chain of run {run_id} as the runner writes it ({exc!r})", FIX
        )
        return None
    head = chain_head(run_id, records)
    if head != sidecar.get("head") or len(records) != sidecar.get("records"):
        report.add(
            str(path),
            "chain",
            f"its {len(records)} record(s) hash to head {head[:16]}..., it says {sidecar.get('records')} "
            f"record(s) and head {str(sidecar.get('head'))[:16]}...: the chain was edited, reordered or "
            "truncated after the run",
            FIX,
        )
        return None
    return records


def check_chain(shard: Submitted, folder: Path | None, report: CheckReport) -> None:
    """Recompute the run's chain from its shard rows; refuse what the runner did not journal."""
    run_id = shard.run_id
    path = None if folder is None else folder / CHAIN_FOLDER / shard.source / f"{run_id}{CHAIN_SUFFIX}"
    described = _described(folder, run_id)
    if path is None or not path.is_file():
        if described is not None:
            report.add(shard.shown, "chain", f"system.json describes a chain, {path} is missing", FIX)
        else:
            report.warn(
                shard.shown,
                "chain",
                "no chain beside the shard (a run made before the runner wrote one, or a shard "
                "checked in place): its rows cannot be tied to a runner",
                "submit the folder `portability submission package` made, which carries the chain",
            )
        return
    records = _load(path, run_id, report)
    if records is None:
        return
    _check_worker_log(path, run_id, report)
    head = chain_head(run_id, records)
    if described is None or described.get("head") != head or described.get("records") != len(records):
        report.add(
            str(path),
            "chain",
            f"system.json does not record this chain (head {head[:16]}..., {len(records)} record(s))",
            "re-package the runs with `portability submission package`",
        )
    assert shard.data is not None
    _check_rows(shard, shard.data.to_pylist(), records, report)


def _check_worker_log(path: Path, run_id: str, report: CheckReport) -> None:
    """The packaged worker log is the one the runner sealed (its sha256 and size in the chain)."""
    try:
        sealed = json.loads(path.read_text(encoding="utf-8")).get("worker_log")
    except (OSError, ValueError, AttributeError):
        return  # _load has said what is wrong with the chain file
    if not isinstance(sealed, dict):
        return  # a chain sealed before worker logs were: nothing to hold a log to
    log = path.with_name(f"{run_id}{WORKER_LOG_SUFFIX}")
    if not log.is_file():
        report.add(str(log), "chain", "the runner sealed a worker log for this run and it is missing", FIX)
        return
    data = log.read_bytes()
    if hashlib.sha256(data).hexdigest() != sealed.get("sha256") or len(data) != sealed.get("bytes"):
        report.add(
            str(log),
            "chain",
            f"not the worker log the runner sealed ({len(data)} bytes, the chain says "
            f"{sealed.get('bytes')}): edited after the run",
            FIX,
        )


def _check_rows(
    shard: Submitted, rows: list[dict[str, Any]], records: list[list[Any]], report: CheckReport
) -> None:
    """Every shard row is the last journaled one of its (test_id, repeat), in the finish's order."""
    journaled = {(r[1], r[2]): r[3] for r in records if r[0] == "row"}
    verdicts = {r[1]: r[3] for r in records if r[0] == "confirm"}
    invented, edited, confirmations = [], [], []
    for row in rows:
        key = (row["test_id"], row["repeat"])
        if key not in journaled:
            invented.append(_row_name(*key))
        elif row_digest(row) != journaled[key]:
            edited.append(_row_name(*key))
        confirmed = row["outcome"] in CONFIRMED_OUTCOMES and row["test_id"] in verdicts
        expected = verdicts[row["test_id"]] if confirmed else confirm_digest(row["test_id"], None)
        if confirm_digest(row["test_id"], row.get("confirmation")) != expected:
            confirmations.append(_row_name(*key))
    keys = [(r["test_id"], r["repeat"]) for r in rows]
    present = set(keys)
    dropped = [_row_name(*key) for key in journaled if key not in present]
    order = [(r["repeat"], r["case_id"], r["test_id"]) for r in rows]
    moved = next((i for i in range(1, len(order)) if order[i] < order[i - 1]), None)
    for names, what in (
        (
            edited,
            "differ from what the runner journaled (their digest is not the chain's): edited after the run",
        ),
        (invented, "are not in the runner's chain: added after the run, or the chain cut"),
        (dropped, "are in the runner's chain and not in the shard: dropped after the run"),
        (confirmations, "carry a confirmation the runner did not journal: edited after the run"),
    ):
        if names:
            report.add(shard.shown, "chain", f"{len(names)} row(s) {what}: {listed_values(names)}", FIX)
    if moved is not None:
        report.add(
            shard.shown,
            "chain",
            f"row {moved} {_row_name(*keys[moved])} is out of the runner's order (repeat, case, test id): "
            "rows reordered after the run",
            FIX,
        )


def check_chains(folders: list[Path], items: list[Submitted], report: CheckReport) -> None:
    """Each read shard against its chain: in the submission folder that holds it, or none."""
    for shard in items:
        if shard.table != "results" or shard.data is None:
            continue
        folder = next((f for f in folders if shard.path.is_relative_to(f)), None)
        check_chain(shard, folder, report)
