"""The journal's digest chain: each journaled row (and confirmation verdict) is hashed, and each
record's link hashes that digest with the previous link, so the chain's head stands for every row
the runner journaled, in the order it journaled them.

Shared by the runner (journal.py writes the links and, at the finish, the sidecar
`<run_id>.chain.json`) and the submission check (dataset/submission/chain.py recomputes it from a
shard's rows). A row's digest is taken over the row as the shard will hold it (each value coerced
to its results column's type), less the columns the finish fills in afterwards: those are checked
against the runs row, or (the confirmation) by the confirmation records of the chain.

What it proves is limited on purpose (DATASET_CARD.md): the shard is what this runner wrote, row
for row; a patched runner can write a chain over any rows.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pyarrow as pa

from portability_data.tables.atomic import atomic_write_bytes
from portability_data.tables.contracts import RESULTS

CHAIN_FORMAT = 1
CHAIN_SUFFIX = ".chain.json"  # beside the journal: data/.journal/<run_id>.chain.json
# Filled in by supervisor.finish after the row is journaled: not in the row's digest.
# framework_version and compiler/runtime are the run's (checked against the runs row); the
# confirmation is chained as its own record (confirm_digest).
UNCHAINED = frozenset({"framework_version", "compiler", "runtime", "confirmation"})
CHAINED_COLUMNS = tuple(f for f in RESULTS if f.name not in UNCHAINED)


def _coerce(value: Any, kind: pa.DataType) -> Any:
    """A value as its results column holds it once written (an int in a float column is a float)."""
    if value is None:
        return None
    if pa.types.is_list(kind):
        return [_coerce(v, kind.value_type) for v in value]
    if pa.types.is_floating(kind):
        number = float(value)
        return repr(number) if not math.isfinite(number) else number
    if pa.types.is_integer(kind):
        return int(value)
    if pa.types.is_boolean(kind):
        return bool(value)
    return str(value)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def row_digest(row: dict[str, Any]) -> str:
    """sha256 of the row's chained columns (sorted JSON of the typed values)."""
    typed = {f.name: _coerce(row.get(f.name), f.type) for f in CHAINED_COLUMNS}
    return _sha("row\n" + json.dumps(typed, sort_keys=True, separators=(",", ":")))


def confirm_digest(test_id: str, verdict: str | None) -> str:
    """sha256 of a confirmation as the shard keeps it: the subtest and its verdict."""
    return _sha("confirm\n" + json.dumps([test_id, verdict], separators=(",", ":")))


def genesis(run_id: str) -> str:
    """The link before the first record: the run's own, so a chain cannot be another run's."""
    return _sha(f"portability-chain-{CHAIN_FORMAT}\n{run_id}")


def next_link(previous: str, digest: str) -> str:
    return _sha(f"{previous}\n{digest}")


def chain_path(journal: Path) -> Path:
    """Where the finish writes the chain of the journal `<run_id>.jsonl`."""
    return journal.with_name(journal.stem + CHAIN_SUFFIX)


def write_chain(
    journal: Path, run_id: str, records: list[list[Any]], head: str, worker_log: Path | None = None
) -> Path:
    """The sidecar the package carries: every record (kind, test_id, repeat, digest) in journal
    order, the count and the head, and the sha256 and size of the run's worker log as the finish
    left it (what the workers printed: the check holds a packaged log to it). Written atomically,
    once per finish."""
    sidecar: dict[str, Any] = {
        "format": CHAIN_FORMAT,
        "run_id": run_id,
        "algorithm": "sha256",
        "records": len(records),
        "head": head,
        "chain": records,
    }
    if worker_log is not None and worker_log.is_file():
        data = worker_log.read_bytes()
        sidecar["worker_log"] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    path = chain_path(journal)
    atomic_write_bytes(path, (json.dumps(sidecar, separators=(",", ":")) + "\n").encode())
    return path


def chain_head(run_id: str, records: list[list[Any]]) -> str:
    """The head the records hash to, from the run's genesis."""
    link = genesis(run_id)
    for record in records:
        link = next_link(link, str(record[3]))
    return link
