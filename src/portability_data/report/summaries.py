"""The study's headline tables from any outcomes and latencies tables (outcome shares, top-20 vs all,
hardware generations, per-function latency ratios, slowdown shares), and Markdown for them.

Not part of the `aggregate` stage's tables: the report builds its sections from them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from portability_data.readings.frames import plain_frame

STUDY = "mince2023"  # the study: its outcomes' source and its sample's id

# Summary tables orient each device pair with the earlier device of this order as the reference,
# so the study's ratio reads TPU / GPU.
REFERENCE_ORDER = ("gpu", "cpu", "tpu", "mps")
SLOWDOWN_FACTOR = 10.0


# host_fallback last: the study had no such class (its shares are unchanged: zero there).
KNOWN_OUTCOMES = ("success", "partial_failure", "complete_failure", "host_fallback")


def _shares(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Functions per outcome and the share (%) of each known outcome among known outcomes."""
    if frame.empty:
        return pd.DataFrame(
            columns=[
                *keys,
                "n_functions",
                "n_known",
                *[f"pct_{o}" for o in KNOWN_OUTCOMES],
                "n_unknown",
                "n_unavailable",
                "n_not_compiled",
            ]
        )
    counts = frame.groupby([*keys, "outcome"]).size().unstack("outcome", fill_value=0)
    for outcome in (*KNOWN_OUTCOMES, "unknown", "unavailable", "not_compiled"):
        if outcome not in counts.columns:
            counts[outcome] = 0
    known = counts[list(KNOWN_OUTCOMES)].sum(axis=1)
    table = pd.DataFrame({"n_functions": counts.sum(axis=1), "n_known": known})
    for outcome in KNOWN_OUTCOMES:
        table[f"pct_{outcome}"] = (100.0 * counts[outcome] / known.where(known > 0)).round(1)
    table["n_unknown"] = counts["unknown"]
    table["n_unavailable"] = counts["unavailable"]
    table["n_not_compiled"] = counts["not_compiled"]
    return table.reset_index()


def _oriented_pairs(latencies: pd.DataFrame) -> pd.DataFrame:
    """Paired latency rows across device types, the reference being the earlier of REFERENCE_ORDER."""
    paired = latencies[latencies["reference_device"].notna()]
    rank = {d: i for i, d in enumerate(REFERENCE_ORDER)}
    keep = [
        rank.get(ref, 99) < rank.get(dev, 99)
        for dev, ref in zip(paired["device"], paired["reference_device"])
    ]
    return paired[keep]


