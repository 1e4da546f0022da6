"""Atomic writes: a temp file in the target's folder, fsync, then rename (or link, for immutables).

Light on purpose (pyarrow only): the runner writes its shards with it on accelerator machines.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# Metadata stamped into every Parquet file written by this process (the CLI sets dataset_version).
DEFAULT_METADATA: dict[str, str] = {}


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Write bytes to path atomically: temp file in the same folder, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path


def atomic_write_arrow(path: Path, arrow_table: pa.Table, *, exclusive: bool = False) -> Path:
    """Write an Arrow table as Parquet atomically; `exclusive` refuses to replace an existing file
    (result shards are immutable)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    if DEFAULT_METADATA:
        merged = dict(arrow_table.schema.metadata or {})
        merged.update({k.encode(): v.encode() for k, v in DEFAULT_METADATA.items()})
        arrow_table = arrow_table.replace_schema_metadata(merged)
    try:
        pq.write_table(arrow_table, tmp, compression="zstd")
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        if exclusive:
            os.link(tmp, path)  # fails with FileExistsError rather than replace
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return path
