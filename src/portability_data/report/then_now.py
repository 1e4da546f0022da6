"""Then and now: each function's 2023 outcome and latency in the study beside every newer run on the
same device type, what changed (fixed, broke, removed, ...), the per-setting summaries of both, and
the functions gone from the API."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from portability_data.report.inputs import (
    FAILING,
    KNOWN,
    SETTING_KEYS,
    STUDY,
    Inputs,
    is_primary,
    mode_rank,
    model_label,
    reading_order_key,
    setting_label,
    slug,
    with_setting,
)

# The study's device a newer device is read against where the type differs: PyTorch's xla device
# (torch_xla on XLA CPU) against the study's TPU runs (torch_xla on a TPU v3-8): the XLA layer's
# lowering and fallbacks are shared, dtype support and speed are not.
STUDY_DEVICE_OF = {"xla": "tpu"}

# The newer setting's key columns of every then/now table (hidden in the report: the label says it).
NOW_KEYS = ["now_key", "now_version", "now_device"]

CHANGE_ORDER = [
    "fixed",
    "broke",
    "still_failing",
    "still_works",
    "falls_back_now",  # runs now, with ops on the host instead of the device (XLA's counters)
    "removed",
    "not_measured_then",
    "unknown_now",
    "not_run_now",
    "new",
]


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
        "now_device",
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
        "now_device",
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
        key=lambda s: (*reading_order_key(s[1], s[3], s[0], s[4]), s[2], mode_rank(s[5])),
    )
    elsewhere = _study_elsewhere(study, primary)
    for setting in now_settings:
        source, framework, version, device, model, mode = setting
        key = {
            "now_key": f"{source}/{framework}/{slug(model)}/{mode}",
            "now_version": version,
            "now_device": device,
        }
        here = newer[(newer[SETTING_KEYS] == pd.Series(setting, index=SETTING_KEYS)).all(axis=1)]
        then_device = STUDY_DEVICE_OF.get(device, device)
        then_model = _then_model(
            study, framework, then_device, model, lambda f: (f["outcome"].isin(KNOWN)).sum(), primary
        )
        now_label = setting_label(*setting)
        then_rows = (
            study[
                (study["framework"] == framework)
                & (study["device"] == then_device)
                & (study["device_model"] == then_model)
            ]
            if then_model
            else study.iloc[0:0]
        )
        then_label = (
            setting_label(*then_rows[SETTING_KEYS].iloc[0])
            if len(then_rows)
            else f"{STUDY}: no {then_device}"
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
        # the latencies are read against the machine the outcomes were (one pair per comparison), in
        # the same mode: the study timed eager only, so a compiled setting of ours has no then latency
        if not then_model or newer_lat.empty:
            continue
        now_lat = newer_lat[(newer_lat[SETTING_KEYS] == pd.Series(setting, index=SETTING_KEYS)).all(axis=1)]
        then_lat = study_lat[
            (study_lat["framework"] == framework)
            & (study_lat["device"] == then_device)
            & (study_lat["device_model"] == then_model)
            & (study_lat["mode"] == mode)  # compiled now is not read against eager then
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


def _study_elsewhere(study: pd.DataFrame, primary: dict[tuple[str, str], str]) -> dict[tuple, dict[str, str]]:
    """(framework, device, model label) -> function -> known 2023 outcome on the study's primary models,
    so a function's 2023 record on the other devices is shown beside the same-device comparison."""
    out: dict[tuple, dict[str, str]] = {}
    known = study[study["outcome"].isin(KNOWN)] if len(study) else study
    for framework, function, device, model, outcome in known[
        ["framework", "function", "device", "device_model", "outcome"]
    ].itertuples(index=False):
        if is_primary(primary, STUDY, device, model):
            out.setdefault((framework, device, model_label(device, model)), {})[function] = outcome
    return out


def _then_model(
    study: pd.DataFrame,
    framework: str,
    device: str,
    model: str,
    score: Callable[[pd.DataFrame], Any],
    primary: dict[tuple[str, str], str],
) -> str | None:
    """The one study machine a newer setting is compared with, for its outcomes and its latencies
    alike: the same model where the study has data for it, else the study's primary model of the
    device type where this framework has data on it, else the best-scored one. Choosing per number
    compared TPU v3-8's outcomes with TPU v2-8's latencies under one label (issue 49)."""
    rows = study[(study["framework"] == framework) & (study["device"] == device)] if len(study) else study
    if rows.empty:
        return None
    scores = {m: int(score(group)) for m, group in rows.groupby("device_model")}
    if scores.get(model, 0) > 0:
        return model
    chosen = primary.get((STUDY, device))
    if scores.get(chosen, 0) > 0:
        return chosen
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
    if after == "host_fallback":
        return "falls_back_now"
    if before in FAILING:
        return "fixed" if after == "success" else "still_failing"
    return "still_works" if after == "success" else "broke"


def change_summary(changes: pd.DataFrame) -> pd.DataFrame:
    """Functions per change category, per framework and newer setting (and the study setting it is read
    against)."""
    if changes.empty:
        return pd.DataFrame(columns=["framework", "now_setting", "then_setting", *CHANGE_ORDER, *NOW_KEYS])
    table = (
        changes.groupby(["framework", "now_setting", "then_setting", *NOW_KEYS, "change"], sort=False)
        .size()
        .unstack("change", fill_value=0)
        .reindex(columns=CHANGE_ORDER, fill_value=0)
        .reset_index()
    )
    table.columns.name = None
    return table[["framework", "now_setting", "then_setting", *CHANGE_ORDER, *NOW_KEYS]]


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
        *NOW_KEYS,
    ]
    moves = moves[moves["ratio_now_vs_then"].notna()] if len(moves) else moves
    if moves.empty:
        return pd.DataFrame(columns=columns)
    grouped = moves.groupby(["framework", "now_setting", "then_setting", *NOW_KEYS], sort=False)[
        "ratio_now_vs_then"
    ]
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
        gone = with_setting(inputs.outcomes[inputs.outcomes["outcome"] == "unavailable"])
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
