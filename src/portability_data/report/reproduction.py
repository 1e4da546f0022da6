"""The report's reproduction section: the study's printed numbers beside ours (table
`reproduction`) and the functions behind Appendix Table 8's differences (table
`reproduction_functions`), both written by the `reproduce` stage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings.frames import plain_frame
from portability_data.readings.reproduction import CLASSES, equal_counts
from portability_data.report.render import Section
from portability_data.tables.tableio import read_table


def table8(reproduction: pd.DataFrame) -> pd.DataFrame:
    """Appendix Table 8 beside ours, per framework and device."""
    frame = plain_frame(reproduction)
    frame = frame[frame["published_table"] == "outcome_counts"]
    rows = []
    for (framework, device, model), group in frame.groupby(
        ["framework", "device", "device_model"], sort=False
    ):
        by = group.set_index("quantity")
        row: dict[str, Any] = {"framework": framework, "device": device, "device_model": model}
        for quantity in (*CLASSES, "n_functions"):
            short = quantity.replace("_failure", "").replace("n_functions", "n")
            printed, ours = by.loc[quantity, "printed_value"], by.loc[quantity, "ours"]
            row[f"printed_{short}"] = int(printed)
            row[f"ours_{short}"] = None if pd.isna(ours) else int(ours)
        row["equal"] = f"{int(group['equal'].sum())}/{len(group)}"
        row["reasons"] = ", ".join(sorted(set(group["reason"].dropna())))
        rows.append(row)
    return pd.DataFrame(rows)


def reproduction_section(data_dir: Path) -> tuple[Section, dict[str, Any]] | None:
    """The study's published numbers beside ours, and the metrics of their equality, from the
    `reproduce` stage's two tables (None when they are not built)."""
    data_dir = Path(data_dir)
    path = data_dir / "reproduction" / "reproduction.parquet"
    if not path.exists():
        return None
    reproduction = plain_frame(read_table("reproduction", path))
    counts = equal_counts(reproduction)
    finer = equal_counts(reproduction, ("published_table", "quantity"))
    reasons = (
        reproduction[~reproduction["equal"].astype(bool)]
        .groupby(["published_table", "reason"])
        .size()
        .rename("values")
        .reset_index()
    )
    tables: list[tuple[str, pd.DataFrame]] = [
        ("Equal at the printed precision, per published table", counts),
        ("Equal at the printed precision, per quantity", finer),
        ("Differences per reason", reasons),
        ("Appendix Table 8: printed vs ours (sampled functions)", table8(reproduction)),
    ]
    functions_path = data_dir / "reproduction" / "functions.parquet"
    if functions_path.exists():
        functions = plain_frame(read_table("reproduction_functions", functions_path))
        tables.append(("Table 8: the functions behind the differences", functions))
    shown = [
        "value_id",
        "framework",
        "device_model",
        "reference_device_model",
        "printed_name",
        "quantity",
        "printed_text",
        "ours_text",
        "equal",
        "reason",
        "evidence",
    ]
    differences = reproduction[~reproduction["equal"].astype(bool)]
    tables.append(
        ("Every difference, with its reason and evidence", differences[shown].reset_index(drop=True))
    )
    tables.append(("Every published value beside ours", reproduction[shown[:-2]].reset_index(drop=True)))
    summary = "; ".join(f"{r.published_table} {r.equal}/{r.total}" for r in counts.itertuples(index=False))
    text = (
        f"The study's numbers as printed (table published, source mince2023-published) beside ours from "
        f"its raw data (source mince2023, aggregated by the study's procedure, over its sample). Equal at "
        f"the printed precision: {summary}. Equal means within half a unit of the last printed digit "
        "(at an exact tie either rounding counts). Each difference has one reason read from the data: "
        "rounded_before_dividing (the printed ratio divides the printed, rounded latencies), "
        "no_failure_report (no report covers the machine: all its rows are unknown), harness_failure_only "
        "(functions whose subtests failed only with the study's own harness error), undetermined_test_file "
        "(test files timed in the raw data whose place in the sample is undetermined), hand_curated_outcome "
        "(the study classified outcomes by hand; ours reads the reports: the evidence lists our "
        "classification with its subtests), not_printed / not_timed_on_both, name_not_matched. Table 8 "
        "cannot all be re-derived: the study curated outcomes by hand, and its JAX TPU run has no report of "
        "its own (the JAX reports are one GPU file)."
    )
    metrics = {
        str(r.published_table): {"equal": int(r.equal), "total": int(r.total)}
        for r in counts.itertuples(index=False)
    }
    return Section("Reproduction of the study's published numbers", text, tables, []), metrics
