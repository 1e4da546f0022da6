"""The records of the tables a measurement starts from: the frameworks' API (`api`), how often the
corpus calls each name (`frequencies`), the samples drawn from them (`samples`) and the cases that
test each sampled function (`cases`). pyarrow only, like every contract."""

from __future__ import annotations

from typing import Any

from portability_data.tables.declaration import IDENTIFIER, QUALIFIED_NAME, SCHEMA_VERSION, FrameCheck, Table
from portability_data.tables.declaration import INT64 as _i64
from portability_data.tables.declaration import STRING as _str
from portability_data.tables.declaration import STRINGS as _strs
from portability_data.tables.declaration import Column as _col
from portability_data.tables.vocabulary import (
    API_ALIASES,
    API_KINDS,
    CASE_ORIGINS,
    CASE_STATUSES,
    FRAMEWORK,
    FRAMEWORKS,
    REPLACEMENT_REASONS,
    SAMPLE_STATUSES,
)


def _api_canonical_listed(frame: Any) -> Any:
    if "canonical_name" not in frame:
        return True  # the missing column is reported as such
    listed = set(zip(frame["framework"], frame["qualified_name"]))
    missing = frame["canonical_name"].isna()
    pairs = zip(frame["framework"], frame["canonical_name"], missing)
    known = [null or (framework, name) in listed for framework, name, null in pairs]
    return type(missing)(known, index=frame.index, dtype=bool)  # a pandas Series; pandas not imported here


def _api_alias_where_other(frame: Any) -> Any:
    if "alias" not in frame or "canonical_name" not in frame:
        return True  # the missing column is reported as such
    other = frame["canonical_name"].notna() & (frame["canonical_name"] != frame["qualified_name"])
    return (other == frame["alias"].notna()) | frame["canonical_name"].isna()


API_RECORD = Table(
    "api",
    "Every public function, builtin, class and method of a framework at one version.",
    (
        FRAMEWORK,
        _col("framework_version", _str, False, "installed version the API was read from", min_length=1),
        _col(
            "qualified_name", _str, False, "dotted public name, e.g. torch.nn.Linear", matches=QUALIFIED_NAME
        ),
        _col("module", _str, False, "public module the name was found in", matches=QUALIFIED_NAME),
        _col("name", _str, False, "bare name (last component)", min_length=1),
        _col("kind", _str, False, "function, builtin, class or method", isin=API_KINDS),
        _col(
            "canonical_name",
            _str,
            True,
            "the function this name refers to, under its canonical name (the same Python object or the "
            "documented alias; pipeline/api_aliases.py gives the rule); the name itself where it has no "
            "other; null in tables written before schema 11",
            matches=QUALIFIED_NAME,
            since=11,
        ),
        _col(
            "alias",
            _str,
            True,
            "how the name is canonical_name's: same_object or documented; null: it is the canonical name",
            isin=API_ALIASES,
            since=11,
        ),
    ),
    (
        FrameCheck(
            "unique_names",
            "qualified_name is duplicated within a framework",
            lambda frame: ~frame.duplicated(["framework", "qualified_name"], keep=False),
        ),
        FrameCheck(
            "canonical_listed",
            "canonical_name is not a qualified_name of the same framework",
            _api_canonical_listed,
        ),
        FrameCheck(
            "alias_where_other",
            "alias is set exactly where canonical_name differs from qualified_name",
            _api_alias_where_other,
        ),
    ),
)

FREQUENCIES_RECORD = Table(
    "frequencies",
    "How often each API function is called in a corpus (resolved and bare-name counts).",
    (
        FRAMEWORK,
        _col("corpus", _str, False, "corpus identifier (source and its parameters)", min_length=1),
        _col("qualified_name", _str, False, "API function counted", matches=QUALIFIED_NAME),
        _col("calls", _i64, False, "calls resolved to this qualified name through imports", ge=0),
        _col("bare_calls", _i64, False, "the study's count: bare identifier followed by '('", ge=0),
        _col("files", _i64, False, "corpus files with at least one resolved call", ge=0),
        _col("resolution", _str, False, "how calls were attributed: resolved, bare_only", min_length=1),
        _col(
            "canonical_name",
            _str,
            True,
            "the function qualified_name (the name the corpus wrote) refers to (api.canonical_name); null "
            "in tables written before schema 11",
            matches=QUALIFIED_NAME,
            since=11,
        ),
    ),
)

SAMPLES_RECORD = Table(
    "samples",
    "Every draw, overlap and replacement of a stratified sample (incl. the study's, mince2023).",
    (
        _col("sample_id", _str, False, "which sample, e.g. mince2023", matches=IDENTIFIER),
        FRAMEWORK,
        _col("function", _str, False, "qualified name of the sampled function", matches=QUALIFIED_NAME),
        _col("study_name", _str, True, "the name as the study spelled it, where it differs or is known"),
        _col(
            "bucket",
            _str,
            False,
            "top20 or the frequency decile 10..100",
            isin=("top20", *[str(decile) for decile in range(10, 101, 10)]),
        ),
        _col("frequency", _i64, True, "usage count the draw was based on, where known", ge=0),
        _col("draw_order", _i64, False, "order of the draw within the sample", ge=0),
        _col("status", _str, False, "kept, replaced, replacement or overlap", isin=SAMPLE_STATUSES),
        _col("replaced_by", _str, True, "function drawn in its place"),
        _col("reason", _str, True, "why it was replaced", isin=REPLACEMENT_REASONS),
        _col("seed", _i64, True, "random seed of the draw, where known"),
    ),
)

CASES_RECORD = Table(
    "cases",
    "The cases: curated (a test file written here) and census (an entry of the framework's own test "
    "database); the function, its test file, and where upstream tests it.",
    (
        _col(
            "case_id", _str, False, "unique case id, <framework>.<name>", matches=QUALIFIED_NAME, unique=True
        ),
        FRAMEWORK,
        _col("function", _str, False, "qualified name of the function under test", matches=QUALIFIED_NAME),
        _col(
            "canonical_name",
            _str,
            True,
            "function's canonical name (api.canonical_name), else itself",
            matches=QUALIFIED_NAME,
            since=12,
        ),
        _col("study_name", _str, True, "the study's spelling of the name, where it differs"),
        _col(
            "test_file",
            _str,
            True,
            "test file, relative to the repository root (null: removed)",
            matches=rf"^cases/({'|'.join(FRAMEWORKS)})/(census/)?test_[A-Za-z0-9_]+\.py$",
        ),
        _col("upstream_test", _str, True, "where the framework's own test lives (file::class::test)"),
        _col("samples", _strs, False, "sample ids the case belongs to"),
        _col("status", _str, False, "active, removed or unsuitable", isin=CASE_STATUSES),
        _col("removed_since", _str, True, "framework version that removed the function"),
        _col("notes", _str, False, "free-text notes"),
        _col("schema_version", _i64, False, "version of the case row format", ge=1, le=SCHEMA_VERSION),
        _col(
            "origin",
            _str,
            True,
            "curated (a case file written here) or a census source: opinfo, ...",
            isin=CASE_ORIGINS,
            since=4,
        ),
        _col(
            "no_compiled_form",
            _str,
            True,
            "why the function has no compiled form (graph or session API, Python hook, file I/O); "
            "null: compiled mode routes it through the compiler",
            since=4,
        ),
    ),
)