def ratio_shares(pairs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys``: how many functions are >10x slower or faster on the device, and the median
    ratio (the study's slowdown summary; the report draws its figures from it)."""
    columns = [
        *keys,
        "n_functions",
        "pct_over_10x_slower",
        "pct_over_10x_faster",
        "pct_faster_on_device",
        "pct_faster_on_reference",
        "median_ratio",
    ]
    pairs = pairs[pairs["ratio"].notna()]
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    grouped = pairs.groupby(keys)["ratio"]
    table = pd.DataFrame(
        {
            "n_functions": grouped.size(),
            "pct_over_10x_slower": grouped.apply(lambda r: 100.0 * (r > SLOWDOWN_FACTOR).mean()).round(1),
            "pct_over_10x_faster": grouped.apply(lambda r: 100.0 * (r < 1 / SLOWDOWN_FACTOR).mean()).round(1),
            "pct_faster_on_device": grouped.apply(lambda r: 100.0 * (r < 1).mean()).round(1),
            "pct_faster_on_reference": grouped.apply(lambda r: 100.0 * (r > 1).mean()).round(1),
            "median_ratio": grouped.median(),
        }
    ).reset_index()
    return table[columns]


# A latency pair's setting: the measured device and the one it is compared with.
PAIR_KEYS = [
    "source",
    "framework",
    "framework_version",
    "mode",
    "device",
    "device_model",
    "reference_device",
    "reference_device_model",
]


def summary_tables(
    outcomes: pd.DataFrame, latencies: pd.DataFrame, samples: pd.DataFrame | None = None
) -> dict[str, pd.DataFrame]:
    """The study's headline tables from any outcomes/latencies:
    - outcome_shares (Table 1): functions per outcome per framework and device (shares among
      functions with a known outcome; unknown and unavailable counted apart);
    - top20_vs_all (Table 4): the same for the top-20 bucket of `samples` vs all, per sample (only
      with samples);
    - hardware_generations (Table 3): outcome shares and latency ratios between models of one
      device type (A100 vs T4, TPU v2-8 vs TPU v3-8, any other such pair);
    - latency_by_function: per function and device pair (reference per REFERENCE_ORDER: TPU / GPU),
      latency, reference latency and ratio, slowest first;
    - slowdown_shares: per framework and device pair, share of functions more than 10x slower on
      the device, more than 10x faster, faster on each device, and the median ratio.
    """
    outcomes, latencies = plain_frame(outcomes), plain_frame(latencies)
    device_keys = ["source", "framework", "framework_version", "device", "device_model", "mode"]
    tables: dict[str, pd.DataFrame] = {"outcome_shares": _shares(outcomes, device_keys)}

    if samples is not None and len(samples):
        tables["top20_vs_all"] = _top20_vs_all(outcomes, plain_frame(samples), device_keys)

    pair_keys = PAIR_KEYS
    paired = latencies[latencies["reference_device"].notna()] if len(latencies) else latencies
    same_type = paired[paired["device"] == paired["reference_device"]] if len(paired) else paired
    generations = ratio_shares(same_type, pair_keys) if len(same_type) else pd.DataFrame()
    models = set(same_type["device_model"]) if len(same_type) else set()
    tables["hardware_generations"] = generations
    tables["hardware_generation_outcomes"] = _shares(
        outcomes[outcomes["device_model"].isin(models)] if len(outcomes) else outcomes, device_keys
    )

    oriented = _oriented_pairs(latencies) if len(latencies) else latencies
    by_function = (
        oriented[
            [
                *pair_keys[:3],
                "function",
                *pair_keys[3:],
                "n_subtests",
                "latency_ms",
                "reference_latency_ms",
                "ratio",
            ]
        ]
        if len(oriented)
        else pd.DataFrame()
    )
    if len(by_function):
        order = ["framework", "device_model", "reference_device_model", "ratio"]
        by_function = by_function.sort_values(order, ascending=[True, True, True, False])
        by_function = by_function.reset_index(drop=True)
    tables["latency_by_function"] = by_function
    tables["slowdown_shares"] = ratio_shares(oriented, pair_keys) if len(oriented) else pd.DataFrame()
    return tables


def outcomes_per_sample(
    outcomes: pd.DataFrame, samples: pd.DataFrame
) -> Iterator[tuple[str, pd.DataFrame, pd.DataFrame]]:
    """(sample id, the functions it drew, the outcomes that count for it), per sample. The study's
    own outcomes count for its own sample only (it never ran a later one, and a later sample's
    function it happened to test is not that sample's draw); ours count for every sample. Samples
    without a sample_id column are the study's."""
    if "sample_id" not in samples.columns:
        samples = samples.assign(sample_id=STUDY)
    for sample_id, drawn in samples.groupby("sample_id", sort=True):
        yield str(sample_id), drawn, outcomes if sample_id == STUDY else outcomes[outcomes["source"] != STUDY]


def _top20_vs_all(outcomes: pd.DataFrame, samples: pd.DataFrame, device_keys: list[str]) -> pd.DataFrame:
    """Table 4 per sample: each sample's top-20 bucket against all of its functions. The study's
    own outcomes count for its own sample only (it never ran a later one, and a later sample's
    function it happened to test is not that sample's draw); ours count for every sample, so one
    setting reads as then (the study's sample) and now (today's) side by side."""
    parts = []
    for sample_id, drawn, measured in outcomes_per_sample(outcomes, samples):
        top20 = set(
            zip(
                drawn.loc[drawn["bucket"] == "top20", "framework"],
                drawn.loc[drawn["bucket"] == "top20", "function"],
            )
        )
        sampled = set(zip(drawn["framework"], drawn["function"]))
        in_sample = measured[[pair in sampled for pair in zip(measured["framework"], measured["function"])]]
        is_top = [pair in top20 for pair in zip(in_sample["framework"], in_sample["function"])]
        parts.append(in_sample[is_top].assign(sample_id=sample_id, subset="top20"))
        parts.append(in_sample.assign(sample_id=sample_id, subset="all"))
    both = pd.concat(parts, ignore_index=True)
    return _shares(both, [*device_keys, "sample_id", "subset"])


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|")


def to_markdown(tables: Mapping[str, pd.DataFrame], max_rows: int | None = None) -> str:
    """Every table as a Markdown section (## name, then a pipe table); empty tables say so."""
    parts = []
    for name, frame in tables.items():
        parts.append(f"## {name}\n")
        if frame is None or frame.empty:
            parts.append("(no rows)\n")
            continue
        shown = frame if max_rows is None else frame.head(max_rows)
        header = "| " + " | ".join(str(c) for c in shown.columns) + " |"
        rule = "|" + "|".join("---" for _ in shown.columns) + "|"
        body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in shown.itertuples(index=False)]
        parts.append("\n".join([header, rule, *body]) + "\n")
        if max_rows is not None and len(frame) > max_rows:
            parts.append(f"({len(frame) - max_rows} more rows)\n")
    return "\n".join(parts)
