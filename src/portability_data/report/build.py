"""The report: the study's headline tables and figures from the aggregated tables, for the study's
data (source mince2023) and every newer run (source portability) together, rendered offline
(Markdown + a self-contained HTML page with inline PNG figures; no CDN, no network), plus the
headline numbers as DVC metrics and the plot data as CSV for `dvc plots diff`.

Which device model stands for a device type: the study ran several machines per type (T4 and
A100 GPUs, TPU v3-8 and v2-8, four CPUs) but published outcomes only for its main ones. The
*primary* model of a device type (per source, over all frameworks) is the one with the most
functions of known outcome (ties: most timed functions, then name), so T4, TPU v3-8 and the T4
machine's CPU for the study, and whatever a newer run measured for ours. Cross-device figures use
primary models; hardware generations compare every other model of a type with its primary one
(A100 / T4, TPU v2-8 / TPU v3-8).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from portability_data.pipeline.aggregate import (
    PAIR_KEYS,
    plain_frame,
    ratio_shares,
    summary_tables,
    supersede,
    to_markdown,
)
from portability_data.tables.atomic import atomic_write_bytes
from portability_data.tables.tableio import read_table

STUDY = "mince2023"
OUTCOME_ORDER = ["success", "partial_failure", "complete_failure", "unknown", "unavailable"]
FAILING = ("partial_failure", "complete_failure")
KNOWN = ("success", *FAILING)
BUCKET_ORDER = ["top20", "10", "20", "30", "40", "50", "60", "70", "80", "90", "100"]
FRAMEWORK_ORDER = ["torch", "tensorflow", "jax"]
DEVICE_ORDER = ["gpu", "tpu", "cpu", "mps"]
# Okabe-Ito: distinguishable under the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
LABEL_BOX = {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
OUTCOME_STYLE = {  # colour, hatch: hatches keep the classes apart in grey print too
    "success": ("#009E73", ""),
    "partial_failure": ("#E69F00", "//"),
    "complete_failure": ("#D55E00", "xx"),
    "unknown": ("#BBBBBB", ""),
    "unavailable": ("#CC79A7", ".."),
}
CATEGORY_ORDER = ["not_implemented", "type_failure", "float_precision", "memory", "timeout", "other"]
CHANGE_ORDER = [
    "fixed",
    "broke",
    "still_failing",
    "still_works",
    "removed",
    "not_measured_then",
    "unknown_now",
    "not_run_now",
    "new",
]
CHANGE_STYLE = {
    "fixed": ("#009E73", "\\\\"),
    "broke": ("#D55E00", "xx"),
    "still_failing": ("#E69F00", "//"),
    "still_works": ("#56B4E9", ""),
    "removed": ("#CC79A7", ".."),
    "not_measured_then": ("#BBBBBB", ""),
    "unknown_now": ("#888888", ""),
    "not_run_now": ("#DDDDDD", "--"),
    "new": ("#0072B2", "++"),
}
SLOWDOWN_FACTOR = 10.0
SETTING_KEYS = ["source", "framework", "framework_version", "device", "device_model", "mode"]
# Section titles the summary links to (their anchors are computed from the titles when rendering).
RUNS_TITLE = "How our runs ran"
OUTCOMES_TITLE = "Function outcomes per framework and device (the study's Table 1)"
LATENCY_TITLE = "Latency across devices"
THEN_NOW_TITLE = "Then and now: the study (2023) vs newer runs"


# --------------------------------------------------------------------------- labels and settings


def model_label(device: str, model: str) -> str:
    """'T4 (gpu)', 'TPU v3-8', 't4_vm CPU': the model, plus the device type where it does not say it."""
    return str(model) if str(device).lower() in str(model).lower() else f"{model} ({device})"


def setting_label(source: str, framework: str, version: str, device: str, model: str, mode: str) -> str:
    """One line naming what makes a measurement comparable: who, framework version, device, mode."""
    return f"{source} · {framework} {version} · {model_label(device, model)} · {mode}"


def _with_setting(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return frame.assign(setting=pd.Series(dtype=object))
    labels = [setting_label(*row) for row in frame[SETTING_KEYS].itertuples(index=False)]
    return frame.assign(setting=labels)


def _order_key(framework: str, device: str, source: str = "", model: str = "") -> tuple:
    """Study first, then frameworks and devices in the study's order: stable figure and table order."""
    fw = FRAMEWORK_ORDER.index(framework) if framework in FRAMEWORK_ORDER else 99
    dev = DEVICE_ORDER.index(device) if device in DEVICE_ORDER else 99
    return (source != STUDY, source, fw, framework, dev, str(model))


def _slug(text: str) -> str:
    return (
        re.sub(r"-+", "-", "".join(ch if ch.isalnum() else "-" for ch in str(text))).strip("-").lower()[:40]
    )


def _canonical(framework: str, function: str) -> str:
    """Match names across tables: the samples spell TensorFlow `tf.x` where results say `tensorflow.x`."""
    if framework == "tensorflow" and function.startswith("tf."):
        return "tensorflow." + function[3:]
    return function


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


def _is_primary(primary: dict[tuple[str, str], str], source: str, device: str, model: str) -> bool:
    return primary.get((source, device)) == model


# --------------------------------------------------------------------------- tables


@dataclass
class Inputs:
    """The report's input tables as plain frames (strings as objects, numbers as floats)."""

    outcomes: pd.DataFrame
    latencies: pd.DataFrame
    results: pd.DataFrame | None
    samples: pd.DataFrame
    cases: pd.DataFrame | None
    runs: pd.DataFrame | None = None


def load_inputs(data_dir: Path) -> Inputs:
    """Read what the report needs from data_dir; results and cases are optional."""
    outcomes = plain_frame(read_table("outcomes", data_dir / "outcomes"))
    latencies = plain_frame(read_table("latencies", data_dir / "latencies"))
    samples = plain_frame(read_table("samples", data_dir / "samples"))
    results = None
    if (data_dir / "results").exists():
        frame = read_table("results", data_dir / "results")
        keep = [
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
        ]
        results = plain_frame(frame[keep])
    cases_path = data_dir / "cases" / "cases.parquet"
    cases = plain_frame(read_table("cases", cases_path)) if cases_path.exists() else None
    runs = plain_frame(read_table("runs", data_dir / "runs")) if (data_dir / "runs").exists() else None
    return Inputs(outcomes, latencies, results, samples, cases, runs)


FAILING_OUTCOMES = ("failed", "error", "timeout", "crashed", "memory")


