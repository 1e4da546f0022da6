"""A function's canonical name read from the api table (api.canonical_name, written by the `api`
stage's alias finding in pipeline/api_aliases.py), so tables keyed by different spellings of one
function meet: coverage, the support matrix, the report.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd


def canonical_map(api: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    """(framework, name) -> canonical name, from an api table. A table written before the column
    existed (null canonical_name) maps nothing: every name is its own."""
    if api is None or not len(api) or "canonical_name" not in api:
        return {}
    known = api.dropna(subset=["canonical_name"])
    return {
        (str(fw), str(name)): str(canonical)
        for fw, name, canonical in zip(known["framework"], known["qualified_name"], known["canonical_name"])
    }


def canonical_of(mapping: Mapping[tuple[str, str], str], framework: str, name: str) -> str:
    """The canonical name of a name (the name itself where the api table does not list it)."""
    return mapping.get((framework, name), name)


def with_canonical(
    frame: pd.DataFrame,
    mapping: Mapping[tuple[str, str], str],
    column: str = "function",
    out: str = "canonical_name",
) -> pd.DataFrame:
    """``frame`` with ``out``: the canonical name of each row's ``column`` (per its framework).
    A table that already has ``out`` keeps its values where they are set."""
    if column not in frame or "framework" not in frame:
        missing = [c for c in (column, "framework") if c not in frame]
        raise KeyError(f"with_canonical: the table has no column {', '.join(missing)}")
    mapped = [mapping.get((str(fw), str(n)), str(n)) for fw, n in zip(frame["framework"], frame[column])]
    values = pd.Series(mapped, index=frame.index, dtype=object)
    if out in frame:
        values = frame[out].astype(object).where(frame[out].notna(), values)
    return frame.assign(**{out: values})
