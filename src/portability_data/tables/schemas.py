"""The table contracts as pandera models: column types from `contracts.py`, plus value checks.

Every table is validated against its model on every write and read (`tableio`). The models
are exported to `schemas/<table>.yaml` (`portability schemas export`); a test fails when an
exported file is out of date, and another when a model disagrees with its Arrow schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import pandera.pandas as pa
import pyarrow

from portability_data.tables import contracts as c

Str = Annotated[pd.ArrowDtype, pyarrow.string()]
Int = Annotated[pd.ArrowDtype, pyarrow.int64()]
Float = Annotated[pd.ArrowDtype, pyarrow.float64()]
StrList = Annotated[pd.ArrowDtype, pyarrow.list_(pyarrow.string())]
FloatList = Annotated[pd.ArrowDtype, pyarrow.list_(pyarrow.float64())]
Timestamp = Annotated[pd.ArrowDtype, pyarrow.timestamp("us", tz="UTC")]
Bool = Annotated[pd.ArrowDtype, pyarrow.bool_()]

# A number as a table of the paper prints it (no unit, no thousands separator).
PRINTED_NUMBER = r"^-?[0-9]+(\.[0-9]+)?$"
# A qualified name: dotted identifiers only (no calls, spaces or code).
QUALIFIED_NAME = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
IDENTIFIER = r"^[A-Za-z0-9_.:\-]+$"


class _Table(pa.DataFrameModel):
    class Config:
        strict = True
        ordered = True
        coerce = False


class ApiTable(_Table):
    """Every public function, builtin, class and method of a framework at one version."""

    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    framework_version: Str = pa.Field(str_length={"min_value": 1})
    qualified_name: Str = pa.Field(str_matches=QUALIFIED_NAME)
    module: Str = pa.Field(str_matches=QUALIFIED_NAME)
    name: Str = pa.Field(str_length={"min_value": 1})
    kind: Str = pa.Field(isin=c.API_KINDS)
    canonical_name: Str = pa.Field(str_matches=QUALIFIED_NAME, nullable=True)
    alias: Str = pa.Field(isin=c.API_ALIASES, nullable=True)

    @pa.dataframe_check(error="qualified_name is duplicated within a framework")
    def unique_names(cls, frame: pd.DataFrame) -> pd.Series:
        return ~frame.duplicated(["framework", "qualified_name"], keep=False)

    @pa.dataframe_check(error="canonical_name is not a qualified_name of the same framework")
    def canonical_listed(cls, frame: pd.DataFrame) -> pd.Series:
        if "canonical_name" not in frame:
            return pd.Series(True, index=frame.index)
        listed = set(zip(frame["framework"], frame["qualified_name"]))
        pairs = zip(frame["framework"], frame["canonical_name"])
        return pd.Series([pd.isna(c) or (f, c) in listed for f, c in pairs], index=frame.index)

    @pa.dataframe_check(error="alias is set exactly where canonical_name differs from qualified_name")
    def alias_where_other(cls, frame: pd.DataFrame) -> pd.Series:
        if "alias" not in frame or "canonical_name" not in frame:
            return pd.Series(True, index=frame.index)
        other = frame["canonical_name"].notna() & (frame["canonical_name"] != frame["qualified_name"])
        return (other == frame["alias"].notna()) | frame["canonical_name"].isna()


class FrequenciesTable(_Table):
    """How often each API function is called in a corpus: resolved and bare-name counts."""

    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    corpus: Str = pa.Field(str_length={"min_value": 1})
    qualified_name: Str = pa.Field(str_matches=QUALIFIED_NAME)
    calls: Int = pa.Field(ge=0)
    bare_calls: Int = pa.Field(ge=0)
    files: Int = pa.Field(ge=0)
    resolution: Str = pa.Field(str_length={"min_value": 1})
    canonical_name: Str = pa.Field(str_matches=QUALIFIED_NAME, nullable=True)


class SamplesTable(_Table):
    """Every draw, overlap and replacement of a stratified sample."""

    sample_id: Str = pa.Field(str_matches=IDENTIFIER)
    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    function: Str = pa.Field(str_matches=QUALIFIED_NAME)
    study_name: Str = pa.Field(nullable=True)
    bucket: Str = pa.Field(isin=("top20", *[str(d) for d in range(10, 101, 10)]))
    frequency: Int = pa.Field(ge=0, nullable=True)
    draw_order: Int = pa.Field(ge=0)
    status: Str = pa.Field(isin=c.SAMPLE_STATUSES)
    replaced_by: Str = pa.Field(nullable=True)
    reason: Str = pa.Field(isin=c.REPLACEMENT_REASONS, nullable=True)
    seed: Int = pa.Field(nullable=True)


class CasesTable(_Table):
    """The curated cases: one row per function with its test file and upstream test."""

    case_id: Str = pa.Field(str_matches=QUALIFIED_NAME, unique=True)
    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    function: Str = pa.Field(str_matches=QUALIFIED_NAME)
    canonical_name: Str = pa.Field(str_matches=QUALIFIED_NAME, nullable=True)
    study_name: Str = pa.Field(nullable=True)
    test_file: Str = pa.Field(
        str_matches=r"^cases/(torch|tensorflow|jax)/(census/)?test_[A-Za-z0-9_]+\.py$", nullable=True
    )
    upstream_test: Str = pa.Field(nullable=True)
    samples: StrList
    status: Str = pa.Field(isin=c.CASE_STATUSES)
    removed_since: Str = pa.Field(nullable=True)
    notes: Str
    schema_version: Int = pa.Field(ge=1, le=c.SCHEMA_VERSION)
    origin: Str = pa.Field(isin=c.CASE_ORIGINS, nullable=True)
    no_compiled_form: Str = pa.Field(nullable=True)


class ResultsTable(_Table):
    """One row per subtest x repeat of a run: outcome, failure category, op timings."""

    run_id: Str = pa.Field(str_matches=IDENTIFIER)
    source: Str = pa.Field(str_matches=IDENTIFIER)
    case_id: Str = pa.Field(str_matches=QUALIFIED_NAME)
    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    function: Str = pa.Field(str_matches=QUALIFIED_NAME)
    test_id: Str = pa.Field(str_length={"min_value": 1})
    subtest: Str = pa.Field(str_length={"min_value": 1})
    repeat: Int = pa.Field(ge=0)
    outcome: Str = pa.Field(isin=c.SUBTEST_OUTCOMES)
    failure_category: Str = pa.Field(isin=c.FAILURE_CATEGORIES, nullable=True)
    failure_rule: Str = pa.Field(nullable=True)
    error_type: Str = pa.Field(nullable=True)
    error_message: Str = pa.Field(nullable=True)
    op_latencies_ms: FloatList
    test_time_ms: Float = pa.Field(ge=0, nullable=True)
    device: Str = pa.Field(isin=c.DEVICES)
    device_model: Str = pa.Field(str_length={"min_value": 1})
    mode: Str = pa.Field(isin=c.MODES)
    framework_version: Str = pa.Field(str_length={"min_value": 1})
    execution: Str = pa.Field(isin=c.EXECUTIONS, nullable=True)
    graph_breaks: Int = pa.Field(ge=0, nullable=True)
    confirmation: Str = pa.Field(isin=c.CONFIRMATIONS, nullable=True)
    failure_subcategory: Str = pa.Field(nullable=True)
    oracle: Str = pa.Field(nullable=True)
    samples: Int = pa.Field(ge=0, nullable=True)
    samples_failed: Int = pa.Field(ge=0, nullable=True)
    samples_compared: Int = pa.Field(ge=0, nullable=True)
    max_abs_error: Float = pa.Field(ge=0, nullable=True)
    max_rel_error: Float = pa.Field(ge=0, nullable=True)
    host_fallback_ops: StrList = pa.Field(nullable=True)
    host_fallback_calls: Int = pa.Field(ge=0, nullable=True)
    device_compiles: Int = pa.Field(ge=0, nullable=True)
    device_compiles_timed: Int = pa.Field(ge=0, nullable=True)
    result_dtype: Str = pa.Field(nullable=True)
    oracle_dtype: Str = pa.Field(nullable=True)
    dtype_mismatches: Int = pa.Field(ge=0, nullable=True)
    compiler: Str = pa.Field(str_matches=IDENTIFIER, nullable=True)
    runtime: Str = pa.Field(str_matches=IDENTIFIER, nullable=True)

    @pa.dataframe_check(error="a host_fallback subtest names the ops that ran on the host or its host output")
    def host_fallback_says_what(cls, frame: pd.DataFrame) -> pd.Series:
        fallback = frame["outcome"] == "host_fallback"
        return ~fallback | frame["error_message"].notna()

    @pa.dataframe_check(error="a failed subtest needs a failure category, a passed one none")
    def category_matches_outcome(cls, frame: pd.DataFrame) -> pd.Series:
        failing = frame["outcome"].isin(c.FAILING_OUTCOMES)
        has_category = frame["failure_category"].notna()
        return (failing == has_category) | ~frame["outcome"].isin([*c.FAILING_OUTCOMES, "passed"])

    @pa.dataframe_check(error="(run_id, test_id, repeat) is duplicated")
    def unique_rows(cls, frame: pd.DataFrame) -> pd.Series:
        return ~frame.duplicated(["run_id", "test_id", "repeat"], keep=False)


class RunsTable(_Table):
    """One row per run: where, what, with which versions, and the timer's floor."""

    run_id: Str = pa.Field(str_matches=IDENTIFIER, unique=True)
    source: Str = pa.Field(str_matches=IDENTIFIER)
    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    framework_version: Str = pa.Field(str_length={"min_value": 1})
    device: Str = pa.Field(isin=c.DEVICES)
    device_model: Str = pa.Field(str_length={"min_value": 1})
    mode: Str = pa.Field(isin=c.MODES)
    repeats: Int = pa.Field(ge=1)
    timeout_s: Float = pa.Field(gt=0, nullable=True)
    host: Str
    os: Str
    python: Str
    cpu_model: Str
    accelerator: Str = pa.Field(nullable=True)
    driver: Str = pa.Field(nullable=True)
    packages: Str = pa.Field(str_startswith="{")
    git_commit: Str = pa.Field(nullable=True)
    params_hash: Str = pa.Field(nullable=True)
    timer_floor_ms: Float = pa.Field(ge=0, nullable=True)
    started_at: Timestamp = pa.Field(nullable=True)
    finished_at: Timestamp = pa.Field(nullable=True)
    status: Str = pa.Field(isin=c.RUN_STATUSES)
    n_results: Int = pa.Field(ge=0)
    cpu_flags: Str = pa.Field(nullable=True)
    cpu_count: Int = pa.Field(ge=1, nullable=True)
    memory_mb: Int = pa.Field(ge=1, nullable=True)
    build: Str = pa.Field(str_startswith="{", nullable=True)
    harness_digest: Str = pa.Field(nullable=True)
    cases_digest: Str = pa.Field(nullable=True)
    case_digests: Str = pa.Field(str_startswith="{", nullable=True)
    host_load_mean: Float = pa.Field(ge=0, nullable=True)
    host_load_max: Float = pa.Field(ge=0, nullable=True)
    host_other_cpu_mean: Float = pa.Field(ge=0, nullable=True)
    host_other_cpu_max: Float = pa.Field(ge=0, nullable=True)
    jobs: Int = pa.Field(ge=1, nullable=True)
    code_modified: Bool = pa.Field(nullable=True)
    compiler: Str = pa.Field(str_matches=IDENTIFIER, nullable=True)
    runtime: Str = pa.Field(str_matches=IDENTIFIER, nullable=True)


