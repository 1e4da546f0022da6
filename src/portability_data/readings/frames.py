"""Arrow-backed frames and plain Python values, both ways: the conversions every aggregation step
shares (reading columns as Python values, plain frames for summaries, typed frames for the tables).

Shared by aggregation, the summaries, the reproduction and the report, so it lives apart from them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa


def column_values(series: pd.Series) -> list[Any]:
    """Python values of a column, Arrow-backed or not (lists stay lists, nulls become None)."""
    if isinstance(series.dtype, pd.ArrowDtype):
        return list(series.array.__arrow_array__().to_pylist())
    return [None if is_null(v) else v for v in series.tolist()]


def is_null(value: Any) -> bool:
    if isinstance(value, (list, tuple, np.ndarray)):
        return False
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Arrow-backed columns as plain numpy/object columns, so summaries work on either kind."""
    out = frame.copy()
    for column in out.columns:
        if isinstance(out[column].dtype, pd.ArrowDtype):
            out[column] = pd.Series(column_values(out[column]), index=out.index, dtype=object)
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in out[column].dropna()):
                out[column] = pd.to_numeric(out[column])
    return out


def typed_frame(schema: pa.Schema, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows as a frame with the contract's columns and Arrow types (as tableio reads them back)."""
    table = pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()
    frame: pd.DataFrame = table.to_pandas(types_mapper=pd.ArrowDtype)
    return frame


def first_line(message: object, width: int = 160) -> str | None:
    """A failure message's first non-empty line, cut to `width` (a table cell, not a traceback)."""
    if not isinstance(message, str):
        return None
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return lines[0][:width] if lines else None
