"""The records of the tables computed from the runs (`outcomes`, `latencies`) and of the study's
printed numbers beside ours (`published`, `reproduction`). pyarrow only, like every contract."""

from __future__ import annotations

from typing import Any

from portability_data.tables.declaration import (
    BOOL,
    IDENTIFIER,
    PRINTED_NUMBER,
    QUALIFIED_NAME,
    FrameCheck,
    Table,
)
from portability_data.tables.declaration import FLOAT64 as _f64
from portability_data.tables.declaration import INT64 as _i64
from portability_data.tables.declaration import STRING as _str
from portability_data.tables.declaration import Column as _col
from portability_data.tables.vocabulary import (
    DEVICES,
    FAILURE_CATEGORIES,
    FRAMEWORK,
    FUNCTION_OUTCOMES,
    MODES,
    PUBLISHED_QUANTITIES,
    PUBLISHED_RELATIONS,
    PUBLISHED_TABLES,
    PUBLISHED_UNITS,
    REPRODUCTION_REASONS,
)

_SOURCE = _col("source", _str, False, "portability or mince2023", matches=IDENTIFIER)

OUTCOMES_RECORD = Table(
    "outcomes",
    "Per function x device x mode x source: success, partial or complete failure.",
    (
        _SOURCE,
        FRAMEWORK,
        _col("framework_version", _str, False, "framework version"),
        _col("function", _str, False, "qualified name", matches=QUALIFIED_NAME),
        _col("device", _str, False, "cpu, gpu, tpu or mps", isin=DEVICES),
        _col("device_model", _str, False, "hardware model"),
        _col("mode", _str, False, "eager or compiled", isin=MODES),
        _col(
            "outcome",
            _str,
            False,
            "success, partial_failure, complete_failure, unknown, unavailable, not_compiled, host_fallback",
            isin=FUNCTION_OUTCOMES,
        ),
        _col("n_subtests", _i64, False, "subtests counted (skipped ones excluded)", ge=0),
        _col("n_passed", _i64, False, "subtests that passed in every repeat", ge=0),
        _col("n_failed", _i64, False, "subtests that failed in some repeat", ge=0),
        _col("n_skipped", _i64, False, "subtests skipped", ge=0),
        _col(
            "dominant_failure_category", _str, True, "most frequent failure category", isin=FAILURE_CATEGORIES
        ),
        _col(
            "n_order_dependent",
            _i64,
            True,
            "subtests that failed in the run but passed alone (not failures)",
            ge=0,
            since=2,
        ),
        _col(
            "n_not_compiled",
            _i64,
            True,
            "compiled mode: subtests left out because they did not really compile (graph breaks, "
            "eager fallback, not routed)",
            ge=0,
            since=2,
        ),
        _col(
            "n_host_fallback",
            _i64,
            True,
            "subtests that ran (and did not fail) with ops on the host",
            ge=0,
            since=7,
        ),
    ),
)

LATENCIES_RECORD = Table(
    "latencies",
    "Per function x device (x reference device): the study's latency, median, spread, ratio; our runs' "
    "timings from quiet runs only (a run that measured other work on its cores is left out).",
    (
        _SOURCE,
        FRAMEWORK,
        _col("framework_version", _str, False, "framework version"),
        _col("function", _str, False, "qualified name", matches=QUALIFIED_NAME),
        _col("mode", _str, False, "eager or compiled", isin=MODES),
        _col("device", _str, False, "device measured", isin=DEVICES),
        _col("device_model", _str, False, "hardware model measured"),
        _col("reference_device", _str, True, "device it is paired with (null: unpaired)", isin=DEVICES),
        _col("reference_device_model", _str, True, "hardware model it is paired with"),
        _col("n_subtests", _i64, False, "subtests used", ge=1),
        _col("latency_ms", _f64, False, "study procedure: unweighted mean of subtest means, ms", ge=0),
        _col("median_ms", _f64, False, "median over subtest medians, ms", ge=0),
        _col("spread", _f64, False, "median relative spread (IQR/median) of the subtests", ge=0),
        _col("reference_latency_ms", _f64, True, "latency on the reference device, same subtests", ge=0),
        _col("ratio", _f64, True, "latency_ms / reference_latency_ms", ge=0),
    ),
)

# The columns `published` and `reproduction` share, alike in both.
_PUBLISHED_TABLE = _col(
    "published_table",
    _str,
    False,
    "per_function_latency, outcome_counts or stated_in_text",
    isin=PUBLISHED_TABLES,
)
_LOCATION = _col(
    "location", _str, False, "table or figure of the paper the value is printed in", min_length=1
)
_DECIMALS = _col("decimals", _i64, False, "printed precision: digits after the decimal point", ge=0)
_UNIT = _col("unit", _str, False, "ms, ratio, functions or %", isin=PUBLISHED_UNITS)