class OutcomesTable(_Table):
    """Per function x device x mode x source: success, partial or complete failure."""

    source: Str = pa.Field(str_matches=IDENTIFIER)
    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    framework_version: Str
    function: Str = pa.Field(str_matches=QUALIFIED_NAME)
    device: Str = pa.Field(isin=c.DEVICES)
    device_model: Str
    mode: Str = pa.Field(isin=c.MODES)
    outcome: Str = pa.Field(isin=c.FUNCTION_OUTCOMES)
    n_subtests: Int = pa.Field(ge=0)
    n_passed: Int = pa.Field(ge=0)
    n_failed: Int = pa.Field(ge=0)
    n_skipped: Int = pa.Field(ge=0)
    dominant_failure_category: Str = pa.Field(isin=c.FAILURE_CATEGORIES, nullable=True)
    n_order_dependent: Int = pa.Field(ge=0, nullable=True)
    n_not_compiled: Int = pa.Field(ge=0, nullable=True)
    n_host_fallback: Int = pa.Field(ge=0, nullable=True)


class LatenciesTable(_Table):
    """Per function x device (x reference device): the study's latency, median, spread, ratio."""

    source: Str = pa.Field(str_matches=IDENTIFIER)
    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    framework_version: Str
    function: Str = pa.Field(str_matches=QUALIFIED_NAME)
    mode: Str = pa.Field(isin=c.MODES)
    device: Str = pa.Field(isin=c.DEVICES)
    device_model: Str
    reference_device: Str = pa.Field(isin=c.DEVICES, nullable=True)
    reference_device_model: Str = pa.Field(nullable=True)
    n_subtests: Int = pa.Field(ge=1)
    latency_ms: Float = pa.Field(ge=0)
    median_ms: Float = pa.Field(ge=0)
    spread: Float = pa.Field(ge=0)
    reference_latency_ms: Float = pa.Field(ge=0, nullable=True)
    ratio: Float = pa.Field(ge=0, nullable=True)


