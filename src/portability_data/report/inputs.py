"""The report's inputs and the vocabulary every table and figure shares: the input tables (Inputs,
load_inputs), the study's orders of frameworks, devices, buckets and modes, the labels that name a
setting, and the primary model of each device type. Every other report module builds on this one.

Which device model stands for a device type: the study ran several machines per type (T4 and
A100 GPUs, TPU v3-8 and v2-8, four CPUs) but published outcomes only for its main ones. The
*primary* model of a device type (per source, over all frameworks) is the one with the most
functions of known outcome (ties: most timed functions, then name), so T4, TPU v3-8 and the T4
machine's CPU for the study, and whatever a newer run measured for ours. Cross-device figures use
primary models; hardware generations compare every other model of a type with its primary one
(A100 / T4, TPU v2-8 / TPU v3-8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from portability_data.readings.frames import plain_frame
from portability_data.readings.quiet import DEFAULT_QUIET_LOAD_MAX
from portability_data.tables.contracts import is_census_case
from portability_data.tables.tableio import read_table

STUDY = "mince2023"
OUTCOME_ORDER = ["success", "host_fallback", "partial_failure", "complete_failure", "unknown", "unavailable"]
FAILING = ("partial_failure", "complete_failure")
KNOWN = ("success", "host_fallback", *FAILING)  # host_fallback: runs, not all on the device (XLA)
BUCKET_ORDER = ["top20", "10", "20", "30", "40", "50", "60", "70", "80", "90", "100"]
FRAMEWORK_ORDER = ["torch", "tensorflow", "jax"]
DEVICE_ORDER = ["gpu", "tpu", "xla", "cpu", "mps"]
MODE_ORDER = ["eager", "compiled"]
SETTING_KEYS = ["source", "framework", "framework_version", "device", "device_model", "mode"]


@dataclass
class Inputs:
    """The report's input tables as plain frames (strings as objects, numbers as floats)."""

    outcomes: pd.DataFrame
    latencies: pd.DataFrame
    results: pd.DataFrame | None
    samples: pd.DataFrame
    cases: pd.DataFrame | None
    runs: pd.DataFrame | None = None
    quiet_load_max: float | None = DEFAULT_QUIET_LOAD_MAX  # params.yaml aggregate.quiet_load_max
    census: frozenset[tuple[str, str]] = frozenset()  # (framework, function) of the support matrix


# The columns of the pooled table the report's `results` keep (the host fallback columns: its section).
RESULT_COLUMNS = [
    *SETTING_KEYS,
    "function",
    "outcome",
    "failure_category",
    "run_id",
    "case_id",
    "subtest",
    "execution",
    "graph_breaks",
    "confirmation",
    "failure_rule",
    "failure_subcategory",
    "failure_reread",
    "superseded_reason",
    "superseded_by",
]


def load_inputs(data_dir: Path, *, quiet_load_max: float | None = DEFAULT_QUIET_LOAD_MAX) -> Inputs:
    """Read what the report needs from data_dir; results (the curated rows of the `pooled` table)
    and cases are optional. The pooled table has the failing rows read with the current rule table
    and each row's supersession marked, as the aggregate stage read and pooled them, so the
    report's unclassified share follows the rules of today while the shards keep the run-time
    reading, and the report pools nothing again (`pooled_and_superseded`)."""
    outcomes = plain_frame(read_table("outcomes", data_dir / "outcomes"))
    latencies = plain_frame(read_table("latencies", data_dir / "latencies"))
    samples = plain_frame(read_table("samples", data_dir / "samples"))
    results = None
    if (data_dir / "pooled").exists():
        frame = read_table("pooled", data_dir / "pooled")
        curated = frame[[not is_census_case(case_id) for case_id in frame["case_id"]]]  # census: own section
        results = plain_frame(
            curated[[c for c in RESULT_COLUMNS if c in frame.columns]].reset_index(drop=True)
        )
    cases_path = data_dir / "cases" / "cases.parquet"
    cases = plain_frame(read_table("cases", cases_path)) if cases_path.exists() else None
    runs = plain_frame(read_table("runs", data_dir / "runs")) if (data_dir / "runs").exists() else None
    matrix_path = data_dir / "census" / "support_matrix.parquet"
    census: frozenset[tuple[str, str]] = frozenset()
    if matrix_path.exists():
        import pyarrow.parquet as pq

        names = pq.read_table(matrix_path, columns=["framework", "function"]).to_pydict()
        census = frozenset(zip(names["framework"], names["function"]))
    return Inputs(outcomes, latencies, results, samples, cases, runs, quiet_load_max, census)