def how_runs_ran(
    results: pd.DataFrame | None, runs: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(execution counts, superseded runs). Per setting of the pooled (not superseded) runs that
    record it: subtests by how they executed, the share of compiled-mode cases whose function under
    test really compiled, order-dependent subtests, and the share of failing rows no rule
    classified. A subtest counts under the least compiled of its rows."""
    columns = [
        *SETTING_KEYS,
        "n_cases",
        "n_subtests",
        "eager",
        "compiled",
        "graph_breaks",
        "eager_fallback",
        "not_routed",
        "pct_cases_compiled",
        "n_order_dependent",
        "n_failing_rows",
        "pct_unclassified",
    ]
    if results is None or results.empty or "execution" not in results:
        return pd.DataFrame(columns=columns), pd.DataFrame()
    kept, superseded = supersede(results, runs)
    kept = kept[kept["execution"].notna()]
    rank = ["not_routed", "eager_fallback", "graph_breaks", "compiled", "eager"]
    rows = []
    for setting, group in kept.groupby(SETTING_KEYS):
        worst = group.groupby(["case_id", "subtest"])["execution"].agg(lambda v: min(v, key=rank.index))
        counts = worst.value_counts()
        by_case = worst.groupby(level=0).agg(lambda v: all(e == "compiled" for e in v))
        failing = group[group["outcome"].isin(FAILING_OUTCOMES)]
        order_dependent = group[group["confirmation"] == "order_dependent"][["case_id", "subtest"]]
        compiled_mode = setting[-1] == "compiled"
        rows.append(
            {
                **dict(zip(SETTING_KEYS, setting)),
                "n_cases": int(worst.index.get_level_values(0).nunique()),
                "n_subtests": len(worst),
                **{e: int(counts.get(e, 0)) for e in rank[::-1]},
                "pct_cases_compiled": round(100.0 * by_case.mean(), 1)
                if compiled_mode and len(by_case)
                else None,
                "n_order_dependent": len(order_dependent.drop_duplicates()),
                "n_failing_rows": len(failing),
                "pct_unclassified": round(100.0 * (failing["failure_rule"] == "unclassified").mean(), 1)
                if len(failing)
                else 0.0,
            }
        )
    return _ordered(pd.DataFrame(rows, columns=columns)), superseded


def _known_only(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["n_known"] > 0] if len(frame) else frame


def _buckets(samples: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(framework, function) -> frequency bucket; the study's sample wins where a function is in two."""
    out: dict[tuple[str, str], str] = {}
    if samples.empty:
        return out
    ordered = samples.assign(_study=samples["sample_id"] != STUDY).sort_values(["_study", "sample_id"])
    for framework, function, bucket in zip(ordered["framework"], ordered["function"], ordered["bucket"]):
        out.setdefault((framework, _canonical(framework, function)), str(bucket))
    return out


def _canonical_samples(samples: pd.DataFrame) -> pd.DataFrame:
    if samples.empty:
        return samples
    names = [_canonical(fw, fn) for fw, fn in zip(samples["framework"], samples["function"])]
    return samples.assign(function=names)


def failure_by_bucket(outcomes: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Per setting and frequency bucket: functions of known outcome, % failing (partial or complete)."""
    columns = [*SETTING_KEYS, "bucket", "n_known", "n_failing", "pct_failing"]
    buckets = _buckets(samples)
    if outcomes.empty or not buckets:
        return pd.DataFrame(columns=columns)
    frame = outcomes.assign(
        bucket=[buckets.get((fw, fn)) for fw, fn in zip(outcomes["framework"], outcomes["function"])]
    )
    frame = frame[frame["bucket"].notna() & frame["outcome"].isin(KNOWN)]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    grouped = frame.groupby([*SETTING_KEYS, "bucket"])["outcome"]
    table = pd.DataFrame(
        {"n_known": grouped.size(), "n_failing": grouped.apply(lambda s: int(s.isin(FAILING).sum()))}
    )
    table["pct_failing"] = (100.0 * table["n_failing"] / table["n_known"]).round(1)
    table = table.reset_index()
    table["_b"] = [BUCKET_ORDER.index(b) if b in BUCKET_ORDER else 99 for b in table["bucket"]]
    return table.sort_values([*SETTING_KEYS, "_b"]).drop(columns="_b").reset_index(drop=True)[columns]


def failure_categories(outcomes: pd.DataFrame, results: pd.DataFrame | None) -> pd.DataFrame:
    """Per setting and failure category: failing functions (by their dominant category) and failing
    subtest rows (from results, where read). Harness failures are the study's, not the function's."""
    columns = [*SETTING_KEYS, "failure_category", "functions", "subtest_rows"]
    failing = outcomes[outcomes["outcome"].isin(FAILING)] if len(outcomes) else outcomes
    functions = (
        failing.assign(failure_category=failing["dominant_failure_category"].fillna("other"))
        .groupby([*SETTING_KEYS, "failure_category"])
        .size()
        .rename("functions")
        if len(failing)
        else pd.Series(dtype=float, name="functions")
    )
    rows = pd.Series(dtype=float, name="subtest_rows")
    if results is not None and len(results):
        bad = results[results["failure_category"].notna() & (results["failure_category"] != "harness")]
        if len(bad):
            rows = bad.groupby([*SETTING_KEYS, "failure_category"]).size().rename("subtest_rows")
    if functions.empty and rows.empty:
        return pd.DataFrame(columns=columns)
    table = pd.concat([functions, rows], axis=1).fillna(0).astype(int).reset_index()
    table.columns = columns
    return table.sort_values(columns[:7]).reset_index(drop=True)


def bucket_matrix(table: pd.DataFrame) -> pd.DataFrame:
    """The bucket table for reading: a row per setting, a column per bucket, cells '% failing (n)'."""
    if table.empty:
        return pd.DataFrame(columns=["setting", *BUCKET_ORDER])
    frame = _with_setting(table)
    frame = frame.assign(cell=[f"{p:.0f}% ({n})" for p, n in zip(frame["pct_failing"], frame["n_known"])])
    matrix = frame.pivot_table(index="setting", columns="bucket", values="cell", aggfunc="first")
    matrix = matrix.reindex(columns=[b for b in BUCKET_ORDER if b in matrix.columns]).fillna("")
    matrix = matrix.reindex(list(reversed(_setting_order(frame))))
    matrix.columns.name = None
    return matrix.reset_index()


def primary_pairs(latencies: pd.DataFrame, primary: dict[tuple, str], *, same_type: bool) -> pd.DataFrame:
    """Paired latency rows between primary models of two device types (reference per the study's
    order: GPU, then CPU, TPU), or, with same_type, every other model against its type's primary one."""
    if latencies.empty:
        return latencies
    paired = latencies[latencies["reference_device"].notna()]
    keep = []
    order = {d: i for i, d in enumerate(["gpu", "cpu", "tpu", "mps"])}
    for row in paired[[*SETTING_KEYS, "reference_device", "reference_device_model"]].itertuples(index=False):
        source, _, _, device, model, _, ref, ref_model = row
        ref_primary = _is_primary(primary, source, ref, ref_model)
        dev_primary = _is_primary(primary, source, device, model)
        if same_type:
            keep.append(device == ref and ref_primary and not dev_primary and device != "cpu")
        else:
            keep.append(
                device != ref and ref_primary and dev_primary and order.get(ref, 9) < order.get(device, 9)
            )
    return paired[keep]


def pair_label(row: Any) -> str:
    """'torch 1.12.0 · TPU v3-8 / T4 (gpu) · eager': the ratio's two devices, named."""
    device = model_label(row.device, row.device_model)
    reference = model_label(row.reference_device, row.reference_device_model)
    return f"{row.source} · {row.framework} {row.framework_version} · {device} / {reference} · {row.mode}"


def then_now(inputs: Inputs, primary: dict[tuple, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per function: the study's 2023 outcome and latency beside each newer setting's, matched by
    device type (the same model where the study has data for it, else its primary one).
    Returns (outcome changes, latency then vs now)."""
    outcomes, latencies = inputs.outcomes, inputs.latencies
    change_cols = [
        "framework",
        "function",
        "then_setting",
        "then_outcome",
        "now_setting",
        "now_outcome",
        "change",
        "removed_since",
        "then_other_devices",
        "now_key",
        "now_version",
    ]
    latency_cols = [
        "framework",
        "function",
        "then_setting",
        "now_setting",
        "then_ms",
        "now_ms",
        "then_subtests",
        "now_subtests",
        "ratio_now_vs_then",
        "now_key",
        "now_version",
    ]
    if outcomes.empty:
        return pd.DataFrame(columns=change_cols), pd.DataFrame(columns=latency_cols)
    removed: dict[tuple[str, str], str | None] = {}
    if inputs.cases is not None and len(inputs.cases):
        for fw, fn, status, since in zip(
            inputs.cases["framework"],
            inputs.cases["function"],
            inputs.cases["status"],
            inputs.cases["removed_since"],
        ):
            if status == "removed":
                removed[(fw, fn)] = (
                    None if since is None or (isinstance(since, float) and math.isnan(since)) else str(since)
                )
    study = outcomes[outcomes["source"] == STUDY]
    newer = outcomes[outcomes["source"] != STUDY]
    unpaired = latencies[latencies["reference_device"].isna()] if len(latencies) else latencies
    study_lat = unpaired[unpaired["source"] == STUDY] if len(unpaired) else unpaired
    newer_lat = unpaired[unpaired["source"] != STUDY] if len(unpaired) else unpaired
    changes, moves = [], []
    now_settings = sorted(
        {tuple(r) for r in newer[SETTING_KEYS].itertuples(index=False)},
        key=lambda s: (*_order_key(s[1], s[3], s[0], s[4]), s[2], _mode_rank(s[5])),
    )
    elsewhere = _study_elsewhere(study, primary)
    for setting in now_settings:
        source, framework, version, device, model, mode = setting
        key = {"now_key": f"{source}/{framework}/{_slug(model)}/{mode}", "now_version": version}
        here = newer[(newer[SETTING_KEYS] == pd.Series(setting, index=SETTING_KEYS)).all(axis=1)]
        then_model = _then_model(study, framework, device, model, lambda f: (f["outcome"].isin(KNOWN)).sum())
        now_label = setting_label(*setting)
        then_rows = (
            study[
                (study["framework"] == framework)
                & (study["device"] == device)
                & (study["device_model"] == then_model)
            ]
            if then_model
            else study.iloc[0:0]
        )
        then_label = (
            setting_label(*then_rows[SETTING_KEYS].iloc[0]) if len(then_rows) else f"{STUDY}: no {device}"
        )
        then_by_fn = dict(zip(then_rows["function"], then_rows["outcome"]))
        now_by_fn = dict(zip(here["function"], here["outcome"]))
        for function in sorted(set(then_by_fn) | set(now_by_fn)):
            before, after = then_by_fn.get(function), now_by_fn.get(function)
            since = removed.get((framework, function), "")
            gone = after == "unavailable" or (
                (framework, function) in removed and after is None and _removed_by(since, version)
            )
            changes.append(
                {
                    "framework": framework,
                    "function": function,
                    "then_setting": then_label,
                    "then_outcome": before or "not in study",
                    "now_setting": now_label,
                    "now_outcome": after or "not run",
                    "change": _change(before, after, gone),
                    "removed_since": since or None,
                    "then_other_devices": "; ".join(
                        f"{label}: {outcome}"
                        for (fw, dev, label), by_fn in elsewhere.items()
                        if fw == framework and dev != device and (outcome := by_fn.get(function))
                    ),
                    **key,
                }
            )
        lat_model = _then_model(study_lat, framework, device, model, len)
        if not lat_model or newer_lat.empty:
            continue
        now_lat = newer_lat[(newer_lat[SETTING_KEYS] == pd.Series(setting, index=SETTING_KEYS)).all(axis=1)]
        then_lat = study_lat[
            (study_lat["framework"] == framework)
            & (study_lat["device"] == device)
            & (study_lat["device_model"] == lat_model)
        ]
        if then_lat.empty or now_lat.empty:
            continue
        then_lat_label = setting_label(*then_lat[SETTING_KEYS].iloc[0])
        before = {
            fn: (ms, n)
            for fn, ms, n in zip(then_lat["function"], then_lat["latency_ms"], then_lat["n_subtests"])
        }
        for function, ms, n in zip(now_lat["function"], now_lat["latency_ms"], now_lat["n_subtests"]):
            if function not in before:
                continue
            then_ms, then_n = before[function]
            moves.append(
                {
                    "framework": framework,
                    "function": function,
                    "then_setting": then_lat_label,
                    "now_setting": now_label,
                    "then_ms": then_ms,
                    "now_ms": ms,
                    "then_subtests": int(then_n),
                    "now_subtests": int(n),
                    "ratio_now_vs_then": ms / then_ms if then_ms > 0 else float("nan"),
                    **key,
                }
            )
    return pd.DataFrame(changes, columns=change_cols), pd.DataFrame(moves, columns=latency_cols)


MODE_ORDER = ["eager", "compiled"]


def _mode_rank(mode: str) -> int:
    return MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER)


def _study_elsewhere(study: pd.DataFrame, primary: dict[tuple[str, str], str]) -> dict[tuple, dict[str, str]]:
    """(framework, device, model label) -> function -> known 2023 outcome on the study's primary models,
    so a function's 2023 record on the other devices is shown beside the same-device comparison."""
    out: dict[tuple, dict[str, str]] = {}
    known = study[study["outcome"].isin(KNOWN)] if len(study) else study
    for framework, function, device, model, outcome in known[
        ["framework", "function", "device", "device_model", "outcome"]
    ].itertuples(index=False):
        if _is_primary(primary, STUDY, device, model):
            out.setdefault((framework, device, model_label(device, model)), {})[function] = outcome
    return out


def _then_model(
    study: pd.DataFrame, framework: str, device: str, model: str, score: Callable[[pd.DataFrame], Any]
) -> str | None:
    """The study model to compare a newer run with: the same model where the study has data for it."""
    rows = study[(study["framework"] == framework) & (study["device"] == device)] if len(study) else study
    if rows.empty:
        return None
    scores = {m: int(score(group)) for m, group in rows.groupby("device_model")}
    if scores.get(model, 0) > 0:
        return model
    return sorted(scores.items(), key=lambda kv: (-kv[1], str(kv[0])))[0][0]


def _removed_by(since: str | None, version: str) -> bool:
    """A removed case counts as removed in `version` when removed_since is unknown or not later."""
    if not since:
        return True
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) >= Version(since)
    except InvalidVersion:
        return True


def _change(before: str | None, after: str | None, gone: bool) -> str:
    """What happened to one function between the study and a newer run on the same device type."""
    if gone:
        return "removed"
    if after is None:
        return "not_run_now"
    if before is None:
        return "new"
    if before not in KNOWN:
        return "not_measured_then"
    if after not in KNOWN:
        return "unknown_now"
    if before in FAILING:
        return "fixed" if after == "success" else "still_failing"
    return "still_works" if after == "success" else "broke"


def change_summary(changes: pd.DataFrame) -> pd.DataFrame:
    """Functions per change category, per framework and newer setting (and the study setting it is read
    against)."""
    if changes.empty:
        return pd.DataFrame(
            columns=["framework", "now_setting", "then_setting", *CHANGE_ORDER, "now_key", "now_version"]
        )
    table = (
        changes.groupby(
            ["framework", "now_setting", "then_setting", "now_key", "now_version", "change"], sort=False
        )
        .size()
        .unstack("change", fill_value=0)
        .reindex(columns=CHANGE_ORDER, fill_value=0)
        .reset_index()
    )
    table.columns.name = None
    return table[["framework", "now_setting", "then_setting", *CHANGE_ORDER, "now_key", "now_version"]]


def latency_move_summary(moves: pd.DataFrame) -> pd.DataFrame:
    """Per newer setting: functions timed both then and now, median now/then ratio, % faster now."""
    columns = [
        "framework",
        "now_setting",
        "then_setting",
        "n_functions",
        "median_ratio_now_vs_then",
        "pct_faster_now",
        "pct_over_10x_slower_now",
        "now_key",
        "now_version",
    ]
    moves = moves[moves["ratio_now_vs_then"].notna()] if len(moves) else moves
    if moves.empty:
        return pd.DataFrame(columns=columns)
    grouped = moves.groupby(
        ["framework", "now_setting", "then_setting", "now_key", "now_version"], sort=False
    )["ratio_now_vs_then"]
    table = pd.DataFrame(
        {
            "n_functions": grouped.size(),
            "median_ratio_now_vs_then": grouped.median(),
            "pct_faster_now": grouped.apply(lambda r: 100.0 * (r < 1).mean()).round(1),
            "pct_over_10x_slower_now": grouped.apply(lambda r: 100.0 * (r > 10).mean()).round(1),
        }
    ).reset_index()
    return table[columns]


def removed_functions(inputs: Inputs) -> pd.DataFrame:
    """Functions gone from the API: cases with status 'removed' and outcome rows 'unavailable'."""
    columns = ["framework", "function", "removed_since", "evidence"]
    rows = []
    if inputs.cases is not None and len(inputs.cases):
        gone = inputs.cases[inputs.cases["status"] == "removed"]
        for fw, fn, since in zip(gone["framework"], gone["function"], gone["removed_since"]):
            rows.append(
                {
                    "framework": fw,
                    "function": fn,
                    "removed_since": None
                    if since is None or (isinstance(since, float) and math.isnan(since))
                    else since,
                    "evidence": "cases table: status removed",
                }
            )
    if len(inputs.outcomes):
        gone = _with_setting(inputs.outcomes[inputs.outcomes["outcome"] == "unavailable"])
        for fw, fn, setting in zip(gone["framework"], gone["function"], gone["setting"]):
            rows.append(
                {
                    "framework": fw,
                    "function": fn,
                    "removed_since": None,
                    "evidence": f"unavailable in {setting}",
                }
            )
    return pd.DataFrame(rows, columns=columns).drop_duplicates().reset_index(drop=True)


def sample_coverage(outcomes: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Per sample and framework: sampled functions, how many have outcome rows under the same name
    (TensorFlow's `tf.` spelling matched as `tensorflow.`), and which do not: name mismatches show here."""
    columns = ["sample_id", "framework", "sampled", "with_outcomes", "missing_examples"]
    if samples.empty:
        return pd.DataFrame(columns=columns)
    measured = set(zip(outcomes["framework"], outcomes["function"])) if len(outcomes) else set()
    rows = []
    tested = samples[samples["status"] != "replaced"]
    for (sample_id, framework), group in tested.groupby(["sample_id", "framework"]):
        names = sorted(set(group["function"]))
        missing = [n for n in names if (framework, n) not in measured]
        rows.append(
            {
                "sample_id": sample_id,
                "framework": framework,
                "sampled": len(names),
                "with_outcomes": len(names) - len(missing),
                "missing_examples": ", ".join(missing[:5]),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def settings_overview(
    outcomes: pd.DataFrame, latencies: pd.DataFrame, primary: dict[tuple, str]
) -> pd.DataFrame:
    """Every measured setting: functions, how many have a known outcome, how many were timed."""
    columns = [*SETTING_KEYS, "primary_model", "n_functions", "n_known_outcome", "n_timed"]
    if outcomes.empty and latencies.empty:
        return pd.DataFrame(columns=columns)
    counts = outcomes.groupby(SETTING_KEYS).agg(
        n_functions=("function", "size"), n_known_outcome=("outcome", lambda s: int(s.isin(KNOWN).sum()))
    )
    unpaired = latencies[latencies["reference_device"].isna()] if len(latencies) else latencies
    timed = unpaired.groupby(SETTING_KEYS).size().rename("n_timed") if len(unpaired) else None
    table = counts.join(timed, how="outer") if timed is not None else counts.assign(n_timed=0)
    table = table.fillna(0).astype(int).reset_index()
    table["primary_model"] = [
        "yes" if _is_primary(primary, s, d, dm) else ""
        for s, f, v, d, dm, m in table[SETTING_KEYS].itertuples(index=False)
    ]
    return _ordered(table)[columns]


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in reading order: the study first, then frameworks, devices and modes in the study's order."""
    if frame is None or frame.empty or not set(SETTING_KEYS) <= set(frame.columns):
        return frame
    keys = [
        (*_order_key(f, d, s, dm), v, _mode_rank(m), i)
        for i, (s, f, v, d, dm, m) in enumerate(frame[SETTING_KEYS].itertuples(index=False))
    ]
    order = sorted(range(len(frame)), key=lambda i: keys[i])
    return frame.iloc[order].reset_index(drop=True)


# --------------------------------------------------------------------------- summary (the first screen)

SUMMARY_TITLE = "Summary"
SUMMARY_MAX_LINES = 36  # with the title and intro above it, the summary fits a 40-line screen
SOURCE_MEANING = {
    STUDY: "the study's raw data (2023)",
    "portability": "this project's runs",
    "local": "your own machine, measured by `portability bench`",
}


@dataclass
class Headline:
    """One headline of the summary: a bold title, a line saying how to read it, the section that
    details it (by title, so its anchor is computed at render time) and a small table of text cells."""

    title: str
    note: str
    target: str
    table: pd.DataFrame


def _times(ratio: float) -> str:
    """A latency ratio with three significant digits and no exponent: 0.338×, 96.6×, 2,310×."""
    if ratio is None or not math.isfinite(ratio) or ratio <= 0:
        return "n/a"
    digits = max(0, 2 - math.floor(math.log10(ratio)))
    return f"{ratio:,.{digits}f}×"


def _frameworks_in(*frames: pd.DataFrame) -> list[str]:
    """Frameworks present in any frame, in the study's order (others after, by name)."""
    present = {fw for frame in frames if len(frame) and "framework" in frame for fw in frame["framework"]}
    return [f for f in FRAMEWORK_ORDER if f in present] + sorted(present - set(FRAMEWORK_ORDER))


def _column_order(source: str, device: str, model: str, mode: str) -> tuple:
    """Summary columns in reading order: the study first, then by source, device type, model, mode."""
    dev = DEVICE_ORDER.index(device) if device in DEVICE_ORDER else 99
    return (source != STUDY, source, dev, device, str(model), _mode_rank(mode))


def _grid(cells: dict[tuple[str, str], list[str]], columns: list[str], frameworks: list[str]) -> pd.DataFrame:
    """A row per framework, a column per setting; several versions of one cell joined by '; '."""
    rows = [
        {"framework": fw, **{c: "; ".join(cells.get((fw, c), [])) or "—" for c in columns}}
        for fw in frameworks
    ]
    return pd.DataFrame(rows, columns=["framework", *columns])


def failing_summary(outcomes: pd.DataFrame, primary: dict[tuple[str, str], str]) -> pd.DataFrame:
    """Per setting with a known outcome (the study: its primary models only; newer sources: every
    model): functions of known outcome, how many fail (partly or completely) and the share. The
    same groups and counts as the outcome_shares table, so its pct_partial + pct_complete agree
    (up to their rounding)."""
    columns = [*SETTING_KEYS, "n_known", "n_failing", "pct_failing"]
    known = outcomes[outcomes["outcome"].isin(KNOWN)] if len(outcomes) else outcomes
    if known.empty:
        return pd.DataFrame(columns=columns)
    shown = [
        source != STUDY or _is_primary(primary, source, device, model)
        for source, device, model in known[["source", "device", "device_model"]].itertuples(index=False)
    ]
    grouped = known[shown].groupby(SETTING_KEYS)["outcome"]
    table = pd.DataFrame(
        {"n_known": grouped.size(), "n_failing": grouped.apply(lambda s: int(s.isin(FAILING).sum()))}
    ).reset_index()
    table["pct_failing"] = (100.0 * table["n_failing"] / table["n_known"]).round(1)
    return _ordered(table)[columns]


def slowdown_summary(cross_shares: pd.DataFrame, cross_functions: pd.DataFrame) -> pd.DataFrame:
    """Per device pair of primary models: functions timed on both, the median ratio (from the share
    table) and the worst one with its function (from the per-function table)."""
    columns = [*PAIR_KEYS, "n_functions", "median_ratio", "worst_ratio", "worst_function"]
    if cross_shares.empty or cross_functions.empty:
        return pd.DataFrame(columns=columns)
    timed = cross_functions[cross_functions["ratio"].notna()]
    worst = timed.loc[timed.groupby(PAIR_KEYS)["ratio"].idxmax(), [*PAIR_KEYS, "ratio", "function"]]
    worst = worst.rename(columns={"ratio": "worst_ratio", "function": "worst_function"})
    table = cross_shares[[*PAIR_KEYS, "n_functions", "median_ratio"]].merge(worst, on=PAIR_KEYS, how="left")
    return table[columns].reset_index(drop=True)


def then_now_headline(changes: pd.DataFrame, moves: pd.DataFrame) -> pd.DataFrame:
    """Per newer setting: the change counts against the study (same device type) beside the median
    latency ratio now / then (from the two then-and-now summary tables)."""
    columns = [
        "framework",
        "now_setting",
        "then_setting",
        "n_compared",
        "fixed",
        "broke",
        "still_failing",
        "still_works",
        "removed",
        "latency_n_functions",
        "median_ratio_now_vs_then",
    ]
    if changes.empty:
        return pd.DataFrame(columns=columns)
    table = changes.assign(
        n_compared=changes[["fixed", "broke", "still_failing", "still_works"]].sum(axis=1).astype(int)
    )
    if len(moves):
        latency = moves[["now_key", "now_version", "n_functions", "median_ratio_now_vs_then"]].rename(
            columns={"n_functions": "latency_n_functions"}
        )
        table = table.merge(latency, on=["now_key", "now_version"], how="left")
    else:
        table = table.assign(latency_n_functions=np.nan, median_ratio_now_vs_then=np.nan)
    return table[columns].reset_index(drop=True)


def compiled_summary(executions: pd.DataFrame, outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per compiled-mode setting of the newer sources: subtests by how they executed (pooled, not
    superseded runs; from the execution table); a setting whose runs recorded no execution gets a row
    with n_subtests 0, so the summary says so instead of leaving it out."""
    counts = ["n_subtests", "compiled", "graph_breaks", "eager_fallback", "not_routed"]
    columns = [*SETTING_KEYS, *counts, "pct_compiled"]
    settings = (
        {
            tuple(r)
            for r in outcomes[(outcomes["mode"] == "compiled") & (outcomes["source"] != STUDY)][
                SETTING_KEYS
            ].itertuples(index=False)
        }
        if len(outcomes)
        else set()
    )
    rows = []
    recorded = executions[executions["mode"] == "compiled"] if len(executions) else executions
    for record in recorded.to_dict("records"):
        settings.discard(tuple(record[k] for k in SETTING_KEYS))
        n = int(record["n_subtests"])
        rows.append(
            {
                **{k: record[k] for k in SETTING_KEYS},
                **{c: int(record[c]) for c in counts},
                "pct_compiled": round(100.0 * int(record["compiled"]) / n, 1) if n else None,
            }
        )
    for setting in settings:
        rows.append({**dict(zip(SETTING_KEYS, setting)), **dict.fromkeys(counts, 0), "pct_compiled": None})
    return _ordered(pd.DataFrame(rows, columns=columns))


def _devices_of(settings: pd.DataFrame) -> list[str]:
    """The device types of some settings, in the study's order."""
    return sorted(set(settings["device"]), key=lambda d: [*DEVICE_ORDER, d].index(d))


def _label_parts(label: str) -> tuple[str, str, str, str] | None:
    """(source, framework version, model label, mode) of a setting_label(); None for another text
    (then_now's "mince2023: no mps" where the study never ran the device type)."""
    parts = label.split(" · ")
    if len(parts) < 4:
        return None
    return parts[0], parts[1].split(" ", 1)[-1], " · ".join(parts[2:-1]), parts[-1]


def _setting_column(source: str, device: str, model: str, mode: str) -> str:
    return f"{source} · {model_label(device, model)} · {mode}"


def summary_headlines(tables: dict[str, pd.DataFrame]) -> list[Headline]:
    """The first screen: the study's headline numbers beside every newer source's, each a grid of a
    row per framework and a column per setting, read from the summary_* tables."""
    failing, slowdown = tables["summary_failing"], tables["summary_slowdown"]
    changes, compiled = tables["summary_then_now"], tables["summary_compiled"]

    cells: dict[tuple[str, str], list[str]] = {}
    order: dict[str, tuple] = {}
    for r in failing.itertuples(index=False):
        column = _setting_column(r.source, r.device, r.device_model, r.mode)
        order[column] = _column_order(r.source, r.device, r.device_model, r.mode)
        cells.setdefault((r.framework, column), []).append(
            f"{r.pct_failing:.1f}% of {r.n_known} ({r.framework_version})"
        )
    failing_grid = _grid(cells, sorted(order, key=order.get), _frameworks_in(failing))

    cells, order = {}, {}
    for r in slowdown.itertuples(index=False):
        reference = model_label(r.reference_device, r.reference_device_model)
        column = f"{r.source} · {model_label(r.device, r.device_model)} / {reference} · {r.mode}"
        order[column] = (*_column_order(r.source, r.device, r.device_model, r.mode), r.reference_device_model)
        cells.setdefault((r.framework, column), []).append(
            f"{_times(r.median_ratio)} · {_times(r.worst_ratio)} (n={r.n_functions})"
        )
    slowdown_grid = _grid(cells, sorted(order, key=order.get), _frameworks_in(slowdown))
    paired = set(slowdown["source"]) if len(slowdown) else set()
    unpaired_note = "".join(
        f" {source} has no device pair yet (measured: {', '.join(_devices_of(group))})."
        for source, group in (failing.groupby("source") if len(failing) else [])
        if source not in paired
    )

    cells, order = {}, {}
    for r in changes.itertuples(index=False):
        source, version, model, mode = _label_parts(r.now_setting) or (r.now_setting, "", "", "")
        then = _label_parts(r.then_setting)
        then_text = f"{then[1]} on {then[2]}" if then else "no study run on this device type"
        column = f"{source} · {model} · {mode}"
        order[column] = (source != STUDY, source, model, _mode_rank(mode))
        if r.n_compared:
            outcome = f"{r.fixed} fixed, {r.broke} broke, {r.still_failing} still failing"
            outcome += f", {r.still_works} still work"
        else:
            outcome = "no study outcome on this device"
        if r.removed:
            outcome += f", {r.removed} removed"
        latency = (
            f"; latency now/then {_times(r.median_ratio_now_vs_then)} (n={int(r.latency_n_functions)})"
            if r.median_ratio_now_vs_then == r.median_ratio_now_vs_then
            else ""
        )
        cells.setdefault((r.framework, column), []).append(f"{then_text} → {version}: {outcome}{latency}")
    then_now_grid = _grid(cells, sorted(order, key=order.get), _frameworks_in(changes))

    cells, order = {}, {}
    for r in compiled.itertuples(index=False):
        column = _setting_column(r.source, r.device, r.device_model, r.mode)
        order[column] = _column_order(r.source, r.device, r.device_model, r.mode)
        if r.n_subtests:
            others = ", ".join(
                f"{getattr(r, name)} {name.replace('_', ' ')}"
                for name in ("graph_breaks", "eager_fallback", "not_routed")
                if getattr(r, name)
            )
            text = f"{r.compiled} of {r.n_subtests} ({r.pct_compiled:.1f}%)"
            text += f"; {others}" if others else ""
        else:
            text = "not recorded (runs older than the execution column)"
        cells.setdefault((r.framework, column), []).append(f"{r.framework_version}: {text}")
    compiled_grid = _grid(cells, sorted(order, key=order.get), _frameworks_in(compiled))

    return [
        Headline(
            "Functions failing",
            "partly or completely, % of the functions with a known outcome per device (framework "
            "version; —: none known). The study's question: GPU vs TPU.",
            OUTCOMES_TITLE,
            failing_grid,
        ),
        Headline(
            "Slowdown across devices",
            "per function, latency on the first device / on the second over the same subtests (above 1× "
            f"= slower on the first): median · worst, n functions timed on both.{unpaired_note}",
            LATENCY_TITLE,
            slowdown_grid,
        ),
        Headline(
            "Then vs now",
            "the study's version (and machine) → ours on the same device type: what became of each "
            "function's outcome, and the median latency ratio now / then (below 1× = faster now).",
            THEN_NOW_TITLE,
            then_now_grid,
        ),
        Headline(
            "Compiled really compiled",
            "per compiled-mode setting, the subtests that went through the compiler whole, of all "
            "subtests of the pooled (not superseded) runs; the others by how they ran.",
            RUNS_TITLE,
            compiled_grid,
        ),
    ]


# --------------------------------------------------------------------------- metrics


def _num(value: Any, digits: int = 4) -> float | int | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    return round(float(value), digits)


def _unique_keys(keys: list[tuple[str, str]]) -> list[str]:
    """Stable keys without the framework version; the version is added only where two versions collide."""
    plain = [k for k, _ in keys]
    return [k if plain.count(k) == 1 else f"{k}@{v}" for k, v in keys]


def headline_metrics(tables: dict[str, pd.DataFrame], primary: dict[tuple, str]) -> dict[str, Any]:
    """Numbers `dvc metrics diff` compares, under keys that stay put as data is added:
    outcomes/<source>/<framework>/<model>/<mode>, latency/<source>/<framework>/<model>_vs_<ref>/<mode>, ..."""
    metrics: dict[str, Any] = {
        "outcomes": {},
        "top20_vs_all": {},
        "latency": {},
        "generations": {},
        "then_now": {},
    }
    shares = tables["outcome_shares"]
    keys = _unique_keys(
        [
            (f"{r.source}/{r.framework}/{_slug(r.device_model)}/{r.mode}", r.framework_version)
            for r in shares.itertuples()
        ]
    )
    for key, r in zip(keys, shares.itertuples()):
        metrics["outcomes"][key] = {
            "n_functions": _num(r.n_functions),
            "n_known": _num(r.n_known),
            "pct_success": _num(r.pct_success),
            "pct_partial_failure": _num(r.pct_partial_failure),
            "pct_complete_failure": _num(r.pct_complete_failure),
        }
    top = _known_only(tables.get("top20_vs_all", pd.DataFrame()))
    if len(top):
        for (source, framework, _, _, model, mode), group in top.groupby(SETTING_KEYS):
            key = f"{source}/{framework}/{_slug(model)}/{mode}"
            entry = metrics["top20_vs_all"].setdefault(key, {})
            for r in group.itertuples():
                entry[f"pct_failing_{r.subset}"] = _num(
                    100.0 - r.pct_success if r.pct_success == r.pct_success else None
                )
                entry[f"n_known_{r.subset}"] = _num(r.n_known)
    for section, table in (
        ("latency", tables["cross_device_shares"]),
        ("generations", tables["generation_shares"]),
    ):
        if table.empty:
            continue
        keys = _unique_keys(
            [
                (
                    f"{r.source}/{r.framework}/{_slug(r.device_model)}_vs_{_slug(r.reference_device_model)}"
                    f"/{r.mode}",
                    r.framework_version,
                )
                for r in table.itertuples()
            ]
        )
        for key, r in zip(keys, table.itertuples()):
            metrics[section][key] = {
                "n_functions": _num(r.n_functions),
                "median_ratio": _num(r.median_ratio),
                "pct_over_10x_slower": _num(r.pct_over_10x_slower),
                "pct_faster_on_device": _num(r.pct_faster_on_device),
                "pct_faster_on_reference": _num(r.pct_faster_on_reference),
            }
    changes, moves = tables["then_now_summary"], tables["then_now_latency_summary"]
    pairs = sorted({(k, v) for t in (changes, moves) for k, v in zip(t["now_key"], t["now_version"])})
    names = dict(zip(pairs, _unique_keys(pairs)))
    for r in changes.itertuples():
        metrics["then_now"][names[(r.now_key, r.now_version)]] = {
            c: _num(getattr(r, c)) for c in CHANGE_ORDER
        }
    for r in moves.itertuples():
        entry = metrics["then_now"].setdefault(names[(r.now_key, r.now_version)], {})
        entry["latency_n_functions"] = _num(r.n_functions)
        entry["latency_median_ratio_now_vs_then"] = _num(r.median_ratio_now_vs_then)
        entry["latency_pct_faster_now"] = _num(r.pct_faster_now)
    return metrics


# --------------------------------------------------------------------------- figures


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 9,
            "axes.titlesize": 10,
            "figure.dpi": 100,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "grid.linewidth": 0.5,
        }
    )
    return plt


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    constrained = type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    fig.savefig(buffer, format="png", dpi=100, bbox_inches=None if constrained else "tight")
    _plt().close(fig)
    return buffer.getvalue()


def _log_axes(ax: Any, axis: str = "both") -> None:
    """Log axes with plain decade tick labels (0.01, 1, 100 ms) and minor ticks at 2x and 5x, labelled
    too where the axis spans under three decades (else a reader may see a single tick). Call it after
    the limits are set. Few minor ticks: tick objects dominate the stage's run time."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    fmt = FuncFormatter(lambda v, _: f"{v:g}")
    for name in ("x", "y") if axis == "both" else (axis,):
        getattr(ax, f"set_{name}scale")("log")
        target = ax.xaxis if name == "x" else ax.yaxis
        low, high = getattr(ax, f"get_{name}lim")()
        narrow = low > 0 and high > 0 and math.log10(high / low) < 3
        target.set_major_locator(LogLocator(base=10, numticks=12))
        target.set_major_formatter(fmt)
        target.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0), numticks=12))
        target.set_minor_formatter(fmt if narrow else NullFormatter())


def _setting_order(frame: pd.DataFrame) -> list[str]:
    seen = {}
    for row in frame[[*SETTING_KEYS, "setting"]].itertuples(index=False):
        seen[row[-1]] = (*_order_key(row[1], row[3], row[0], row[4]), row[2], _mode_rank(row[5]))
    return sorted(seen, key=lambda s: seen[s], reverse=True)  # barh draws bottom-up: first on top


def _stacked_bars(
    ax: Any,
    labels: list[str],
    segments: list[tuple[str, np.ndarray, tuple[str, str]]],
    min_label: float | None = None,
) -> np.ndarray:
    """Horizontal bars stacked left to right, one (legend label, values, (colour, hatch)) segment at
    a time; a segment at least ``min_label`` wide shows its value. Returns the bars' right ends."""
    left = np.zeros(len(labels))
    for label, values, (colour, hatch) in segments:
        ax.barh(
            labels,
            values,
            left=left,
            color=colour,
            hatch=hatch,
            edgecolor="white",
            linewidth=0.5,
            label=label,
        )
        if min_label is not None:
            for y, (x0, v) in enumerate(zip(left, values)):
                if v >= min_label:
                    ax.text(x0 + v / 2, y, f"{v:.0f}", ha="center", va="center", fontsize=7, bbox=LABEL_BOX)
        left = left + values
    return left


def fig_outcome_shares(shares: pd.DataFrame) -> bytes | None:
    """Stacked bars of outcome shares per setting with a known outcome (others: all unknown, in the table)."""
    known = _known_only(shares)
    if known.empty:
        return None
    plt = _plt()
    frame = _with_setting(known)
    order = _setting_order(frame)
    frame = frame.set_index("setting").loc[order]
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(frame) + 1.6))
    segments = [
        (
            outcome.replace("_", " "),
            frame[f"pct_{outcome}"].fillna(0).to_numpy(dtype=float),
            OUTCOME_STYLE[outcome],
        )
        for outcome in KNOWN
    ]
    _stacked_bars(ax, order, segments, min_label=6)
    for y, n in enumerate(frame["n_known"]):
        ax.text(101, y, f"n={n}", va="center", fontsize=7)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of functions with a known outcome")
    ax.set_title(
        "Function outcomes per framework, device and mode\n(settings with a known outcome; n = functions)"
    )
    ax.legend(
        loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.3 / max(len(frame), 1)), ncol=3, frameon=False
    )
    ax.grid(axis="y", visible=False)
    return _png(fig)


def fig_top20(top: pd.DataFrame) -> bytes | None:
    """% failing (partial + complete) among the top-20 functions vs all sampled ones, per setting."""
    known = _known_only(top)
    if known.empty:
        return None
    plt = _plt()
    frame = _with_setting(known)
    frame = frame.assign(
        pct_failing=(frame["pct_partial_failure"] + frame["pct_complete_failure"]).astype(float)
    )
    order = _setting_order(frame)
    fig, ax = plt.subplots(figsize=(8.5, 0.45 * len(order) + 1.6))
    y = np.arange(len(order))
    for subset, colour, hatch in (("all", PALETTE[0], ""), ("top20", PALETTE[1], "//")):
        part = frame[frame["subset"] == subset].set_index("setting").reindex(order)
        ax.barh(
            y + (0.2 if subset == "all" else -0.2),
            part["pct_failing"].fillna(0),
            height=0.38,
            color=colour,
            hatch=hatch,
            edgecolor="white",
            label=f"{'top 20' if subset == 'top20' else 'all sampled'} functions",
        )
        for yy, (v, n) in enumerate(zip(part["pct_failing"], part["n_known"])):
            if v == v and n == n:
                ax.text(
                    v + 0.5,
                    yy + (0.2 if subset == "all" else -0.2),
                    f"{v:.0f}% (n={int(n)})",
                    va="center",
                    fontsize=7,
                )
    ax.set_yticks(y, order)
    ax.set_xlim(0, max(10.0, float(frame["pct_failing"].max()) * 1.3))
    ax.set_xlabel("% of functions failing (partial or complete), among functions with a known outcome")
    ax.set_title("Top 20 most used functions vs all sampled functions")
    ax.legend(frameon=False, loc="lower right")
    ax.grid(axis="y", visible=False)
    return _png(fig)


def fig_failure_by_bucket(table: pd.DataFrame) -> bytes | None:
    """% failing per frequency bucket (top 20, then deciles), one panel per framework, a line per setting."""
    if table.empty:
        return None
    plt = _plt()
    frame = _with_setting(table)
    frameworks = [f for f in FRAMEWORK_ORDER if f in set(frame["framework"])] + sorted(
        set(frame["framework"]) - set(FRAMEWORK_ORDER)
    )
    fig, axes = plt.subplots(
        len(frameworks), 1, figsize=(10, 2.8 * len(frameworks) + 0.6), sharex=True, squeeze=False
    )
    x_of = {b: i for i, b in enumerate(BUCKET_ORDER)}
    for ax, framework in zip(axes[:, 0], frameworks):
        part = frame[frame["framework"] == framework]
        for i, setting in enumerate(reversed(_setting_order(part))):
            line = part[part["setting"] == setting]
            xs = [x_of.get(b, len(BUCKET_ORDER)) for b in line["bucket"]]
            ax.plot(
                xs,
                line["pct_failing"],
                marker=MARKERS[i % len(MARKERS)],
                color=PALETTE[i % len(PALETTE)],
                linestyle=["-", "--", ":", "-."][i // len(PALETTE) % 4],
                label=setting,
                markersize=5,
            )
        ax.set_ylim(-5, 105)
        ax.set_ylabel("% failing")
        ax.set_title(framework)
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1))
    axes[-1, 0].set_xticks(range(len(BUCKET_ORDER)), ["top 20", *BUCKET_ORDER[1:]])
    axes[-1, 0].set_xlabel(
        "frequency bucket: the 20 most used functions, then usage deciles (10 = least used, 100 = most used)"
    )
    fig.suptitle("Failure rate by how often a function is used (functions with a known outcome)", y=1.0)
    fig.tight_layout()
    return _png(fig)


def fig_failure_categories(table: pd.DataFrame) -> bytes | None:
    """Failing functions per dominant failure category, stacked, per setting."""
    table = table[table["functions"] > 0] if len(table) else table
    if table.empty:
        return None
    plt = _plt()
    frame = _with_setting(table)
    order = _setting_order(frame)
    counts = frame.pivot_table(
        index="setting", columns="failure_category", values="functions", aggfunc="sum", fill_value=0
    ).reindex(order, fill_value=0)
    categories = [c for c in CATEGORY_ORDER if c in counts.columns] + sorted(
        set(counts.columns) - set(CATEGORY_ORDER)
    )
    fig, ax = plt.subplots(figsize=(9, 0.4 * len(order) + 1.8))
    hatches = ["", "//", "..", "xx", "\\\\", "++", "--"]
    segments = [
        (
            category.replace("_", " "),
            counts[category].to_numpy(dtype=float),
            (PALETTE[i % len(PALETTE)], hatches[i % len(hatches)]),
        )
        for i, category in enumerate(categories)
    ]
    left = _stacked_bars(ax, order, segments)
    for y, total in enumerate(left):
        ax.text(total + 0.3, y, f"{total:.0f}", va="center", fontsize=7)
    ax.set_xlim(0, max(float(left.max()), 1.0) * 1.08 + 1)
    ax.set_xlabel("failing functions (partial or complete failure), by their most frequent failure category")
    ax.set_title("Why functions fail, per framework and device")
    ax.legend(
        frameon=False,
        ncol=min(len(categories), 4),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.1 - 0.35 / max(len(order), 1)),
    )
    ax.grid(axis="y", visible=False)
    return _png(fig)


def fig_latency_scatter(pairs: pd.DataFrame, title: str) -> bytes | None:
    """Per-function latency on one device (y) against another (x), log-log, one panel per framework and
    device pair (a row per pair of models, so old-vs-new rows line up)."""
    pairs = pairs[pairs["ratio"].notna()] if len(pairs) else pairs
    if pairs.empty:
        return None
    plt = _plt()
    keys = PAIR_KEYS
    groups = sorted(
        pairs.groupby(keys),
        key=lambda kv: (
            DEVICE_ORDER.index(kv[0][4]) if kv[0][4] in DEVICE_ORDER else 9,
            kv[0][5],
            kv[0][7],
            _order_key(kv[0][1], kv[0][4], kv[0][0], kv[0][5]),
            kv[0][2],
            kv[0][3],
        ),
    )
    n = len(groups)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.3 * cols, 4.5 * rows + 0.5), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax, (key, group) in zip(axes.flat, groups):
        source, framework, version, mode, device, model, ref, ref_model = key
        x, y = group["reference_latency_ms"].astype(float), group["latency_ms"].astype(float)
        low = float(min(x.min(), y.min())) / 2
        high = float(max(x.max(), y.max())) * 2
        ax.fill_between(
            [low, high],
            [low * 10, high * 10],
            [high * 100, high * 100],
            color=PALETTE[3],
            alpha=0.08,
            linewidth=0,
            label=">10x slower on the y device",
        )
        ax.plot([low, high], [low, high], color="black", linewidth=0.8, linestyle="--", label="equal latency")
        ax.plot(
            [low, high],
            [low * 10, high * 10],
            color=PALETTE[3],
            linewidth=0.8,
            linestyle=":",
            label="10x slower",
        )
        ax.scatter(x, y, s=16, color=PALETTE[0], alpha=0.75, edgecolor="white", linewidth=0.3)
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        _log_axes(ax)
        ax.set_aspect("equal")
        ax.set_xlabel(f"{model_label(ref, ref_model)} latency, ms")
        ax.set_ylabel(f"{model_label(device, model)} latency, ms")
        slower = float((group["ratio"] > 1).mean() * 100)
        over = float((group["ratio"] > SLOWDOWN_FACTOR).mean() * 100)
        ax.set_title(
            f"{framework} {version} · {source} · {mode}\n{model_label(device, model)} vs "
            f"{model_label(ref, ref_model)}: n={len(group)},\n{slower:.0f}% slower, {over:.0f}% >10x slower",
            fontsize=8.5,
        )
        ax.legend(fontsize=6.5, frameon=False, loc="upper left")
    fig.suptitle(title)
    return _png(fig)


