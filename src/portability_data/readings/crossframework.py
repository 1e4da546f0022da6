"""The cross-framework table read: its groups, the pairs left out of it, and the two rankings the
report shows (promotion differences, largest disagreements). The `crossframework` stage
(pipeline/crossframework.py) writes the table by the same GROUP and SAME_INPUTS.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from portability_data.readings.frames import first_line

# Rows that measured nothing of their framework (the wheel lacks the entry; our test code failed):
# left out, so that no framework stands apart for the harness's sake.
NOT_MEASURED = ("not_in_wheel", "harness")
GROUP = ["name", "dtype", "device", "mode"]  # one group: a name and dtype on one device path and mode
# largest_disagreements' table, empty or ranked (rank_disagreements)
DISAGREEMENT_COLUMNS = [
    "name", "device", "mode", "dtypes", "statuses", "rel_error_spread", "apart", "message",
]  # fmt: skip
# Rows whose framework ran what NumPy was given (JAX without x64 narrows 64-bit inputs to 32-bit:
# oracle numpy_32bit): only these are held to each other's result dtypes.
SAME_INPUTS = ("numpy",)


def promotion_differences(table: pd.DataFrame, limit: int | None = None) -> pd.DataFrame:
    """The groups whose frameworks returned different dtypes on the same inputs: per name, dtype and
    setting, each framework's result dtype and NumPy's (most frameworks apart first, then by name)."""
    columns = ["name", "dtype", "device", "mode", "numpy", "results", "frameworks_off_numpy"]
    differing = table[table["dtype_agreement"] == "differs"] if len(table) else table
    if not len(differing):
        return pd.DataFrame(columns=columns)
    summary = []
    for key, group in differing.groupby(GROUP):
        held = group[group["result_dtype"].notna() & group["oracle"].isin(SAME_INPUTS)]
        oracles = sorted(set(held["oracle_dtype"].dropna()))
        summary.append(
            {
                **dict(zip(GROUP, key, strict=True)),
                "numpy": " / ".join(oracles) or None,
                "results": ", ".join(
                    f"{f} {d}" for f, d in zip(held["framework"], held["result_dtype"], strict=True)
                ),
                "frameworks_off_numpy": int((held["dtype_mismatches"].fillna(0) > 0).sum()),
            }
        )
    frame = pd.DataFrame(summary).sort_values(
        ["frameworks_off_numpy", "name", "dtype"], ascending=[False, True, True]
    )
    return (
        frame[columns].head(limit).reset_index(drop=True) if limit else frame[columns].reset_index(drop=True)
    )


def largest_disagreements(table: pd.DataFrame, limit: int = 10) -> pd.DataFrame:
    """The names where frameworks part most, one row per name and setting (its disagreeing dtypes
    listed): first those whose statuses differ (by how many samples failed in the framework apart),
    then the widest relative-error spreads."""
    if not len(table):
        return pd.DataFrame(columns=DISAGREEMENT_COLUMNS)
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    fields = ["framework", "status", "agreement", "samples_failed", "rel_error_spread", "stands_apart"]
    # one pass over plain columns, not a pandas group per name x dtype x setting (thousands)
    for *key, framework, status, agreement, failed, spread, apart, message in table[
        [*GROUP, *fields, "error_message"]
    ].itertuples(index=False, name=None):
        if any(pd.isna(part) for part in key):  # as groupby drops them
            continue
        group = groups.get(tuple(key))
        if group is None:
            group = groups[tuple(key)] = {
                **dict(zip(GROUP, key, strict=True)),
                "statuses": [],
                "disagree": agreement == "disagree",
                "failed": 0.0,
                "rel_error_spread": spread,
                "apart": None,
                "message": None,
            }
        group["statuses"].append(f"{framework} {status}")
        group["failed"] = max(group["failed"], 0.0 if pd.isna(failed) else float(failed))
        if group["apart"] is None and not pd.isna(apart):
            group["apart"] = f"{framework} {apart}"
            group["message"] = first_line(message)
    summary = [groups[key] | {"statuses": ", ".join(groups[key]["statuses"])} for key in sorted(groups)]
    return rank_disagreements(pd.DataFrame(summary), limit)


def rank_disagreements(summary: pd.DataFrame, limit: int) -> pd.DataFrame:
    """The ranking of largest_disagreements, from its summary (one row per name x dtype x setting:
    disagree, failed, rel_error_spread, statuses, apart, message): the first `limit` names per
    setting, each with the dtypes that share its verdict. Apart, so that the report benchmark's
    per-group baseline ranks its own summary the same way."""
    frame = summary.assign(_spread=summary["rel_error_spread"].fillna(-1.0))
    order = ["disagree", "failed", "_spread", "name"]
    frame = frame.sort_values(order, ascending=[False, False, False, True])
    same = frame["disagree"] == frame.groupby(["name", "device", "mode"])["disagree"].transform("first")
    dtypes = frame[same].groupby(["name", "device", "mode"])["dtype"].agg(lambda d: ", ".join(sorted(d)))
    frame = frame.drop_duplicates(["name", "device", "mode"]).head(limit).copy()
    keys = zip(frame["name"], frame["device"], frame["mode"], strict=True)
    frame["dtypes"] = [dtypes[key] for key in keys]
    return frame[DISAGREEMENT_COLUMNS].reset_index(drop=True)
