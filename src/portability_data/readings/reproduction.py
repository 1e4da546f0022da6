"""The reproduction table counted: equal values per published table (or finer), as the `reproduce`
command prints them, the report shows them and the floor test guards them.
"""

from __future__ import annotations

import pandas as pd

from portability_data.readings.frames import plain_frame

CLASSES = ("success", "partial_failure", "complete_failure")  # the outcome classes Table 8 counts


def equal_counts(reproduction: pd.DataFrame, by: tuple[str, ...] = ("published_table",)) -> pd.DataFrame:
    """Equal / total per published table (or finer): what the floor test guards."""
    frame = plain_frame(reproduction)
    if frame.empty:
        return pd.DataFrame(columns=[*by, "equal", "total"])
    grouped = frame.groupby(list(by))["equal"]
    return pd.DataFrame({"equal": grouped.sum().astype(int), "total": grouped.size()}).reset_index()