def fig_latency_density(latencies: pd.DataFrame, primary: dict[tuple[str, str], str]) -> bytes | None:
    """Density of per-function latency (log scale, Gaussian kernel of 0.2 decade) per device setting,
    one panel per framework; primary models only (the others are in the generations figure)."""
    unpaired = latencies[latencies["reference_device"].isna()] if len(latencies) else latencies
    unpaired = unpaired[unpaired["latency_ms"] > 0] if len(unpaired) else unpaired
    if len(unpaired):
        unpaired = unpaired[
            [
                _is_primary(primary, s, d, m)
                for s, d, m in unpaired[["source", "device", "device_model"]].itertuples(index=False)
            ]
        ]
    if unpaired.empty:
        return None
    plt = _plt()
    frame = _with_setting(unpaired)
    frameworks = [f for f in FRAMEWORK_ORDER if f in set(frame["framework"])] + sorted(
        set(frame["framework"]) - set(FRAMEWORK_ORDER)
    )
    logs = np.log10(frame["latency_ms"].astype(float))
    grid = np.linspace(math.floor(logs.min()) - 0.5, math.ceil(logs.max()) + 0.5, 300)
    fig, axes = plt.subplots(
        len(frameworks),
        1,
        figsize=(9, 2.7 * len(frameworks) + 0.6),
        sharex=True,
        squeeze=False,
        layout="constrained",
    )
    styles = ["-", "--", "-.", ":"]
    for ax, framework in zip(axes[:, 0], frameworks):
        part = frame[frame["framework"] == framework]
        for i, setting in enumerate(reversed(_setting_order(part))):
            values = np.log10(part.loc[part["setting"] == setting, "latency_ms"].astype(float).to_numpy())
            if len(values) < 3:
                continue
            density = np.exp(-0.5 * ((grid[:, None] - values[None, :]) / 0.2) ** 2).sum(axis=1)
            density /= len(values) * 0.2 * math.sqrt(2 * math.pi)
            ax.plot(
                10**grid,
                density,
                color=PALETTE[i % len(PALETTE)],
                linestyle=styles[i % len(styles)],
                linewidth=1.6,
                label=f"{setting} (n={len(values)})",
            )
        _log_axes(ax, "x")
        ax.set_ylim(bottom=0)
        ax.set_ylabel("density (per decade)")
        ax.set_title(framework)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1))
    axes[-1, 0].set_xlabel("per-function latency, ms (log scale)")
    fig.suptitle("Latency distribution per device (every timed function; primary model of each device type)")
    return _png(fig)