class PublishedTable(_Table):
    """The study's printed numbers, one row per value, as printed (source mince2023-published)."""

    source: Str = pa.Field(str_matches=IDENTIFIER)
    value_id: Str = pa.Field(str_startswith="/", unique=True)
    published_table: Str = pa.Field(isin=c.PUBLISHED_TABLES)
    location: Str = pa.Field(str_length={"min_value": 1})
    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    device: Str = pa.Field(isin=c.DEVICES, nullable=True)
    device_model: Str = pa.Field(nullable=True)
    reference_device: Str = pa.Field(isin=c.DEVICES, nullable=True)
    reference_device_model: Str = pa.Field(nullable=True)
    printed_name: Str = pa.Field(nullable=True)
    quantity: Str = pa.Field(isin=c.PUBLISHED_QUANTITIES)
    relation: Str = pa.Field(isin=c.PUBLISHED_RELATIONS)
    value_text: Str = pa.Field(str_matches=PRINTED_NUMBER)
    value: Float
    decimals: Int = pa.Field(ge=0)
    unit: Str = pa.Field(isin=c.PUBLISHED_UNITS)
    context: Str = pa.Field(str_length={"min_value": 1})


class ReproductionTable(_Table):
    """Every published value beside ours from the study's raw data: equal or not, and why not."""

    value_id: Str = pa.Field(str_startswith="/", unique=True)
    source: Str = pa.Field(str_matches=IDENTIFIER)
    published_table: Str = pa.Field(isin=c.PUBLISHED_TABLES)
    location: Str = pa.Field(str_length={"min_value": 1})
    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    device: Str = pa.Field(isin=c.DEVICES, nullable=True)
    device_model: Str = pa.Field(nullable=True)
    reference_device: Str = pa.Field(isin=c.DEVICES, nullable=True)
    reference_device_model: Str = pa.Field(nullable=True)
    printed_name: Str = pa.Field(nullable=True)
    function: Str = pa.Field(str_matches=QUALIFIED_NAME, nullable=True)
    quantity: Str = pa.Field(isin=c.PUBLISHED_QUANTITIES)
    relation: Str = pa.Field(isin=c.PUBLISHED_RELATIONS)
    unit: Str = pa.Field(isin=c.PUBLISHED_UNITS)
    printed_text: Str = pa.Field(str_matches=PRINTED_NUMBER)
    printed_value: Float
    decimals: Int = pa.Field(ge=0)
    ours: Float = pa.Field(nullable=True)
    ours_text: Str = pa.Field(nullable=True)
    equal: Bool
    reason: Str = pa.Field(isin=c.REPRODUCTION_REASONS, nullable=True)
    derivation: Str = pa.Field(str_length={"min_value": 1})
    evidence: Str = pa.Field(nullable=True)

    @pa.dataframe_check(error="a difference needs a reason and evidence; an equal value has no reason")
    def reason_iff_different(cls, frame: pd.DataFrame) -> pd.Series:
        equal = frame["equal"].astype(bool)
        explained = frame["reason"].notna() & frame["evidence"].notna()
        return (equal & frame["reason"].isna()) | (~equal & explained)


