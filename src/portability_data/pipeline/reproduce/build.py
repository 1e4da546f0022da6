"""The study's published numbers beside ours from its raw data (table `reproduction`).

For every printed value (table `published`) ours comes from our aggregation of the study's raw data
(source mince2023: outcomes, latencies, and the results rows for evidence), over the study's
sample (samples mince2023, which also maps the printed names to qualified names). Equal means
equal at the printed precision; every difference gets one reason, read from the data:

- rounded_before_dividing: a printed ratio is the ratio of the printed (rounded) latencies: ours
  rounded to the printed decimals before dividing gives the printed ratio;
- no_failure_report: no report covers the machine, so every row of that device is `unknown`;
- harness_failure_only: functions whose every counted subtest failed with the study's own harness
  error (counted neither way by our rules) make up the difference;
- undetermined_test_file: the study counted functions our sample table does not hold: test files
  timed in the raw data whose place in the sample is undetermined can make up the difference;
- hand_curated_outcome: the same functions, classified differently: the study annotated outcomes by
  hand, our rules read the reports; the evidence lists our classification with its subtests;
- not_printed / not_timed_on_both: the printed latency tables leave out a function we time on both
  devices, or print one we cannot pair;
- name_not_matched: no sampled function has the printed name or spelling;
- unexplained: none of the above fits (the evidence shows both sides).

Comparisons key on the study's keying (qualified function, `subtest`), never on results.test_id.

Where the parts live: study.py (the inputs and the evidence from the study's results
rows), values.py (printed precision, and ours with its reason for each kind of printed
value); this module builds and writes the table (the `reproduce` stage) and summarises it for the
command and the report.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.pipeline.reproduce.study import (
    STUDY,
    FunctionRows,
    Study,
    StudyData,
    load_study_data,
)
from portability_data.pipeline.reproduce.values import equal_at_precision, round_printed, value_for
from portability_data.readings.frames import plain_frame

# --------------------------------------------------------------------------- the table


def reproduce(data: StudyData) -> pd.DataFrame:
    """One row per published value: printed, ours, equal at the printed precision, and why not."""
    study = Study(data)
    rows = []
    for row in data.published.itertuples(index=False):
        ours = value_for(study, row)
        equal = equal_at_precision(ours.value, row.value_text, int(row.decimals), row.relation)
        value = None if ours.value is None or not math.isfinite(ours.value) else float(ours.value)
        rows.append(
            {
                "value_id": row.value_id,
                "source": STUDY,
                **{
                    k: _none(getattr(row, k))
                    for k in (
                        "published_table",
                        "location",
                        "framework",
                        "device",
                        "device_model",
                        "reference_device",
                        "reference_device_model",
                        "printed_name",
                    )
                },
                "function": ours.function,
                "quantity": row.quantity,
                "relation": row.relation,
                "unit": row.unit,
                "printed_text": row.value_text,
                "printed_value": float(row.value),
                "decimals": int(row.decimals),
                "ours": value,
                "ours_text": round_printed(value, int(row.decimals), row.value_text),
                "equal": bool(equal),
                "reason": None if equal else (ours.reason or "unexplained"),
                "derivation": ours.derivation,
                "evidence": None if equal else (ours.evidence or f"ours {value}; printed {row.value_text}"),
            }
        )
    return pd.DataFrame(rows)


def _none(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def run_reproduce(
    published: Path,
    outcomes: Path,
    latencies: Path,
    results: Path,
    samples: Path,
    out: Path,
    functions_out: Path,
) -> Path:
    """The `reproduce` stage: write data/reproduction/reproduction.parquet and, for the report's
    Table 8 section, the functions behind Table 8's differences (data/reproduction/functions.parquet),
    so the report reads tables and never the study's raw rows."""
    from portability_data.tables.tableio import write_table

    data = load_study_data(published, outcomes, latencies, results, samples)
    frame = reproduce(data)
    written = write_table("reproduction", frame, Path(out))
    write_table("reproduction_functions", table8_functions(data, frame), Path(functions_out))
    return written


def table8_functions(data: StudyData, reproduction: pd.DataFrame) -> pd.DataFrame:
    """Per framework and device where Table 8 differs, the functions our rules do not call a success
    (and those outside the sample), with the subtests behind our outcome."""
    study = Study(data)
    frame = plain_frame(reproduction)
    frame = frame[(frame["published_table"] == "outcome_counts") & ~frame["equal"].astype(bool)]
    rows = []
    for framework, model in dict.fromkeys(zip(frame["framework"], frame["device_model"])):
        setting = study.setting(framework, model)
        if not setting.reported:
            continue  # no report: every function unknown (the reason row says so)
        listed = [(f, o, True) for f, o in setting.outcome.items() if o != "success"]
        listed += [(f, o, False) for f, o in setting.extras.items()]
        for function, outcome, in_sample in sorted(listed, key=lambda t: (not t[2], t[1], t[0])):
            rows_ = study.rows.get((framework, model, function), FunctionRows())
            rows.append(
                {
                    "framework": framework,
                    "device_model": model,
                    "function": function,
                    "in_sample": in_sample,
                    "ours": outcome,
                    "passed": rows_.count("passed"),
                    "failed": rows_.count("failed"),
                    "unknown": rows_.count("unknown"),
                    "harness_only": rows_.count("harness"),
                    "printed_in_latency_tables": function in study.printed.get(framework, set()),
                    "evidence": rows_.describe(function),
                }
            )
    return pd.DataFrame(rows)