def fig_faster_shares(shares: pd.DataFrame) -> bytes | None:
    """Per device pair: % of functions faster on each device, and % more than 10x slower."""
    if shares.empty:
        return None
    plt = _plt()
    order = sorted(
        range(len(shares)),
        key=lambda i: (
            *_order_key(
                shares["framework"].iloc[i],
                shares["device"].iloc[i],
                shares["source"].iloc[i],
                shares["device_model"].iloc[i],
            ),
            shares["reference_device_model"].iloc[i],
        ),
        reverse=True,
    )
    frame = shares.iloc[order].reset_index(drop=True)
    frame = frame.assign(pair=[pair_label(r) for r in frame.itertuples()])
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(frame) + 1.6))
    y = np.arange(len(frame))
    ax.barh(
        y, -frame["pct_faster_on_reference"], color=PALETTE[0], label="faster on the reference (right of '/')"
    )
    ax.barh(
        y,
        frame["pct_faster_on_device"],
        color=PALETTE[1],
        hatch="//",
        edgecolor="white",
        label="faster on the device (left of '/')",
    )
    ax.scatter(
        -frame["pct_over_10x_slower"],
        y,
        marker="|",
        s=200,
        color="black",
        zorder=3,
        label="of which >10x slower on the device",
    )
    for yy, (a, b) in enumerate(zip(frame["pct_faster_on_reference"], frame["pct_faster_on_device"])):
        ax.text(-a - 1, yy, f"{a:.0f}%", ha="right", va="center", fontsize=7)
        ax.text(b + 1, yy, f"{b:.0f}%", ha="left", va="center", fontsize=7)
    ax.set_yticks(y, frame["pair"])
    ax.set_xlim(-118, 118)
    ax.set_xticks([-100, -50, 0, 50, 100], ["100", "50", "0", "50", "100"])
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xlabel("% of functions timed on both devices")
    ax.set_title("Where is each function faster? (device / reference, same subtests)")
    ax.legend(
        frameon=False,
        fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.1 - 0.35 / max(len(frame), 1)),
        ncol=2,
    )
    ax.grid(axis="y", visible=False)
    return _png(fig)


