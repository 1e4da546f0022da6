"""Latency comparisons between settings: which device pairs the cross-device and hardware-generation
tables read (primary models), how a pair is labelled, and eager vs compiled latency of one device
(the latencies table pairs devices within a mode, so the report pairs the modes itself)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from portability_data.report.inputs import (
    SETTING_KEYS,
    is_primary,
    mode_rank,
    model_label,
    reading_order_key,
    with_setting,
)
from portability_data.report.summaries import PAIR_KEYS


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
        ref_primary = is_primary(primary, source, ref, ref_model)
        dev_primary = is_primary(primary, source, device, model)
        if same_type:
            keep.append(device == ref and ref_primary and not dev_primary and device != "cpu")
        else:
            keep.append(
                device != ref and ref_primary and dev_primary and order.get(ref, 9) < order.get(device, 9)
            )
    return paired[keep]


def rows_of_pairs(table: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The rows of a per-device-pair table (shares, per-function ratios) whose pair is among `pairs`'
    pairs; none when either is empty (keeping the table's columns, or the pair keys and n_functions)."""
    if table.empty or pairs.empty:
        return table.iloc[0:0] if len(table.columns) else pd.DataFrame(columns=[*PAIR_KEYS, "n_functions"])
    wanted = set(map(tuple, pairs[PAIR_KEYS].itertuples(index=False)))
    return table[[tuple(r) in wanted for r in table[PAIR_KEYS].itertuples(index=False)]].reset_index(
        drop=True
    )


def pair_label(row: Any) -> str:
    """'torch 1.12.0 · TPU v3-8 / T4 (gpu) · eager': the ratio's two devices, named."""
    device = model_label(row.device, row.device_model)
    reference = model_label(row.reference_device, row.reference_device_model)
    return f"{row.source} · {row.framework} {row.framework_version} · {device} / {reference} · {row.mode}"


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
    eager = with_setting(unpaired[unpaired["mode"] == "eager"])
    other = with_setting(unpaired[unpaired["mode"] != "eager"])
    both = eager.merge(other, on=keys, suffixes=("_e", "_o"))
    if both.empty:
        return pd.DataFrame(columns=columns)
    both["_o"] = [
        (*reading_order_key(f, d, s, m), v, mode_rank(mo))
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
