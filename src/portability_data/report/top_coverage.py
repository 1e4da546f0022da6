"""The rest of each top 40 (issue 60): the 40 functions called in the most files of the leading
corpus per framework, each with its result (census, curated case) found through its canonical name,
or the reviewed reason it has none (unmeasured.yaml); and the share of the corpus's calls the census
covers, counted by the name written (before issue 60) and by the canonical function.

The ranking is by the name people wrote (the frequencies table's rows: a file's calls of two
aliases cannot be summed into files without double counting), each name shown beside its
canonical one; the result and the reason are the canonical function's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import yaml

from portability_data.readings.canonical import canonical_map
from portability_data.readings.crossframework import NOT_MEASURED
from portability_data.report.usage_ranking import corpus_order
from portability_data.tables.contracts import FRAMEWORKS

TOP = 40
REASONS_PATH = Path(__file__).with_name("unmeasured.yaml")
# kinds of reason: every one but pending says the function cannot be measured as a computation
CANNOT = ("entry_point", "graph_construction", "value_type", "host_utility", "file_io", "transformation")
REASON_KINDS = (*CANNOT, "pending")
REASON_FIELDS = ("framework", "function", "kind", "why", "source")
# a top function's status: its results, else its reason's (cannot / pending), else none
STATUSES = ("census", "curated", "census+curated", "cannot", "pending", "none")
COLUMNS = ["rank", "name", "canonical_name", "files", "calls", "status", "reason", "why", "source"]


class ReasonError(ValueError):
    """A bad entry in the reasons file: the message names the file, the entry and the field."""


@dataclass(frozen=True)
class Reason:
    framework: str
    function: str
    kind: str
    why: str
    source: str


def load_reasons(path: Path = REASONS_PATH, api: pd.DataFrame | None = None) -> dict[tuple[str, str], Reason]:
    """(framework, canonical function) -> its reviewed reason. Each entry is checked: its fields,
    kind, framework, a source that is a URL, no duplicate, and (given the api table) a function
    that is a canonical name (an alias's entry names its canonical name in the error)."""
    path = Path(path)
    try:
        entries = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ReasonError(f"{path}: not valid YAML: {exc}") from None
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise ReasonError(f"{path}: expected a list of entries, found {type(entries).__name__}")
    mapping = canonical_map(api)
    listed = set(mapping)
    out: dict[tuple[str, str], Reason] = {}
    for number, entry in enumerate(entries, 1):
        where = f"{path}: entry {number}"
        if not isinstance(entry, dict):
            raise ReasonError(f"{where}: expected a mapping with {', '.join(REASON_FIELDS)}")
        where = f"{where} ({entry.get('function', '?')})"
        unknown = sorted(set(entry) - set(REASON_FIELDS))
        if unknown:
            raise ReasonError(
                f"{where}: unknown field {', '.join(unknown)}; fields: {', '.join(REASON_FIELDS)}"
            )
        for name in REASON_FIELDS:
            value = entry.get(name)
            if not isinstance(value, str) or not value.strip():
                raise ReasonError(f"{where}: field {name} is missing or empty")
        framework, function, kind = entry["framework"], entry["function"], entry["kind"]
        if framework not in FRAMEWORKS:
            raise ReasonError(
                f"{where}: field framework: {framework!r} is not one of {', '.join(FRAMEWORKS)}"
            )
        if kind not in REASON_KINDS:
            raise ReasonError(f"{where}: field kind: {kind!r} is not one of {', '.join(REASON_KINDS)}")
        if not entry["source"].startswith(("https://", "http://")):
            raise ReasonError(f"{where}: field source: {entry['source']!r} is not a URL")
        if listed:
            if (framework, function) not in listed:
                raise ReasonError(
                    f"{where}: field function: {function} is not a {framework} name in the api table"
                )
            canonical = mapping[(framework, function)]
            if canonical != function:
                raise ReasonError(
                    f"{where}: field function: {function} is an alias of {canonical}; "
                    "write the canonical name"
                )
        if (framework, function) in out:
            raise ReasonError(f"{where}: field function: {function} has an entry already")
        out[(framework, function)] = Reason(framework, function, kind, entry["why"].strip(), entry["source"])
    return out


def _lead(frequencies: pd.DataFrame) -> pd.DataFrame:
    lead = corpus_order(sorted(set(frequencies["corpus"])))[0]
    return frequencies[frequencies["corpus"] == lead]


def _canonical_column(frame: pd.DataFrame, mapping: dict[tuple[str, str], str], column: str) -> pd.Series:
    mapped = [mapping.get((str(f), str(n)), str(n)) for f, n in zip(frame["framework"], frame[column])]
    found = pd.Series(mapped, index=frame.index, dtype=object)
    if "canonical_name" in frame:  # the table's own column where it is set (frequencies)
        found = frame["canonical_name"].astype(object).where(frame["canonical_name"].notna(), found)
    return found


def measured_functions(
    matrix: pd.DataFrame | None, outcomes: pd.DataFrame | None, mapping: dict[tuple[str, str], str]
) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(framework, canonical function) measured by the census (a pair with a verdict) and by a
    curated case (our outcomes)."""
    census: set[tuple[str, str]] = set()
    curated: set[tuple[str, str]] = set()
    if matrix is not None and len(matrix):
        ran = matrix[~matrix["status"].isin(NOT_MEASURED)]
        census = set(zip(ran["framework"], _canonical_column(ran, mapping, "function")))
    if outcomes is not None and len(outcomes):
        ours = outcomes[outcomes["source"] == "portability"]
        curated = set(zip(ours["framework"], _canonical_column(ours, mapping, "function")))
    return census, curated


def top_functions(
    frequencies: pd.DataFrame,
    api: pd.DataFrame | None,
    matrix: pd.DataFrame | None,
    outcomes: pd.DataFrame | None,
    reasons: dict[tuple[str, str], Reason],
    top: int = TOP,
) -> dict[str, pd.DataFrame]:
    """framework -> its `top` names by files of the leading corpus (then calls, then name), each
    with its canonical name, status and reason."""
    mapping = canonical_map(api)
    census, curated = measured_functions(matrix, outcomes, mapping)
    lead = _lead(frequencies)
    lead = lead.assign(canon=_canonical_column(lead, mapping, "qualified_name"))
    tables = {}
    for framework in [f for f in FRAMEWORKS if f in set(lead["framework"])]:
        mine = lead[(lead["framework"] == framework) & (lead["files"] > 0)]
        mine = mine.sort_values(["files", "calls", "qualified_name"], ascending=[False, False, True]).head(
            top
        )
        records = []
        for rank, row in enumerate(mine.itertuples(index=False), 1):
            key = (framework, row.canon)
            by = [name for name, found in (("census", census), ("curated", curated)) if key in found]
            reason = reasons.get(key)
            if by:
                status = "+".join(by)
            elif reason is not None:
                status = "pending" if reason.kind == "pending" else "cannot"
            else:
                status = "none"
            shown = reason if not by else None
            records.append(
                {
                    "rank": rank,
                    "name": row.qualified_name,
                    "canonical_name": row.canon if row.canon != row.qualified_name else "",
                    "files": int(row.files),
                    "calls": int(row.calls),
                    "status": status,
                    "reason": shown.kind if shown else "",
                    "why": shown.why if shown else "",
                    "source": shown.source if shown else "",
                }
            )
        tables[framework] = pd.DataFrame.from_records(records, columns=COLUMNS)
    return tables


def status_counts(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per framework: the top names by status."""
    records = []
    for framework, table in tables.items():
        counts = table["status"].value_counts()
        records.append(
            {"framework": framework, "top": len(table), **{s: int(counts.get(s, 0)) for s in STATUSES}}
        )
    return pd.DataFrame.from_records(records, columns=["framework", "top", *STATUSES])


def stale_reasons(tables: dict[str, pd.DataFrame], reasons: dict[tuple[str, str], Reason]) -> list[Reason]:
    """Reasons for functions that are not (or no longer) a top function without a result."""
    used = {
        (framework, canonical or name)
        for framework, table in tables.items()
        for name, canonical, status in zip(table["name"], table["canonical_name"], table["status"])
        if status in ("cannot", "pending")
    }
    return [reason for key, reason in sorted(reasons.items()) if key not in used]


def calls_coverage(frequencies: pd.DataFrame, api: pd.DataFrame | None, matrix: pd.DataFrame) -> pd.DataFrame:
    """Per framework: the share of the leading corpus's resolved calls to functions the census
    measured, by the name written (a call counts when the census measured that very name: the
    count before issue 60) and by the canonical function (a call counts when the census measured
    any name of its function)."""
    mapping = canonical_map(api)
    lead = _lead(frequencies)
    lead = lead.assign(canon=_canonical_column(lead, mapping, "qualified_name"))
    ran = matrix[~matrix["status"].isin(NOT_MEASURED)]
    records = []
    for framework in [f for f in FRAMEWORKS if f in set(ran["framework"])]:
        mine = lead[lead["framework"] == framework]
        total = int(mine["calls"].sum())
        measured = ran[ran["framework"] == framework]
        names = set(measured["function"])
        canonical = {mapping.get((framework, str(n)), str(n)) for n in names}
        by_name = int(mine.loc[mine["qualified_name"].isin(names), "calls"].sum())
        by_function = int(mine.loc[mine["canon"].isin(canonical), "calls"].sum())
        records.append(
            {
                "framework": framework,
                "calls": total,
                "measured_calls_by_name": by_name,
                "measured_calls_by_function": by_function,
                "pct_of_calls_by_name": round(100.0 * by_name / total, 1) if total else None,
                "pct_of_calls": round(100.0 * by_function / total, 1) if total else None,
            }
        )
    return pd.DataFrame.from_records(records)
