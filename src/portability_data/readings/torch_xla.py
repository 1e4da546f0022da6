"""torch_xla's own test lists as the declared table holds them (pipeline/frameworks/torch/xla.py
writes the rows, the report reads them back): the device type they declare, the commented-out
block of failing ops, and a row's `source` read back into its file and list.
"""

from __future__ import annotations

DEVICE_TYPE = "xla"
FAILING_SECTION = "failing"  # the "Failing Ops" block of commented-out entries


def split_source(source: str) -> tuple[str, str]:
    """A row's `source` read back: (torch_xla's file at its tag, the list the row came from)."""
    where, _, listed = source.rpartition(": ")
    return where, listed