PUBLISHED_RECORD = Table(
    "published",
    "The 2023 study's numbers as printed (source mince2023-published), one row per value.",
    (
        _col(
            "source",
            _str,
            False,
            "who printed it: mince2023-published (the study's paper, as printed)",
            matches=IDENTIFIER,
        ),
        _col(
            "value_id",
            _str,
            False,
            "where the value sits in the transcribed tables: JSON pointer (#k: k-th value of a sentence)",
            startswith="/",
            unique=True,
        ),
        _PUBLISHED_TABLE,
        _LOCATION,
        FRAMEWORK,
        _col("device", _str, True, "device the value is about: gpu or tpu (null: none)", isin=DEVICES),
        _col("device_model", _str, True, "hardware model the value is about, e.g. T4, TPU v3-8"),
        _col(
            "reference_device",
            _str,
            True,
            "device it is compared with (ratios, slower-on-TPU shares)",
            isin=DEVICES,
        ),
        _col("reference_device_model", _str, True, "hardware model it is compared with"),
        _col("printed_name", _str, True, "the function as the study printed it (latency tables)"),
        _col(
            "quantity",
            _str,
            False,
            "what the value is: latency_ms, ratio, success, pct_failing, ...",
            isin=PUBLISHED_QUANTITIES,
        ),
        _col(
            "relation",
            _str,
            False,
            "equals (a rounded value) or at_most (a printed bound)",
            isin=PUBLISHED_RELATIONS,
        ),
        _col("value_text", _str, False, "the value as printed, without its unit", matches=PRINTED_NUMBER),
        _col("value", _f64, False, "the printed value as a number"),
        _DECIMALS,
        _UNIT,
        _col(
            "context",
            _str,
            False,
            "the printed sentence, or the table's caption as transcribed",
            min_length=1,
        ),
    ),
)


def _reason_iff_different(frame: Any) -> Any:
    equal = frame["equal"].astype(bool)
    explained = frame["reason"].notna() & frame["evidence"].notna()
    return (equal & frame["reason"].isna()) | (~equal & explained)


REPRODUCTION_RECORD = Table(
    "reproduction",
    "Every printed number of the study beside ours from its raw data: equal or not, and why.",
    (
        _col(
            "value_id", _str, False, "the published value (published.value_id)", startswith="/", unique=True
        ),
        _col("source", _str, False, "the raw data ours is computed from: mince2023", matches=IDENTIFIER),
        _PUBLISHED_TABLE,
        _LOCATION,
        FRAMEWORK,
        _col("device", _str, True, "device the value is about (null: none)", isin=DEVICES),
        _col("device_model", _str, True, "hardware model the value is about"),
        _col("reference_device", _str, True, "device it is compared with", isin=DEVICES),
        _col("reference_device_model", _str, True, "hardware model it is compared with"),
        _col("printed_name", _str, True, "the function as the study printed it"),
        _col(
            "function",
            _str,
            True,
            "our qualified name of the printed function (null: none or not matched)",
            matches=QUALIFIED_NAME,
        ),
        _col("quantity", _str, False, "what the value is (published.quantity)", isin=PUBLISHED_QUANTITIES),
        _col("relation", _str, False, "equals or at_most (published.relation)", isin=PUBLISHED_RELATIONS),
        _UNIT,
        _col("printed_text", _str, False, "the value as printed", matches=PRINTED_NUMBER),
        _col("printed_value", _f64, False, "the printed value as a number"),
        _DECIMALS,
        _col("ours", _f64, True, "ours: from our aggregation of the study's raw data (null: not derivable)"),
        _col("ours_text", _str, True, "ours rounded to the printed precision"),
        _col(
            "equal",
            BOOL,
            False,
            "ours equals the printed value at its printed precision (within it, for a bound)",
        ),
        _col(
            "reason",
            _str,
            True,
            "why they differ (null when equal): no_failure_report, hand_curated_outcome...",
            isin=REPRODUCTION_REASONS,
        ),
        _col(
            "derivation",
            _str,
            False,
            "how ours is computed: tables, devices, functions counted",
            min_length=1,
        ),
        _col("evidence", _str, True, "what in the data shows the reason: functions, subtests, outcomes"),
    ),
    (
        FrameCheck(
            "reason_iff_different",
            "a difference needs a reason and evidence; an equal value has no reason",
            _reason_iff_different,
        ),
    ),
)

REPRODUCTION_FUNCTIONS_RECORD = Table(
    "reproduction_functions",
    "Where the study's Table 8 differs from ours: each function our rules do not call a success, with "
    "the subtests behind our outcome.",
    (
        FRAMEWORK,
        _col("device_model", _str, False, "the study's hardware model (reproduction.device_model)"),
        _col("function", _str, False, "qualified name", matches=QUALIFIED_NAME),
        _col("in_sample", BOOL, False, "the function is in the study's sample (false: timed outside it)"),
        _col("ours", _str, False, "our outcome from the study's raw data", isin=FUNCTION_OUTCOMES),
        _col("passed", _i64, False, "the function's subtests that passed", ge=0),
        _col("failed", _i64, False, "its subtests that failed", ge=0),
        _col("unknown", _i64, False, "its subtests of unknown outcome (no report covers them)", ge=0),
        _col(
            "harness_only", _i64, False, "its subtests that failed only with the study's harness error", ge=0
        ),
        _col("printed_in_latency_tables", BOOL, False, "the study printed the function in a latency table"),
        _col(
            "evidence", _str, False, "the subtests behind our outcome, as the study's rows read", min_length=1
        ),
    ),
)