class DeclaredTable(_Table):
    """What a framework's own test databases declare per function, device type and dtype."""

    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    framework_version: Str = pa.Field(str_length={"min_value": 1})
    function: Str = pa.Field(str_matches=QUALIFIED_NAME, nullable=True)
    unmapped_reason: Str = pa.Field(isin=c.UNMAPPED_REASONS, nullable=True)
    origin: Str = pa.Field(isin=c.DECLARED_ORIGINS)
    entry: Str = pa.Field(str_length={"min_value": 1})
    variant: Str = pa.Field(str_length={"min_value": 1}, nullable=True)
    device_type: Str = pa.Field(str_matches=r"^[a-z0-9_]+$", nullable=True)
    dtype: Str = pa.Field(str_matches=r"^[a-z0-9_]+$", nullable=True)
    declared: Str = pa.Field(isin=c.DECLARED_KINDS)
    aspect: Str = pa.Field(isin=c.DECLARED_ASPECTS, nullable=True)
    test_class: Str = pa.Field(nullable=True)
    test_name: Str = pa.Field(nullable=True)
    active: Bool = pa.Field(nullable=True)
    reason: Str = pa.Field(nullable=True)
    source: Str = pa.Field(str_length={"min_value": 1})

    @pa.dataframe_check(error="function and unmapped_reason: exactly one of them is set")
    def function_or_reason(cls, frame: pd.DataFrame) -> pd.Series:
        return frame["function"].notna() != frame["unmapped_reason"].notna()

    @pa.dataframe_check(error="a supported/unsupported dtype row names its device type and dtype")
    def dtype_rows_are_specific(cls, frame: pd.DataFrame) -> pd.Series:
        dtype_row = frame["declared"].isin(["supported_dtype", "unsupported_dtype"])
        return ~dtype_row | (frame["device_type"].notna() & frame["dtype"].notna())

    @pa.dataframe_check(error="the same declaration is recorded twice")
    def unique_declarations(cls, frame: pd.DataFrame) -> pd.Series:
        key = ["origin", "entry", "variant", "source", "device_type", "dtype", "declared", "aspect"]
        return ~frame.duplicated(key, keep=False)


