"""Failing rows read again by the current failure rules (runner/rules/failures.yaml).

Result shards are immutable and carry the rule that classified each failure when it ran; a rule
added or mended later must still reach the tables built from them. Aggregation (curated outcomes)
and the census support matrix both read failures through `reclassify_failures`, so that a failure
the rules now put on the harness is the harness's in both. The study's imported rows (source
mince2023) keep the study's own reading; a message cut at the stored length that the rules no
longer recognise keeps the reading it had when whole.
"""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd

from portability_data.readings.frames import column_values
from portability_data.tables.contracts import FAILING_OUTCOMES, REREAD

STUDY_SOURCE = "mince2023"  # imported rows: the study's reading of its failures stays
STORED_MESSAGE_CHARS = 2000  # results keep this much of a message (runner/supervisor.py build_row)


def reclassify_failures(results: pd.DataFrame) -> pd.DataFrame:
    """The results with every failing row of our own sources classified again by the current rule
    table (failure_category, failure_rule, failure_subcategory), and a boolean column REREAD
    marking the rows whose reading changed (the rules: this module's docstring). Frames without
    error_type and error_message cannot be re-read and come back as they are (REREAD false)."""
    unchanged = results.assign(**{REREAD: False})
    if not len(results) or not {"error_type", "error_message"} <= set(results.columns):
        return unchanged
    outcomes = column_values(results["outcome"])
    # a frame without sources is ours (the census's own frames in tests, a local run's rows)
    sources = column_values(results["source"]) if "source" in results else [None] * len(results)
    rows = [
        i for i, (s, o) in enumerate(zip(sources, outcomes)) if s != STUDY_SOURCE and o in FAILING_OUTCOMES
    ]
    if not rows:
        return unchanged
    from portability_data.runner.failures import UNCLASSIFIED

    frameworks = column_values(results["framework"])
    types, messages = column_values(results["error_type"]), column_values(results["error_message"])
    names = ("failure_category", "failure_rule", "failure_subcategory")
    readings = [column_values(results[n]) if n in results else [None] * len(results) for n in names]
    changed = [False] * len(results)
    for i in rows:
        message = messages[i] or ""
        new = _reading(frameworks[i], types[i] or "", message, outcomes[i])
        old = tuple(reading[i] for reading in readings)
        cut = len(message) >= STORED_MESSAGE_CHARS
        if cut and new[1] == UNCLASSIFIED[1] and old[1] not in (None, UNCLASSIFIED[1]):
            continue
        if new != old:
            changed[i] = True
            for reading, value in zip(readings, new):
                reading[i] = value
    columns = {name: _like(results, name, reading) for name, reading in zip(names, readings)}
    return results.assign(**columns, **{REREAD: changed})


@functools.lru_cache(maxsize=1 << 16)
def _reading(framework: Any, error_type: str, message: str, outcome: Any) -> tuple[str, str, str | None]:
    """One failure's reading by the rule table, once per distinct failure in a process (the rules
    are read once per process too: failures.rules_for). A census repeats one error over many
    samples and dtypes (25,546 failing rows, 6,770 distinct, in the committed results), each
    reading ~40 regex searches, and the report reads the XLA rows twice (its tables, host fallback)."""
    from portability_data.runner.failures import classify_failure_detail

    return classify_failure_detail(framework, error_type, message, outcome=outcome)


def _like(frame: pd.DataFrame, name: str, values: list) -> pd.Series:
    """values as a column of frame: Arrow-typed where its column is, else plain objects (a plain
    frame's all-null column is float, which strings would not fit)."""
    dtype = frame[name].dtype if name in frame else None
    return pd.Series(values, index=frame.index, dtype=dtype if isinstance(dtype, pd.ArrowDtype) else object)