def pooled_and_superseded(results: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the rows aggregate pooled, without the marks; superseded runs: one row per run with its
    setting, superseded rows, the first row's reason and the run that superseded it), read from the
    pooled table's marks (superseded_reason, superseded_by) as subtests.supersede reports them."""
    columns = ["run_id", *SETTING_KEYS, "n_rows", "reason", "superseded_by"]
    marks = ["superseded_reason", "superseded_by"]
    if "superseded_reason" not in results:
        return results, pd.DataFrame(columns=columns)
    left_out = results["superseded_reason"].notna()
    pooled = results[~left_out].drop(columns=marks).reset_index(drop=True)
    dropped = results[left_out]
    if dropped.empty:
        return pooled, pd.DataFrame(columns=columns)
    by_run = dropped.groupby("run_id", sort=True)
    superseded = (
        by_run[SETTING_KEYS]
        .first()
        .assign(
            n_rows=by_run.size(),
            reason=by_run["superseded_reason"].first(),
            superseded_by=by_run["superseded_by"].first(),
        )
    )
    return pooled, superseded.reset_index()[columns]


def model_label(device: str, model: str) -> str:
    """'T4 (gpu)', 'TPU v3-8', 't4_vm CPU': the model, plus the device type where it does not say it."""
    return str(model) if str(device).lower() in str(model).lower() else f"{model} ({device})"


def setting_label(source: str, framework: str, version: str, device: str, model: str, mode: str) -> str:
    """One line naming what makes a measurement comparable: who, framework version, device, mode."""
    return f"{source} · {framework} {version} · {model_label(device, model)} · {mode}"


def with_setting(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with a `setting` column, each row's setting_label (an empty frame: an empty column)."""
    if frame.empty:
        return frame.assign(setting=pd.Series(dtype=object))
    labels = [setting_label(*row) for row in frame[SETTING_KEYS].itertuples(index=False)]
    if "sample_id" in frame.columns:  # a table per sample: a later sample's rows say which
        labels = [
            label if sample in (STUDY, None) or sample != sample else f"{label} · {sample} sample"
            for label, sample in zip(labels, frame["sample_id"])
        ]
    return frame.assign(setting=labels)


def slug(text: str) -> str:
    """A file- and key-safe name: non-alphanumeric runs as one hyphen, lower case, at most 40 characters."""
    return (
        re.sub(r"-+", "-", "".join(ch if ch.isalnum() else "-" for ch in str(text))).strip("-").lower()[:40]
    )


def canonical_function(framework: str, function: str) -> str:
    """Match names across tables: the samples spell TensorFlow `tf.x` where results say `tensorflow.x`."""
    if framework == "tensorflow" and function.startswith("tf."):
        return "tensorflow." + function[3:]
    return function


def canonical_samples(samples: pd.DataFrame) -> pd.DataFrame:
    """The samples with their functions spelled as the results spell them (see canonical_function)."""
    if samples.empty:
        return samples
    names = [canonical_function(fw, fn) for fw, fn in zip(samples["framework"], samples["function"])]
    return samples.assign(function=names)


def reading_order_key(framework: str, device: str, source: str = "", model: str = "") -> tuple:
    """Study first, then frameworks and devices in the study's order: stable figure and table order.
    Devices the study did not have follow by name: two paths of one machine model (openvino and
    openvino_f32) otherwise tied, and a set's order broke the tie differently from run to run."""
    fw = FRAMEWORK_ORDER.index(framework) if framework in FRAMEWORK_ORDER else 99
    dev = DEVICE_ORDER.index(device) if device in DEVICE_ORDER else 99
    return (source != STUDY, source, fw, framework, dev, device, str(model))


def mode_rank(mode: str) -> int:
    """A mode's place in MODE_ORDER (eager, then compiled; any other mode after them)."""
    return MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER)


def in_reading_order(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in reading order: the study first, then frameworks, devices and modes in the study's order."""
    if frame is None or frame.empty or not set(SETTING_KEYS) <= set(frame.columns):
        return frame
    keys = [
        (*reading_order_key(f, d, s, dm), v, mode_rank(m), i)
        for i, (s, f, v, d, dm, m) in enumerate(frame[SETTING_KEYS].itertuples(index=False))
    ]
    order = sorted(range(len(frame)), key=lambda i: keys[i])
    return frame.iloc[order].reset_index(drop=True)


def setting_order(frame: pd.DataFrame) -> list[str]:
    """The settings (`setting` column) of a frame in reverse reading order, for horizontal bars."""
    seen = {}
    samples = frame["sample_id"] if "sample_id" in frame.columns else [STUDY] * len(frame)
    for row, sample in zip(frame[[*SETTING_KEYS, "setting"]].itertuples(index=False), samples):
        key = (*reading_order_key(row[1], row[3], row[0], row[4]), row[2], mode_rank(row[5]))
        seen[row[-1]] = (*key, sample != STUDY)
    return sorted(seen, key=lambda s: seen[s], reverse=True)  # barh draws bottom-up: first on top


def primary_models(outcomes: pd.DataFrame, latencies: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(source, device) -> the model that stands for the device type: most functions of known outcome
    over all frameworks, then most timed functions, then name (one choice per source, so every
    framework's figures compare the same machines)."""
    scores: dict[tuple[str, str], dict[str, list[int]]] = {}
    for source, device, model, outcome in outcomes[
        ["source", "device", "device_model", "outcome"]
    ].itertuples(index=False):
        scores.setdefault((source, device), {}).setdefault(model, [0, 0])[0] += outcome in KNOWN
    unpaired = latencies[latencies["reference_device"].isna()] if len(latencies) else latencies
    for source, device, model in unpaired[["source", "device", "device_model"]].itertuples(index=False):
        scores.setdefault((source, device), {}).setdefault(model, [0, 0])[1] += 1
    return {
        key: sorted(models.items(), key=lambda kv: (-kv[1][0], -kv[1][1], str(kv[0])))[0][0]
        for key, models in scores.items()
    }


def is_primary(primary: dict[tuple[str, str], str], source: str, device: str, model: str) -> bool:
    """Whether model is its device type's primary model in source (primary: from primary_models)."""
    return primary.get((source, device)) == model


def known_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of a share table with at least one function of known outcome (n_known > 0)."""
    return frame[frame["n_known"] > 0] if len(frame) else frame