def fig_then_now_outcomes(summary: pd.DataFrame) -> bytes | None:
    """Functions per change category (study 2023 vs newer run, same device type), per newer setting."""
    if summary.empty:
        return None
    plt = _plt()
    frame = summary.iloc[::-1].reset_index(drop=True)
    labels = [f"{now}\n  vs {then}" for now, then in zip(frame["now_setting"], frame["then_setting"])]
    fig, ax = plt.subplots(figsize=(9.5, 0.6 * len(frame) + 1.8))
    segments = [
        (change.replace("_", " "), frame[change].to_numpy(dtype=float), CHANGE_STYLE[change])
        for change in CHANGE_ORDER
        if frame[change].to_numpy(dtype=float).any()
    ]
    _stacked_bars(ax, labels, segments, min_label=3)
    ax.set_xlabel("functions")
    ax.set_title("Then and now: the study's 2023 outcome vs a newer run, per function (same device type)")
    ax.legend(
        frameon=False, ncol=4, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1 - 0.35 / len(frame))
    )
    ax.grid(axis="y", visible=False)
    return _png(fig)


def fig_setting_scatter(
    frame: pd.DataFrame, x: str, y: str, x_setting: str, y_setting: str, title: str, faster_word: str
) -> bytes | None:
    """Per-function latency in one setting (y) against another (x), log-log, one panel per pair of
    settings: then vs now, eager vs compiled (the function-level latencies; the subtests may differ)."""
    frame = frame[(frame[x] > 0) & (frame[y] > 0)] if len(frame) else frame
    if frame.empty:
        return None
    plt = _plt()
    groups = list(frame.groupby([x_setting, y_setting], sort=False))
    cols = min(3, len(groups))
    rows = math.ceil(len(groups) / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(4.3 * cols, 4.6 * rows + 0.6), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[len(groups) :]:
        ax.set_visible(False)
    for ax, ((x_label, y_label), group) in zip(axes.flat, groups):
        xs, ys = group[x].astype(float), group[y].astype(float)
        low, high = float(min(xs.min(), ys.min())) / 2, float(max(xs.max(), ys.max())) * 2
        ax.plot([low, high], [low, high], color="black", linewidth=0.8, linestyle="--", label="equal latency")
        ax.plot(
            [low, high],
            [low * 10, high * 10],
            color=PALETTE[3],
            linewidth=0.8,
            linestyle=":",
            label="10x slower",
        )
        ax.plot(
            [low, high],
            [low / 10, high / 10],
            color=PALETTE[0],
            linewidth=0.8,
            linestyle=":",
            label="10x faster",
        )
        ax.scatter(xs, ys, s=16, color=PALETTE[2], alpha=0.8, edgecolor="white", linewidth=0.3)
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        _log_axes(ax)
        ax.set_aspect("equal")
        ax.set_xlabel(f"{_short(x_label)}, ms", fontsize=8)
        ax.set_ylabel(f"{_short(y_label)}, ms", fontsize=8)
        faster = float((ys < xs).mean() * 100)
        ax.set_title(f"y: {y_label}\nx: {x_label}\nn={len(group)}, {faster:.0f}% {faster_word}", fontsize=7.5)
        ax.legend(fontsize=6.5, frameon=False, loc="upper left")
    fig.suptitle(title)
    return _png(fig)


def mode_pairs(latencies: pd.DataFrame) -> pd.DataFrame:
    """Per function: latency in eager mode beside another mode of the same source, framework version
    and device (the latencies table pairs devices within a mode, not modes)."""
    columns = [
        "framework",
        "function",
        "eager_setting",
        "other_setting",
        "eager_ms",
        "other_ms",
        "eager_subtests",
        "other_subtests",
        "ratio_other_vs_eager",
    ]
    unpaired = latencies[latencies["reference_device"].isna()] if len(latencies) else latencies
    if unpaired.empty or unpaired["mode"].nunique() < 2:
        return pd.DataFrame(columns=columns)
    keys = ["source", "framework", "framework_version", "device", "device_model", "function"]
    eager = _with_setting(unpaired[unpaired["mode"] == "eager"])
    other = _with_setting(unpaired[unpaired["mode"] != "eager"])
    both = eager.merge(other, on=keys, suffixes=("_e", "_o"))
    if both.empty:
        return pd.DataFrame(columns=columns)
    both["_o"] = [
        (*_order_key(f, d, s, m), v, _mode_rank(mo))
        for s, f, v, d, m, mo in both[
            ["source", "framework", "framework_version", "device", "device_model", "mode_o"]
        ].itertuples(index=False)
    ]
    both = both.sort_values(["_o", "function"])
    return pd.DataFrame(
        {
            "framework": both["framework"],
            "function": both["function"],
            "eager_setting": both["setting_e"],
            "other_setting": both["setting_o"],
            "eager_ms": both["latency_ms_e"],
            "other_ms": both["latency_ms_o"],
            "eager_subtests": both["n_subtests_e"],
            "other_subtests": both["n_subtests_o"],
            "ratio_other_vs_eager": both["latency_ms_o"] / both["latency_ms_e"],
        }
    ).reset_index(drop=True)[columns]


def mode_summary(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per setting pair: functions timed in both modes, median ratio other/eager, % faster than eager."""
    columns = [
        "framework",
        "other_setting",
        "eager_setting",
        "n_functions",
        "median_ratio_other_vs_eager",
        "pct_faster_than_eager",
        "pct_over_10x_slower_than_eager",
    ]
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    grouped = pairs.groupby(["framework", "other_setting", "eager_setting"], sort=False)[
        "ratio_other_vs_eager"
    ]
    return pd.DataFrame(
        {
            "n_functions": grouped.size(),
            "median_ratio_other_vs_eager": grouped.median(),
            "pct_faster_than_eager": grouped.apply(lambda r: 100.0 * (r < 1).mean()).round(1),
            "pct_over_10x_slower_than_eager": grouped.apply(lambda r: 100.0 * (r > 10).mean()).round(1),
        }
    ).reset_index()[columns]


def _short(label: str) -> str:
    """A setting label without its source, for axis labels that must fit."""
    parts = [p.strip() for p in label.split("·")]
    return " · ".join(parts[1:]) if len(parts) > 1 else label


# --------------------------------------------------------------------------- rendering


@dataclass
class Section:
    """A titled part of the report: why it is there, its tables, its figures (file names); the
    summary has headlines instead (each linking to the section that details it)."""

    title: str
    text: str
    tables: list[tuple[str, pd.DataFrame]]
    figures: list[str]
    headlines: list[Headline] = field(default_factory=list)


def _html_table(frame: pd.DataFrame) -> str:
    if frame is None or frame.empty:
        return "<p><em>(no rows)</em></p>"
    shown = frame.copy()
    for column in shown.columns:
        shown[column] = [
            (
                ""
                if v is None or (isinstance(v, float) and math.isnan(v))
                else f"{v:.4g}"
                if isinstance(v, float)
                else str(v)
            )
            for v in shown[column]
        ]
    return shown.to_html(index=False, border=0, escape=True)


def _markdown_table(frame: pd.DataFrame) -> str:
    """The table in aggregate.to_markdown's format, without its heading."""
    return to_markdown({"t": frame}).split("\n", 1)[1]


def heading_anchor(text: str) -> str:
    """The anchor GitHub gives a Markdown heading (lower case, punctuation dropped, spaces as hyphens),
    so the summary's links work in the rendered report.md and, as ids, in report.html alike."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _heading_anchors(sections: list[Section]) -> dict[tuple[int, int], str]:
    """Each heading's anchor in document order, repeats numbered -1, -2 as GitHub does (a table title
    may repeat a section title). Key: (section index, -1) for a section, (section, table) for a table."""
    seen: dict[str, int] = {}

    def unique(text: str) -> str:
        base = heading_anchor(text)
        count = seen.get(base, 0)
        seen[base] = count + 1
        return base if count == 0 else f"{base}-{count}"

    unique("Portability report")
    anchors: dict[tuple[int, int], str] = {}
    for i, section in enumerate(sections):
        anchors[(i, -1)] = unique(section.title)
        for j, (title, _) in enumerate(section.tables):
            anchors[(i, j)] = unique(title)
    return anchors


def _inline_html(text: str) -> str:
    """The inline Markdown the report writes, as HTML: **bold**, `code`, in-page links [t](#a); any
    other link keeps only its text, so the page stays self-contained."""
    out = html.escape(text, quote=False)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\[([^\]]+)\]\(#([\w-]+)\)", r"<a href='#\2'>\1</a>", out)
    return re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", out)


def _headline_lines(headline: Headline, anchor: str) -> tuple[str, pd.DataFrame | None]:
    """(the headline's Markdown line, its table or None when nothing was measured)."""
    line = f"**{headline.title}**: {headline.note} [Details](#{anchor})"
    table = headline.table
    return line, (table if len(table) and len(table.columns) > 1 else None)


def render(sections: list[Section], images: dict[str, bytes], intro: str) -> tuple[str, str]:
    """(Markdown, HTML): Markdown points at figures/<name>; HTML embeds them as data URIs (offline).
    Headings carry GitHub's anchors in both, so links between sections work in either."""
    anchors = _heading_anchors(sections)
    by_title = {section.title: anchors[(i, -1)] for i, section in reversed(list(enumerate(sections)))}
    md = ["# Portability report\n", intro + "\n"]
    page = [
        "<!doctype html>",
        "<html lang='en'><head><meta charset='utf-8'><title>Portability report</title>",
        "<style>body{font-family:sans-serif;max-width:1200px;margin:auto;padding:0 1em;line-height:1.4}"
        "table{border-collapse:collapse;font-size:12px;margin:0.5em 0 1.5em}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}th{background:#f2f2f2}"
        "img{max-width:100%}figure{margin:1em 0}figcaption{font-size:12px;color:#444}"
        "details{margin-bottom:1em}</style></head><body>",
        "<h1>Portability report</h1>",
        f"<p>{_inline_html(intro)}</p>",
        "<ul>",
    ]
    page += [
        f"<li><a href='#{anchors[(i, -1)]}'>{html.escape(s.title)}</a></li>" for i, s in enumerate(sections)
    ]
    page.append("</ul>")
    for i, section in enumerate(sections):
        page.append(f"<h2 id='{anchors[(i, -1)]}'>{html.escape(section.title)}</h2>")
        if section.text:
            page.append(f"<p>{_inline_html(section.text)}</p>")
        if section.headlines:  # the summary: compact, so that it fits one screen
            lines = [f"## {section.title}", ""] + ([section.text, ""] if section.text else [])
            for headline in section.headlines:
                line, table = _headline_lines(headline, by_title.get(headline.target, ""))
                lines += [line, "", _markdown_table(table).strip() if table is not None else "(no rows)", ""]
                page += [f"<p>{_inline_html(line)}</p>", _html_table(table)]
            md.append("\n".join(lines))
            continue
        md += [f"\n## {section.title}\n", section.text + "\n"]
        for name in section.figures:
            if name not in images:
                continue
            md.append(f"![{name}](figures/{name})\n")
            encoded = base64.b64encode(images[name]).decode()
            page.append(
                f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,{encoded}'>"
                f"<figcaption>{html.escape(name)}</figcaption></figure>"
            )
        for j, (title, table) in enumerate(section.tables):
            md += [f"\n### {title}\n", _markdown_table(table)]
            body = _html_table(table)
            if len(table) > 40:
                body = f"<details><summary>{len(table)} rows</summary>{body}</details>"
            page += [f"<h3 id='{anchors[(i, j)]}'>{html.escape(title)}</h3>", body]
    page.append("</body></html>")
    return "\n".join(md), "\n".join(page)


def _labelled(labels: list[str], frame: pd.DataFrame, values: list[str]) -> pd.DataFrame:
    out = pd.DataFrame({"label": labels})
    for column in values:
        out[column] = list(frame[column]) if len(frame) else []
    return out


def _plot_csvs(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Plot data for `dvc plots`: one CSV per plot, a `label` column (the bar: setting, device pair,
    function) and numeric columns, so a horizontal-bar template diffs them across revisions."""
    shares = _known_only(tables["outcome_shares"])
    cross = tables["cross_device_shares"]
    ratios = tables["cross_device_functions"]
    bucket = tables["failure_by_bucket"]
    summary = tables["then_now_summary"]
    long = (
        summary.melt(
            id_vars=["now_setting"], value_vars=CHANGE_ORDER, var_name="change", value_name="functions"
        )
        if len(summary)
        else pd.DataFrame(columns=["now_setting", "change", "functions"])
    )
    long = long[long["functions"] > 0] if len(long) else long
    return {
        "outcome_shares.csv": _labelled(
            list(_with_setting(shares)["setting"]) if len(shares) else [],
            shares,
            ["n_known", "pct_success", "pct_partial_failure", "pct_complete_failure"],
        ),
        "slowdown_shares.csv": _labelled(
            [pair_label(r) for r in cross.itertuples()],
            cross,
            ["n_functions", "pct_over_10x_slower", "pct_faster_on_device", "median_ratio"],
        ),
        "latency_ratios.csv": _labelled(
            [f"{pair_label(r)} · {r.function}" for r in ratios.itertuples()], ratios, ["ratio"]
        ),
        "failure_by_decile.csv": _labelled(
            [f"{label} · bucket {b}" for label, b in zip(_with_setting(bucket)["setting"], bucket["bucket"])]
            if len(bucket)
            else [],
            bucket,
            ["n_known", "pct_failing"],
        ),
        "then_now.csv": _labelled(
            [f"{now} · {change}" for now, change in zip(long["now_setting"], long["change"])],
            long,
            ["functions"],
        ),
    }


def build(inputs: Inputs) -> tuple[list[Section], dict[str, pd.DataFrame], dict[str, bytes], dict[str, Any]]:
    """Every table, figure and metric of the report from the input tables."""
    outcomes, latencies = inputs.outcomes, inputs.latencies
    samples = _canonical_samples(inputs.samples)
    primary = primary_models(outcomes, latencies)
    summary = summary_tables(outcomes, latencies, samples if len(samples) else None)
    cross = primary_pairs(latencies, primary, same_type=False)
    generations = primary_pairs(latencies, primary, same_type=True)
    pair_keys = PAIR_KEYS

    def _matching(table: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
        if table.empty or pairs.empty:
            return (
                table.iloc[0:0] if len(table.columns) else pd.DataFrame(columns=[*pair_keys, "n_functions"])
            )
        wanted = set(map(tuple, pairs[pair_keys].itertuples(index=False)))
        return table[[tuple(r) in wanted for r in table[pair_keys].itertuples(index=False)]].reset_index(
            drop=True
        )

    by_function = summary["latency_by_function"]
    cross_functions = _matching(by_function, cross)
    gen_shares = ratio_shares(generations, pair_keys) if len(generations) else pd.DataFrame()
    changes, moves = then_now(inputs, primary)
    modes = mode_pairs(latencies)
    tables: dict[str, pd.DataFrame] = {
        **summary,
        "settings": settings_overview(outcomes, latencies, primary),
        "sample_coverage": sample_coverage(outcomes, samples),
        "cross_device_shares": _matching(summary["slowdown_shares"], cross),
        "cross_device_functions": cross_functions,
        "generation_shares": gen_shares,
        "failure_by_bucket": failure_by_bucket(outcomes, samples),
        "failure_categories": failure_categories(outcomes, inputs.results),
        "then_now_changes": changes,
        "then_now_summary": change_summary(changes),
        "then_now_latency": moves,
        "then_now_latency_summary": latency_move_summary(moves),
        "removed": removed_functions(inputs),
        "modes": modes,
        "mode_summary": mode_summary(modes),
    }
    tables["executions"], tables["superseded"] = how_runs_ran(inputs.results, inputs.runs)
    tables["summary_failing"] = failing_summary(outcomes, primary)
    tables["summary_slowdown"] = slowdown_summary(tables["cross_device_shares"], cross_functions)
    tables["summary_then_now"] = then_now_headline(
        tables["then_now_summary"], tables["then_now_latency_summary"]
    )
    tables["summary_compiled"] = compiled_summary(tables["executions"], outcomes)
    images: dict[str, bytes] = {}
    makers: list[tuple[str, Callable[[], bytes | None]]] = [
        ("outcome_shares.png", lambda: fig_outcome_shares(summary["outcome_shares"])),
        ("top20_vs_all.png", lambda: fig_top20(summary.get("top20_vs_all", pd.DataFrame()))),
        ("failure_by_decile.png", lambda: fig_failure_by_bucket(tables["failure_by_bucket"])),
        ("failure_categories.png", lambda: fig_failure_categories(tables["failure_categories"])),
        ("latency_density.png", lambda: fig_latency_density(latencies, primary)),
        ("faster_shares.png", lambda: fig_faster_shares(tables["cross_device_shares"])),
        (
            "generations_latency.png",
            lambda: fig_latency_scatter(
                generations, "Old vs new hardware of one type: per-function latency (same subtests)"
            ),
        ),
        ("then_now_outcomes.png", lambda: fig_then_now_outcomes(tables["then_now_summary"])),
        (
            "then_now_latency.png",
            lambda: fig_setting_scatter(
                moves,
                "then_ms",
                "now_ms",
                "then_setting",
                "now_setting",
                "Then and now: per-function latency, the study (x) vs a newer run (y), same device type\n"
                "(the curated tests differ from the study's, so read the trend, not single points)",
                "faster now",
            ),
        ),
        (
            "modes_latency.png",
            lambda: fig_setting_scatter(
                modes,
                "eager_ms",
                "other_ms",
                "eager_setting",
                "other_setting",
                "Execution modes: per-function latency, eager (x) vs compiled (y), same device",
                "faster than eager",
            ),
        ),
    ]
    scatter_names = []
    if len(cross):
        for (dev, ref), group in sorted(
            cross.groupby(["device", "reference_device"]),
            key=lambda kv: (
                DEVICE_ORDER.index(kv[0][1]) if kv[0][1] in DEVICE_ORDER else 9,
                DEVICE_ORDER.index(kv[0][0]) if kv[0][0] in DEVICE_ORDER else 9,
            ),
        ):
            name = f"latency_{_slug(dev)}_vs_{_slug(ref)}.png"
            scatter_names.append(name)
            makers.append(
                (
                    name,
                    lambda g=group, d=dev, r=ref: fig_latency_scatter(
                        g,
                        f"Per-function latency, {d.upper()} against {r.upper()} "
                        "(same subtests, primary models)",
                    ),
                )
            )
    for name, make in makers:
        data = make()
        if data is not None:
            images[name] = data
    sections = _sections(tables, scatter_names)
    return sections, tables, images, headline_metrics(tables, primary)


def _sections(tables: dict[str, pd.DataFrame], scatter_names: list[str]) -> list[Section]:
    def cols(name: str, drop: tuple[str, ...] = ()) -> pd.DataFrame:
        frame = _ordered(tables.get(name, pd.DataFrame()))
        return frame.drop(columns=[c for c in drop if c in frame.columns]) if len(frame.columns) else frame

    hidden = ("now_key", "now_version")
    changes = cols("then_now_changes", hidden)
    interesting = (
        changes[changes["change"].isin(["fixed", "broke", "removed", "still_failing"])]
        if len(changes)
        else changes
    )
    return [
        Section(SUMMARY_TITLE, "", [], [], summary_headlines(tables)),
        Section(
            "Settings measured",
            "Every source x framework version x device model x mode in the data: functions, functions "
            "with a known outcome (the study published failure reports only for its main machines, so its "
            "A100, TPU v2-8 and most CPU runs have timings but no outcome), and functions timed. "
            "'primary_model' marks the model that stands for its device type in cross-device figures. "
            "Sample coverage: sampled functions (replaced ones left out) with outcome rows; the rest "
            "were not run or are spelled differently.",
            [("Settings", cols("settings")), ("Sample coverage", cols("sample_coverage"))],
            [],
        ),
        Section(
            RUNS_TITLE,
            "A label is a claim, so every subtest of our runs records how it executed: eager; compiled "
            "(the function under test went through the compiler as a whole: torch.compile with "
            "fullgraph, jax.jit, tf.function(jit_compile=True)); graph_breaks (torch.compile split it); "
            "eager_fallback (torch.compile made no graph and ran it eagerly); not_routed (compiled mode, "
            "but the timed code did not go through the compiler). Compiled-mode outcomes and latencies "
            "count only subtests that really compiled; the rest are counted in the outcomes table's "
            "n_not_compiled. A failing subtest is re-run alone in a fresh worker before it counts; one "
            "that passes there is order-dependent (counted as passed). pct_unclassified: failing rows "
            "no rule of the rule table (src/portability_data/runner/rules/failures.yaml) classified. "
            "Superseded runs (made by an older harness or older case files) stay in the dataset but are "
            "not pooled.",
            [("Execution per setting", cols("executions")), ("Superseded runs", cols("superseded"))],
            [],
        ),
        Section(
            OUTCOMES_TITLE,
            "Share of functions per outcome among functions with a known outcome: success (every subtest "
            "passes), partial failure (some fail), complete failure (all fail). Unknown and unavailable "
            "(function absent from that framework version) are counted apart.",
            [("Outcome shares", cols("outcome_shares"))],
            ["outcome_shares.png"],
        ),
        Section(
            "Top 20 vs all sampled functions (the study's Table 4)",
            "The same shares for the 20 most used functions of each framework against the whole sample.",
            [("Top 20 vs all", _known_only(cols("top20_vs_all")))],
            ["top20_vs_all.png"],
        ),
        Section(
            "Failure rate by frequency decile",
            "Share of functions failing (partial or complete) per frequency bucket of the sample: the "
            "top 20, then the deciles of usage the study drew 5 functions from.",
            [
                (
                    "% failing (functions with a known outcome) per bucket",
                    bucket_matrix(cols("failure_by_bucket")),
                )
            ],
            ["failure_by_decile.png"],
        ),
        Section(
            "Failure categories",
            "Why functions fail: per setting, failing functions by their most frequent failure category "
            "(rule-based classifier), and the failing subtest rows per category (harness failures, the "
            "study's own test-code errors, left out).",
            [("Failure categories", cols("failure_categories"))],
            ["failure_categories.png"],
        ),
        Section(
            LATENCY_TITLE,
            "Per-function latency on one device against another over the subtests that passed and were "
            "timed on both (the study's procedure; ratio = device / reference, reference GPU, then CPU). "
            "Scatter plots use each device type's primary model; the share table lists every pair.",
            [
                ("Faster on which device, primary models", cols("cross_device_shares")),
                ("Faster on which device, every device pair", cols("slowdown_shares")),
                (
                    "Per-function latency and ratio, primary models (slowest first)",
                    cols("cross_device_functions"),
                ),
            ],
            ["faster_shares.png", *scatter_names, "latency_density.png"],
        ),
        Section(
            "Hardware generations (the study's Table 3)",
            "Old vs new hardware of one device type: every model against its type's primary one "
            "(A100 / T4, TPU v2-8 / TPU v3-8), latency ratio over common subtests; outcome shares of the "
            "models involved. CPU machines are in the table, not the figure (different VMs, not "
            "generations).",
            [
                ("Latency ratios within a device type", cols("hardware_generations")),
                ("Outcomes of the models compared", _known_only(cols("hardware_generation_outcomes"))),
            ],
            ["generations_latency.png"],
        ),
        Section(
            THEN_NOW_TITLE,
            "Per function, the study's outcome and latency beside every newer setting of the same device "
            "type (the same model where the study has data for it, else its primary one). fixed: failed "
            "in 2023, succeeds now; broke: the reverse; removed: the function is gone from the API (cases "
            "table status 'removed', or unavailable in the run); not measured then: the study has no "
            "outcome for it on that device. Latency: CPU vs CPU is the comparable pair (the study timed "
            "CPUs too); the tests differ between the study and our cases, so read the trend.",
            [
                ("Changes per setting", cols("then_now_summary", hidden)),
                ("Functions that changed or still fail", interesting),
                ("Removed from the API", cols("removed")),
                ("Latency then vs now, per setting", cols("then_now_latency_summary", hidden)),
                ("Latency then vs now, per function", cols("then_now_latency", hidden)),
            ],
            ["then_now_outcomes.png", "then_now_latency.png"],
        ),
        Section(
            "Execution modes: eager vs compiled",
            "Where a setting ran in more than one mode (torch.compile, jax.jit, tf.function with XLA beside "
            "the study's eager mode): per-function latency in each mode on the same device. Function-level "
            "latencies over each mode's own timed subtests (n_subtests per side in the table).",
            [
                ("Compiled vs eager, per setting", cols("mode_summary")),
                ("Compiled vs eager, per function", cols("modes")),
            ],
            ["modes_latency.png"],
        ),
    ]


def reproduction_section(data_dir: Path) -> tuple[Section, dict[str, Any]] | None:
    """The study's published numbers beside ours (computed in reproduction.py; None if not built)."""
    from portability_data.pipeline.reproduction import report_parts

    parts = report_parts(data_dir)
    if parts is None:
        return None
    section = Section("Reproduction of the study's published numbers", parts.text, parts.tables, [])
    return section, parts.metrics


def run_report(data_dir: Path, out_dir: Path, metrics_path: Path) -> None:
    """The `report` stage: Markdown, offline HTML, figures, plot CSVs and metrics, from data_dir's tables."""
    data_dir, out_dir, metrics_path = Path(data_dir), Path(out_dir), Path(metrics_path)
    inputs = load_inputs(data_dir)
    sections, tables, images, metrics = build(inputs)
    reproduced = reproduction_section(data_dir)
    if reproduced is not None:
        sections.append(reproduced[0])
        metrics["reproduction"] = reproduced[1]
    figure_dir = out_dir / "figures"
    figure_dir.mkdir(parents=True, exist_ok=True)
    for old in figure_dir.glob("*.png"):
        if old.name not in images:
            old.unlink()
    for name, data in images.items():
        atomic_write_bytes(figure_dir / name, data)
    sources = sorted(
        set(inputs.outcomes["source"]) if len(inputs.outcomes) else (), key=lambda s: (s != STUDY, s)
    )
    named = "; ".join(f"{s}: {SOURCE_MEANING[s]}" if s in SOURCE_MEANING else s for s in sources)
    intro = (
        f"Generated by `portability report` from the aggregated tables (sources: {named or 'none'}); "
        "every table names its source, framework version, device model and mode. Method (Mince et al. "
        "2023, continued): [docs/METHOD.md](../docs/METHOD.md)."
    )
    markdown, page = render(sections, images, intro)
    atomic_write_bytes(out_dir / "report.md", markdown.encode())
    atomic_write_bytes(out_dir / "report.html", page.encode())
    plots = out_dir / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    csvs = _plot_csvs(tables)
    for old in plots.glob("*.csv"):
        if old.name not in csvs:
            old.unlink()
    for name, frame in csvs.items():
        atomic_write_bytes(plots / name, frame.to_csv(index=False).encode())
    metrics_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(
        metrics_path, (json.dumps(metrics, indent=2, sort_keys=True, allow_nan=False) + "\n").encode()
    )