class SupportMatrixTable(_Table):
    """The census: per function entry x dtype x setting, whether it works, against what it declares."""

    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    framework_version: Str = pa.Field(str_length={"min_value": 1})
    function: Str = pa.Field(str_matches=QUALIFIED_NAME)
    canonical_name: Str = pa.Field(str_matches=QUALIFIED_NAME, nullable=True)
    origin: Str = pa.Field(isin=c.CASE_ORIGINS)
    entry: Str = pa.Field(str_length={"min_value": 1})
    case_id: Str = pa.Field(str_matches=QUALIFIED_NAME)
    dtype: Str = pa.Field(str_matches=r"^[a-z0-9_]+$")
    device: Str = pa.Field(isin=c.DEVICES)
    device_model: Str = pa.Field(str_length={"min_value": 1})
    mode: Str = pa.Field(isin=c.MODES)
    run_id: Str = pa.Field(str_matches=IDENTIFIER)
    status: Str = pa.Field(isin=c.SUPPORT_STATUSES)
    samples: Int = pa.Field(ge=0, nullable=True)
    samples_failed: Int = pa.Field(ge=0, nullable=True)
    samples_compared: Int = pa.Field(ge=0, nullable=True)
    oracle: Str = pa.Field(nullable=True)
    max_abs_error: Float = pa.Field(ge=0, nullable=True)
    max_rel_error: Float = pa.Field(ge=0, nullable=True)
    error_type: Str = pa.Field(nullable=True)
    failure_category: Str = pa.Field(isin=c.FAILURE_CATEGORIES, nullable=True)
    confirmation: Str = pa.Field(isin=c.CONFIRMATIONS, nullable=True)
    error_message: Str = pa.Field(nullable=True)
    declared_dtype: Str = pa.Field(isin=c.DECLARED_DTYPE, nullable=True)
    declared_failures: Int = pa.Field(ge=0)
    finding: Str = pa.Field(isin=c.FINDINGS, nullable=True)
    result_dtype: Str = pa.Field(nullable=True)
    oracle_dtype: Str = pa.Field(nullable=True)
    dtype_mismatches: Int = pa.Field(ge=0, nullable=True)

    @pa.dataframe_check(error="one row per entry, dtype and setting")
    def one_row_per_pair(cls, frame: pd.DataFrame) -> pd.Series:
        key = ["framework", "case_id", "dtype", "device", "device_model", "mode", "framework_version"]
        return ~frame.duplicated(key, keep=False)

    @pa.dataframe_check(error="samples_failed cannot exceed samples")
    def failed_within_samples(cls, frame: pd.DataFrame) -> pd.Series:
        both = frame["samples"].notna() & frame["samples_failed"].notna()
        return ~both | (frame["samples_failed"] <= frame["samples"])

    @pa.dataframe_check(error="samples_compared cannot exceed samples")
    def compared_within_samples(cls, frame: pd.DataFrame) -> pd.Series:
        both = frame["samples"].notna() & frame["samples_compared"].notna()
        return ~both | (frame["samples_compared"] <= frame["samples"])

    @pa.dataframe_check(error="works claims every sample compared (samples_compared == samples)")
    def works_compared_every_sample(cls, frame: pd.DataFrame) -> pd.Series:
        # an order-dependent pair's measures are its failing run's; its verdict is the run alone's
        both = frame["samples"].notna() & frame["samples_compared"].notna()
        alone = frame["confirmation"] == "order_dependent"
        claims = (frame["status"] == "works") & both & ~alone
        return ~claims | (frame["samples_compared"] == frame["samples"])


