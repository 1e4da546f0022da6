"""What a submission is made of, shared by packaging and checking: the folder layout, the Parquet
magic bytes every file is held to before it is read, file digests and the error packaging raises.

Needs nothing beyond the standard library, so `package` stays light (pyarrow only).
"""

from __future__ import annotations

import re
from pathlib import Path

from portability_data.tables.atomic import file_sha256 as file_sha256

MAGIC = b"PAR1"  # a Parquet file starts and ends with it; anything else is refused unread
TABLE_FOLDERS = ("results", "runs")  # <submission>/<table>/<source>/<run_id>.parquet, as under data/
SYSTEM_FILE = "system.json"
RUN_ID = re.compile(r"^[A-Za-z0-9_.:\-]+$")  # the contracts' identifier: no glob or path characters


class SubmissionError(RuntimeError):
    """Packaging cannot go on; the message names the run or file and what to do."""


def parquet_magic_problem(path: Path) -> str | None:
    """Why `path` is not plain Parquet by its first and last four bytes (None if it is), read
    before any reader parses it: a pickle or a script renamed .parquet is refused unread."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(4)
            handle.seek(max(size - 4, 0))
            tail = handle.read(4)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if size < 12 or head != MAGIC or tail != MAGIC:
        return f"not plain Parquet (starts {head!r}, ends {tail!r}; Parquet starts and ends with b'PAR1')"
    return None
