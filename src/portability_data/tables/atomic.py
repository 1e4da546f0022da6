"""Atomic writes: a temp file in the target's folder, fsync, then rename (or link, for immutables);
and the sha256 a written file is known by (submissions list it, pinned downloads are checked by it).

Light on purpose (pyarrow only): the runner writes its shards with it on accelerator machines.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# Metadata stamped into every Parquet file written by this process (the CLI sets dataset_version).
DEFAULT_METADATA: dict[str, str] = {}


@contextlib.contextmanager
def _landing(path: Path, exclusive: bool) -> Iterator[str]:
    """A temp file beside `path` to write into; on success it is fsync'd and put in place (renamed,
    or hard-linked when `exclusive`, which refuses to replace); on any failure it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        if exclusive:
            os.link(tmp, path)  # FileExistsError rather than replace
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Write bytes to path atomically: temp file in the same folder, fsync, rename."""
    with _landing(path, exclusive=False) as tmp, open(tmp, "wb") as handle:
        handle.write(data)
    return Path(path)


def atomic_write_arrow(path: Path, arrow_table: pa.Table, *, exclusive: bool = False) -> Path:
    """Write an Arrow table as Parquet atomically; `exclusive` refuses to replace an existing file
    (result shards are immutable)."""
    if DEFAULT_METADATA:
        merged = dict(arrow_table.schema.metadata or {})
        merged.update({k.encode(): v.encode() for k, v in DEFAULT_METADATA.items()})
        arrow_table = arrow_table.replace_schema_metadata(merged)
    with _landing(path, exclusive) as tmp:
        pq.write_table(arrow_table, tmp, compression="zstd")
    return Path(path)


def file_sha256(path: Path) -> str:
    """sha256 of the file's bytes, read in blocks (a shard or a wheel need not fit in memory)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