class CrossframeworkTable(_Table):
    """One NumPy name x dtype x setting in two frameworks or more: each framework beside the others."""

    name: Str = pa.Field(str_length={"min_value": 1})
    reference: Str = pa.Field(str_matches=QUALIFIED_NAME)
    dtype: Str = pa.Field(str_matches=r"^[a-z0-9_]+$")
    device: Str = pa.Field(isin=c.DEVICES)
    mode: Str = pa.Field(isin=c.MODES)
    framework: Str = pa.Field(isin=c.FRAMEWORKS)
    framework_version: Str = pa.Field(str_length={"min_value": 1})
    function: Str = pa.Field(str_matches=QUALIFIED_NAME)
    origin: Str = pa.Field(isin=c.CASE_ORIGINS)
    run_id: Str = pa.Field(str_matches=IDENTIFIER)
    status: Str = pa.Field(isin=c.SUPPORT_STATUSES)
    samples: Int = pa.Field(ge=0, nullable=True)
    samples_failed: Int = pa.Field(ge=0, nullable=True)
    oracle: Str = pa.Field(nullable=True)
    max_abs_error: Float = pa.Field(ge=0, nullable=True)
    max_rel_error: Float = pa.Field(ge=0, nullable=True)
    error_type: Str = pa.Field(nullable=True)
    error_message: Str = pa.Field(nullable=True)
    frameworks: Int = pa.Field(ge=2)
    agreement: Str = pa.Field(isin=c.AGREEMENTS)
    stands_apart: Str = pa.Field(isin=c.STANDS_APART, nullable=True)
    rel_error_spread: Float = pa.Field(ge=0, nullable=True)
    result_dtype: Str = pa.Field(nullable=True)
    oracle_dtype: Str = pa.Field(nullable=True)
    dtype_mismatches: Int = pa.Field(ge=0, nullable=True)
    dtype_agreement: Str = pa.Field(isin=c.DTYPE_AGREEMENTS, nullable=True)

    @pa.dataframe_check(error="one row per name, dtype, setting and framework")
    def one_row_per_framework(cls, frame: pd.DataFrame) -> pd.Series:
        return ~frame.duplicated(["name", "dtype", "device", "mode", "framework"], keep=False)

    @pa.dataframe_check(error="frameworks must count the group's rows")
    def frameworks_counts_the_group(cls, frame: pd.DataFrame) -> pd.Series:
        counted = frame.groupby(["name", "dtype", "device", "mode"])["framework"].transform("count")
        return frame["frameworks"] == counted


MODELS: dict[str, type[_Table]] = {
    "api": ApiTable,
    "frequencies": FrequenciesTable,
    "samples": SamplesTable,
    "cases": CasesTable,
    "results": ResultsTable,
    "runs": RunsTable,
    "outcomes": OutcomesTable,
    "latencies": LatenciesTable,
    "published": PublishedTable,
    "reproduction": ReproductionTable,
    "declared": DeclaredTable,
    "support_matrix": SupportMatrixTable,
    "crossframework": CrossframeworkTable,
}


def model_for(table: str) -> type[_Table]:
    try:
        return MODELS[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; known tables: {', '.join(MODELS)}") from None


def export_yaml(table: str) -> str:
    """The model as pandera YAML, with a header naming its source (the file is generated)."""
    import warnings

    model = model_for(table)
    header = (
        f"# Generated from portability_data.tables.schemas.{model.__name__} by `portability schemas export`;"
        " do not edit.\n"
    )
    schema = model.to_schema()
    for check in schema.checks:  # table-wide checks are code, which pandera's YAML leaves out
        header += f"# table-wide check {check.name}: {check.error}\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return header + str(model.to_yaml())


def export_all(folder: Path) -> list[Path]:
    """Write schemas/<table>.yaml for every table; returns the files written."""
    from portability_data.tables.atomic import atomic_write_bytes

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for table in MODELS:
        path = folder / f"{table}.yaml"
        atomic_write_bytes(path, export_yaml(table).encode())
        written.append(path)
    return written
