"""The census in the report (the `support_matrix` table): how much of each framework's API it
measures, what works per setting, where measurement and declaration disagree, and whether the
study's method (5 functions per usage decile) estimates the failure share of the whole population.

Coverage counts public functions (api table kind function, method and class) with at least one
measured pair, also weighted by their calls in the leading usage corpus; a call counts when the
census measured its function under any of its names (api.canonical_name, issue 60), the count by
the name written beside it (pct_of_calls_by_name: the figure before issue 60). A census function fails in
a setting when one of its pairs that the framework declares supported there fails or partly fails
(a dtype it does not declare is a finding, not a failure, as the study counted only what a function
claims to do). Population vs sample: per usage decile of the leading corpus (the sampling stage's
cuts), the share of measured census functions failing, beside the share of the curated sample's
functions failing in the same setting (outcomes table, our source).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from portability_data.readings.canonical import canonical_map, canonical_of, with_canonical
from portability_data.readings.crossframework import NOT_MEASURED
from portability_data.readings.frames import plain_frame
from portability_data.readings.samples import decile_buckets
from portability_data.report.census_moves import TOP_LOST, device_moves, route_pairs
from portability_data.report.render import Section
from portability_data.report.top_coverage import REASONS_PATH, TOP, load_reasons, status_counts, top_functions
from portability_data.report.usage_ranking import corpus_order
from portability_data.runner.generator import KINDS as KINDS_OF_INPUT
from portability_data.tables.tableio import read_table

SETTING = ["framework", "device", "mode"]
FAILING_STATUS = ("fails", "partial")
# host_fallback: ran with ops on the host; not_in_wheel, harness: not measured (the wheel lacks the
# entry; our test code failed); the rest are the worker's faults
KINDS = (
    "works",
    "ran",
    "partial",
    "fails",
    "deviates",
    "reference_quirk",
    "unconfirmed",
    "host_fallback",
    "no_sample",
    "not_in_wheel",
    "harness",
)
API_KINDS = ("function", "method", "class")
TOP_FINDINGS = 8  # per framework
SAMPLE_2026 = "portability2026"
NUMPY_CLAIMED = ("numpy", "tnp")  # census origins held to NumPy on the inputs NumPy accepts
TOP_DEVIATIONS = 15
TOP_PROMOTIONS = 25  # cross-framework groups whose result dtypes differ


def claimed(matrix: pd.DataFrame) -> pd.Series:
    """The pairs a function claims to handle: declared supported by the framework; for the census
    against NumPy (origins of NUMPY_CLAIMED, where the framework declares nothing per dtype), every
    pair, since a NumPy namesake claims NumPy's behaviour and the manifest holds only the inputs
    NumPy itself accepts."""
    return (matrix["declared_dtype"] == "supported") | (
        matrix["declared_dtype"].isna() & matrix["origin"].isin(NUMPY_CLAIMED)
    )


def function_status(matrix: pd.DataFrame) -> pd.DataFrame:
    """Per setting and function: pairs, pairs failing among those it claims (claimed), pairs failing
    at all, verdict (fails: a claimed pair fails)."""
    claims = claimed(matrix)
    failing = matrix["status"].isin(FAILING_STATUS)
    frame = matrix.assign(_declared_fail=failing & claims, _declared=claims, _failing=failing)
    grouped = frame.groupby([*SETTING, "function"])
    table = pd.DataFrame(
        {
            "pairs": grouped.size(),
            "declared_pairs": grouped["_declared"].sum(),
            "failing_declared": grouped["_declared_fail"].sum(),
            "failing_pairs": grouped["_failing"].sum(),
        }
    ).reset_index()
    table["fails"] = table["failing_declared"] > 0
    return table


def status_summary(matrix: pd.DataFrame) -> pd.DataFrame:
    """Per setting: entries, functions, pairs per status, findings, and how many pairs the device
    judge measured (`pairs_device_judge`: samples_compared recorded, issue 48; the others stand on
    an earlier harness until their chunk is re-measured)."""
    records = []
    functions = function_status(matrix)
    for setting, group in matrix.groupby(SETTING, sort=True):
        counts = group["status"].value_counts()
        mine = functions.set_index(SETTING).loc[setting]
        records.append(
            {
                **dict(zip(SETTING, setting)),
                "entries": group["entry"].nunique(),
                "functions": group["function"].nunique(),
                "functions_failing_claimed": int(mine["fails"].sum()),
                "functions_failing_any": int((mine["failing_pairs"] > 0).sum()),
                "pairs": len(group),
                "pairs_device_judge": int(group["samples_compared"].notna().sum())
                if "samples_compared" in group
                else 0,
                **{status: int(counts.get(status, 0)) for status in KINDS},
                "faults": int(counts.drop(list(KINDS), errors="ignore").sum()),
                "declared_supported_fails": int((group["finding"] == "declared_supported_fails").sum()),
                "declared_unsupported_works": int((group["finding"] == "declared_unsupported_works").sum()),
            }
        )
    return pd.DataFrame.from_records(records)


def coverage(
    matrix: pd.DataFrame, api: pd.DataFrame | None, frequencies: pd.DataFrame | None
) -> pd.DataFrame:
    """Per framework: public API names, split into functions, classes and methods (one total called
    "functions" counted torch's 35,649 methods as functions), the names that are another's alias,
    the measured ones, and the share of calls they account for: by canonical function
    (pct_of_calls) and by the name written (pct_of_calls_by_name)."""
    records = []
    mapping = canonical_map(api)
    for framework, group in matrix.groupby("framework"):
        ran = group[~group["status"].isin(NOT_MEASURED)]
        measured = set(ran["function"])
        measured_functions = set(with_canonical(ran, mapping)["canonical_name"])  # the matrix's own
        public, kinds, functions = set(), pd.Series(dtype=object), set()
        if api is not None and len(api):
            mine = api[(api["framework"] == framework) & api["kind"].isin(API_KINDS)]
            public = set(mine["qualified_name"])
            kinds = mine.drop_duplicates("qualified_name")["kind"]
            functions = {canonical_of(mapping, framework, n) for n in public}
        record: dict[str, Any] = {
            "framework": framework,
            "public_names": len(public),
            "public_functions": int((kinds == "function").sum()),
            "public_classes": int((kinds == "class").sum()),
            "public_methods": int((kinds == "method").sum()),
            "aliases": len(public) - len(functions) if public else 0,
            "measured_names": len(measured),
            "pct_of_public": round(100.0 * len(measured & public) / len(public), 1) if public else None,
            "pct_of_public_functions": (
                round(100.0 * len(measured_functions & functions) / len(functions), 1) if functions else None
            ),
        }
        calls = _calls(frequencies, framework)
        if calls is not None and calls.sum() > 0:
            by_function = _calls(frequencies, framework, mapping)
            assert by_function is not None
            measured_calls = by_function[by_function.index.isin(measured_functions)].sum()
            record["pct_of_calls"] = round(100.0 * measured_calls / by_function.sum(), 1)
            record["pct_of_calls_by_name"] = round(
                100.0 * calls[calls.index.isin(measured)].sum() / calls.sum(), 1
            )
        records.append(record)
    return pd.DataFrame.from_records(records)


def _calls(
    frequencies: pd.DataFrame | None, framework: str, mapping: dict[tuple[str, str], str] | None = None
) -> pd.Series | None:
    """Resolved calls per name written in the leading corpus (the one the sample is drawn from), or,
    given the canonical `mapping`, per canonical function (its names' calls summed)."""
    if frequencies is None or not len(frequencies):
        return None
    lead = corpus_order(sorted(set(frequencies["corpus"])))[0]
    mine = frequencies[(frequencies["framework"] == framework) & (frequencies["corpus"] == lead)]
    if mapping is None:
        return mine.groupby("qualified_name")["calls"].sum()
    mine = with_canonical(mine, mapping, column="qualified_name")
    return mine.groupby("canonical_name")["calls"].sum()


def population_vs_sample(
    matrix: pd.DataFrame,
    frequencies: pd.DataFrame | None,
    outcomes: pd.DataFrame | None,
    samples: pd.DataFrame | None,
    api: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per setting and usage decile: census functions failing (population) beside the curated
    sample's functions failing (the study's method), in the same setting."""
    columns = [*SETTING, "bucket", "population", "population_pct_failing", "sample", "sample_pct_failing"]
    records = []
    functions = function_status(matrix)
    mapping = canonical_map(api)
    for framework in sorted(set(matrix["framework"])):
        calls = _calls(frequencies, framework, mapping)
        if calls is None:
            continue
        used = calls[calls > 0]
        bucket_of = _deciles(used)  # per canonical function: its names' calls summed
        sample_bucket = _sample_buckets(samples, framework)
        for (fw, device, mode), group in functions[functions["framework"] == framework].groupby(SETTING):
            canonical = group["function"].map(lambda n, fw=fw: canonical_of(mapping, fw, n))
            group = group.assign(bucket=canonical.map(bucket_of)).dropna(subset=["bucket"])
            ours = _sample_failing(outcomes, fw, device, mode, sample_bucket)
            for bucket in sorted(set(group["bucket"]) | set(ours), key=_bucket_key):
                in_bucket = group[group["bucket"] == bucket]
                sample_known = ours.get(bucket, [])
                records.append(
                    {
                        "framework": fw,
                        "device": device,
                        "mode": mode,
                        "bucket": bucket,
                        "population": len(in_bucket),
                        "population_pct_failing": _pct(in_bucket["fails"].sum(), len(in_bucket)),
                        "sample": len(sample_known),
                        "sample_pct_failing": _pct(sum(sample_known), len(sample_known)),
                    }
                )
    return pd.DataFrame.from_records(records, columns=columns)


def _deciles(calls: pd.Series) -> dict[str, str]:
    """function -> usage decile label as the sampling stage cuts them (10 = least used)."""
    values = calls.to_numpy(dtype=float)
    found: dict[str, str] = {}
    for label, lower, upper in decile_buckets(values, 10):
        for function, value in calls.items():
            if lower < value <= upper and function not in found:
                found[str(function)] = label
    return found


def _sample_buckets(samples: pd.DataFrame | None, framework: str) -> dict[str, str]:
    """function -> bucket of the study's sample (mince2023) for the framework (decile buckets only)."""
    if samples is None or not len(samples):
        return {}
    mine = samples[(samples["framework"] == framework) & (samples["sample_id"] == "mince2023")]
    mine = mine[mine["status"].isin(["kept", "replacement", "overlap"]) & (mine["bucket"] != "top20")]
    return dict(zip(mine["function"], mine["bucket"].astype(str)))


def _sample_failing(
    outcomes: pd.DataFrame | None, framework: str, device: str, mode: str, buckets: dict[str, str]
) -> dict[str, list[bool]]:
    """bucket -> failing flags of the sample's functions with a known outcome (our runs)."""
    found: dict[str, list[bool]] = {}
    if outcomes is None or not len(outcomes):
        return found
    mine = outcomes[
        (outcomes["framework"] == framework)
        & (outcomes["device"] == device)
        & (outcomes["mode"] == mode)
        & (outcomes["source"] == "portability")
        & outcomes["outcome"].isin(["success", "partial_failure", "complete_failure"])
    ]
    for function, outcome in zip(mine["function"], mine["outcome"]):
        if function in buckets:
            found.setdefault(buckets[function], []).append(outcome != "success")
    return found


def _bucket_key(bucket: str) -> float:
    try:
        return -float(bucket)
    except ValueError:
        return 0.0


def _pct(part: float, whole: int) -> float | None:
    return round(100.0 * float(part) / whole, 1) if whole else None


def top_findings(matrix: pd.DataFrame, per_framework: int = TOP_FINDINGS) -> pd.DataFrame:
    """Where measurement and declaration disagree, one row per function, finding and setting with
    its dtypes listed: declared supported but fails first (a user's program breaks), then declared
    unsupported but works; within each, the functions disagreeing on most dtypes first. The first
    `per_framework` of each framework, so one framework's many findings (TensorFlow's integer
    division on edge inputs) do not hide another's."""
    keys = ["framework", "finding", "function", "device", "mode"]
    columns = [*keys, "dtypes", "samples_failed", "samples", "error_type"]
    found = matrix[matrix["finding"].notna()]
    if not len(found):
        return pd.DataFrame(columns=columns)
    grouped = found.groupby(keys, as_index=False, dropna=False).agg(
        dtypes=("dtype", lambda d: ", ".join(sorted(set(d)))),
        n_dtypes=("dtype", "nunique"),
        samples_failed=("samples_failed", "sum"),
        samples=("samples", "sum"),
        error_type=("error_type", lambda e: next((x for x in e if isinstance(x, str)), None)),
    )
    grouped["_order"] = (grouped["finding"] != "declared_supported_fails").astype(int)
    grouped = grouped.sort_values(
        ["framework", "_order", "n_dtypes", "function"], ascending=[True, True, False, True]
    )
    top = grouped.groupby("framework", sort=True).head(per_framework)
    return top[columns].reset_index(drop=True)


def largest_deviations(matrix: pd.DataFrame, limit: int = TOP_DEVIATIONS) -> pd.DataFrame:
    """The pairs furthest from their oracle (largest finite relative error first), among those that
    ran: where a framework leaves NumPy, its own reference or its eager self, and by how much. Pairs
    with a NaN or an infinity where the oracle has a number (an infinite error) are counted by
    `numpy_disagreements` and the status table, not ranked here."""
    ran = matrix[matrix["status"].isin(["works", "deviates", "partial"]) & matrix["max_rel_error"].notna()]
    finite = np.isfinite(ran["max_rel_error"].astype(float))  # inf: NaN or inf where a number is due
    ran = ran[finite & (ran["max_rel_error"] > 0)]
    ran = ran.sort_values(["max_rel_error", "function"], ascending=[False, True])
    columns = ["framework", "function", "dtype", "mode", "oracle", "status", "max_abs_error", "max_rel_error"]
    return ran[columns].head(limit).reset_index(drop=True)


def numpy_disagreements(matrix: pd.DataFrame) -> pd.DataFrame:
    """Per framework, mode and input kind (edge values, empty, 0-d, odd, broadcast, large): the
    NumPy namesakes whose first failing input is of that kind, off NumPy's values or raising
    where NumPy does not. The kind comes from the failure's message (the census labels every
    input: `input edge (9,) float32`); a pair that raised carries the framework's own message,
    without the label."""
    columns = ["framework", "mode", "input_kind", "pairs", "functions", "deviates", "raises", "examples"]
    named = matrix[
        matrix["origin"].isin(NUMPY_CLAIMED) & matrix["status"].isin(["deviates", *FAILING_STATUS])
    ]
    if named.empty or "error_message" not in named:
        return pd.DataFrame(columns=columns)
    pattern = rf"input ({'|'.join(KINDS_OF_INPUT)}) "
    kinds = named["error_message"].astype("string").str.extract(pattern, expand=False)
    named = named.assign(input_kind=kinds.fillna("raised (no input label)"))
    records = []
    for (framework, mode, kind), group in named.groupby(["framework", "mode", "input_kind"]):
        functions = sorted(set(group["function"]))
        records.append(
            {
                "framework": framework,
                "mode": mode,
                "input_kind": kind,
                "pairs": len(group),
                "functions": len(functions),
                "deviates": int((group["status"] == "deviates").sum()),
                "raises": int(group["status"].isin(FAILING_STATUS).sum()),
                "examples": ", ".join(f.rsplit(".", 1)[-1] for f in functions[:6]),
            }
        )
    return pd.DataFrame.from_records(records, columns=columns)


def sample_2026_measured(
    matrix: pd.DataFrame, samples: pd.DataFrame | None, outcomes: pd.DataFrame | None
) -> pd.DataFrame:
    """Per framework: functions of the 2026 sample with an outcome by census, by curated case, none."""
    if samples is None or not len(samples):
        return pd.DataFrame()
    drawn = samples[(samples["sample_id"] == SAMPLE_2026) & (samples["status"] != "replaced")]
    curated = set()
    if outcomes is not None and len(outcomes):
        ours = outcomes[outcomes["source"] == "portability"]
        curated = set(zip(ours["framework"], ours["function"]))
    census = set(zip(matrix["framework"], matrix["function"]))
    records = []
    for framework, group in drawn.groupby("framework"):
        functions = set(group["function"])
        by_census = {f for f in functions if (framework, f) in census}
        by_curated = {f for f in functions if (framework, f) in curated}
        records.append(
            {
                "framework": framework,
                "functions": len(functions),
                "census": len(by_census),
                "curated": len(by_curated),
                "measured": len(by_census | by_curated),
                "pct_measured": _pct(len(by_census | by_curated), len(functions)),
            }
        )
    return pd.DataFrame.from_records(records)


def _optional(data_dir: Path, table: str, relative: str) -> pd.DataFrame | None:
    path = data_dir / relative
    return plain_frame(read_table(table, path)) if path.exists() else None


def census_section(data_dir: Path) -> tuple[Section, dict[str, Any]] | None:
    """The report section (None when no census has run)."""
    data_dir = Path(data_dir)
    matrix = _optional(data_dir, "support_matrix", "census/support_matrix.parquet")
    if matrix is None or matrix.empty:
        return None
    api = _optional(data_dir, "api", "api")
    frequencies = _optional(data_dir, "frequencies", "frequencies")
    outcomes = _optional(data_dir, "outcomes", "outcomes")
    samples = _optional(data_dir, "samples", "samples")
    summary = status_summary(matrix)
    covered = coverage(matrix, api, frequencies)
    versus = population_vs_sample(matrix, frequencies, outcomes, samples, api)
    reasons = load_reasons(REASONS_PATH, api)
    tops = top_functions(frequencies, api, matrix, outcomes, reasons) if frequencies is not None else {}
    fresh = sample_2026_measured(matrix, samples, outcomes)
    moved, lost = device_moves(matrix)
    dtypes_off = result_dtypes_off_numpy(matrix)
    text = (
        "Each framework's own test databases (PyTorch's OpInfo, ModuleInfo, OptimizerInfo and NumPy "
        "namesakes; JAX's primitive harnesses and jax.numpy; tf.experimental.numpy and a reviewed "
        "mapping of TensorFlow's numeric API) run through the same harness, one subtest per function x "
        "dtype: which functions work, fail or deviate from their oracle per setting, what leaves them "
        "moving off the CPU, what one route off it keeps that another loses, and where frameworks "
        "disagree on one NumPy name. The oracle is the "
        "entry's own reference function (upstream's reference for a ModuleInfo entry, not NumPy), NumPy "
        "for the NumPy namesakes, eager for the compiled mode, and off the host CPU also the CPU's result "
        "of the same sample (`reference+cpu`: the differential oracle). `works`: every sample ran and "
        "matched an oracle (rows since schema 11 count them: `samples_compared` equals `samples`); "
        "`ran`: every sample ran and some sample had nothing to judge it, never counted as works; "
        "`no_sample`: the sample generator raised on the device before any sample existed (nothing of "
        "the function ran). Per setting, `pairs_device_judge` counts the pairs measured by that judge "
        "(schema 11); the rest stand on an earlier harness until their chunk is re-measured. How it is "
        "counted: "
        "[docs/METHOD.md, The census](../docs/METHOD.md#the-census)."
    )
    section = Section(
        "The census: every function the framework can feed itself",
        text,
        [
            ("Per setting: entries, functions, pairs by status, findings", summary),
            (
                "Coverage of the public API and of its calls (leading corpus): pct_of_calls counts a call "
                "when its function is measured under any of its names, pct_of_calls_by_name only under "
                "the name written",
                covered,
            ),
            (f"The {TOP} most called functions per framework (files): status", status_counts(tops)),
            *[
                (
                    f"{framework}: the {TOP} functions called in the most files, with their result or the "
                    "reason they have none",
                    table,
                )
                for framework, table in tops.items()
            ],
            ("Failing share per usage decile: population (census) vs the study's sample (curated)", versus),
            (
                f"Declared vs measured: the first {TOP_FINDINGS} disagreements of each framework",
                top_findings(matrix),
            ),
            (
                f"Furthest from the oracle: the {TOP_DEVIATIONS} largest relative deviations",
                largest_deviations(matrix),
            ),
            (
                "NumPy namesakes off NumPy, by the kind of their first failing input",
                numpy_disagreements(matrix),
            ),
            (
                "Moving off the CPU: each pair measured on the CPU and on another device, by what it did",
                moved,
            ),
            (
                f"Lost moving off the CPU: per path, the {TOP_LOST} functions with most pairs working on the "
                "CPU only, with the path's first error",
                lost,
            ),
            (
                "Two routes off the CPU: per framework and mode, two device paths on the same pairs, and the "
                "pairs (functions) only one of them runs whole on the device",
                route_pairs(matrix),
            ),
            ("The 2026 sample: functions with an outcome, by census or curated case", fresh),
            ("Result dtypes off NumPy's on the same inputs (NumPy namesakes): pairs per setting", dtypes_off),
            (
                f"Dtype promotion off NumPy's: the {TOP_PROMOTIONS} commonest (input, result, NumPy's) rules",
                promotion_patterns(matrix),
            ),
            *crossframework_tables(data_dir),
        ],
        [],
    )
    metrics = {
        "pairs": len(matrix),
        "functions": int(matrix["function"].nunique()),
        "findings": {k: int(v) for k, v in matrix["finding"].value_counts().items()},
        "pct_of_calls": {  # by canonical function; by_name: by the name written (before issue 60)
            str(r["framework"]): {
                "by_function": _number(r.get("pct_of_calls")),
                "by_name": _number(r.get("pct_of_calls_by_name")),
            }
            for r in covered.to_dict("records")
        },
        "top_statuses": {
            str(r["framework"]): {k: int(v) for k, v in r.items() if k != "framework"}
            for r in status_counts(tops).to_dict("records")
        },
        "mean_abs_gap_population_vs_sample": _mean_gap(versus),
        "moves": [  # the report's opening reads these (report.findings)
            {k: (v if isinstance(v, str) else int(v)) for k, v in record.items()}
            for record in moved[
                ["framework", "mode", "device", "functions_both", "functions_lost", "functions_unconfirmed"]
            ].to_dict("records")
        ]
        if len(moved)
        else [],
    }
    return section, metrics


def promotion_patterns(matrix: pd.DataFrame, limit: int = TOP_PROMOTIONS) -> pd.DataFrame:
    """The dtype promotions that part a framework from NumPy, as rules: per framework, mode and
    input dtype, the result dtype beside NumPy's, with how many functions follow it (most first)."""
    columns = ["framework", "mode", "input_dtype", "result_dtype", "numpy_dtype", "functions", "examples"]
    if "dtype_mismatches" not in matrix:
        return pd.DataFrame(columns=columns)
    off = matrix[matrix["dtype_mismatches"].astype(float) > 0]
    if off.empty:
        return pd.DataFrame(columns=columns)
    frame = (
        off.groupby(["framework", "mode", "dtype", "result_dtype", "oracle_dtype"])["entry"]
        .agg(functions="nunique", examples=lambda e: ", ".join(sorted(set(e))[:4]))
        .reset_index()
        .rename(columns={"dtype": "input_dtype", "oracle_dtype": "numpy_dtype"})
        .sort_values(["functions", "framework", "input_dtype"], ascending=[False, True, True])
    )
    return frame[columns].head(limit).reset_index(drop=True)


def crossframework_tables(data_dir: Path) -> list[tuple[str, pd.DataFrame]]:
    """The cross-framework table's size per setting and its ten largest disagreements (none before
    two frameworks measured one NumPy name)."""
    from portability_data.readings.crossframework import GROUP, largest_disagreements, promotion_differences

    table = _optional(data_dir, "crossframework", "census/crossframework.parquet")
    if table is None or table.empty:
        return []
    groups = table.drop_duplicates(GROUP)
    size = (
        groups.groupby(["device", "mode"])
        .agg(
            names=("name", "nunique"),
            groups=("name", "size"),
            disagree=("agreement", lambda a: int((a == "disagree").sum())),
            dtypes_compared=("dtype_agreement", "count"),
            dtypes_differ=("dtype_agreement", lambda a: int((a == "differs").sum())),
        )
        .reset_index()
    )
    per_framework = (
        table.groupby(["device", "mode", "framework"])["stands_apart"]
        .value_counts()
        .unstack(fill_value=0)
        .reset_index()
    )
    return [
        ("One NumPy name, the same inputs, several frameworks: names and groups per setting", size),
        ("Who stands apart where frameworks disagree (groups per framework)", per_framework),
        ("The ten largest cross-framework disagreements", largest_disagreements(table, 10)),
        (
            f"Dtype promotion: the same inputs, different result dtypes (the first {TOP_PROMOTIONS} groups, "
            "most frameworks off NumPy's dtype first)",
            promotion_differences(table, TOP_PROMOTIONS),
        ),
    ]


def result_dtypes_off_numpy(matrix: pd.DataFrame) -> pd.DataFrame:
    """Per setting and framework: NumPy namesake pairs whose result dtypes were recorded, and of
    those the pairs (and functions) where some sample's result dtype differs from NumPy's."""
    columns = ["framework", "device", "mode", "pairs_recorded", "pairs_off_numpy", "functions_off_numpy"]
    recorded = matrix[matrix["dtype_mismatches"].notna()] if "dtype_mismatches" in matrix else matrix.iloc[:0]
    if recorded.empty:
        return pd.DataFrame(columns=columns)
    off = recorded["dtype_mismatches"].astype(float) > 0
    frame = (
        recorded.assign(_off=off, _off_function=recorded["function"].where(off))
        .groupby(["framework", "device", "mode"])
        .agg(
            pairs_recorded=("entry", "size"),
            pairs_off_numpy=("_off", "sum"),
            functions_off_numpy=("_off_function", "nunique"),
        )
        .reset_index()
    )
    frame["pairs_off_numpy"] = frame["pairs_off_numpy"].astype("int64")
    return frame[columns]


def _mean_gap(versus: pd.DataFrame) -> float | None:
    both = versus.dropna(subset=["population_pct_failing", "sample_pct_failing"])
    if both.empty:
        return None
    return round(float(np.mean(np.abs(both["population_pct_failing"] - both["sample_pct_failing"]))), 1)


def _number(value: object) -> float | None:
    return None if value is None or pd.isna(value) else float(value)  # type: ignore[arg-type]
