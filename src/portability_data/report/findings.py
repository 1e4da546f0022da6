"""The report's opening (issue 49): the headline findings in a few plain sentences, each a number
with its setting and a link to the table it is read from, the study's question first (how much is
lost moving off the reference device, then and now), then the census. A reader gets the answer
before the tables; every number here is one of those tables' cells."""

from __future__ import annotations

from typing import Any

import pandas as pd

from portability_data.readings.quiet import NONE_QUIET, QUIET
from portability_data.report.inputs import STUDY, model_label
from portability_data.report.render import heading_anchor
from portability_data.report.summary import other_mode, quiet_repeats_text, ratio_text

FRAMEWORK_NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX"}
# The tables the sentences link to (their headings' anchors: report.build and report.census).
OUTCOME_TABLE = "Outcome shares"
SLOWDOWN_TABLE = "Faster on which device, primary models"
CHANGES_TABLE = "Changes per setting"
BASIS_TABLE = "Quiet repeats per setting"
CENSUS_TABLE = "Per setting: entries, functions, pairs by status, findings"
MOVES_TABLE = "Moving off the CPU: each pair measured on the CPU and on another device, by what it did"


def _link(text: str, title: str) -> str:
    return f"[{text}](#{heading_anchor(title)})"


def _name(framework: str) -> str:
    return FRAMEWORK_NAMES.get(framework, framework)


def _failing(
    table: pd.DataFrame,
    source: str,
    framework: str,
    device: str,
    mode: str,
    version: str | None = None,
    model: str | None = None,
) -> dict | None:
    """The summary_failing row of one setting (the first model: the study's rows are its primary
    models only), or None; with `version`, that framework version's row first where there is one,
    and with `model`, that machine's row first (a path's own host CPU, where it has a CPU run)."""
    if table.empty:
        return None
    rows = table[
        (table["source"] == source)
        & (table["framework"] == framework)
        & (table["device"] == device)
        & (table["mode"] == mode)
        & (table["n_known"] > 0)
    ]
    if version is not None and len(rows):
        same = rows[rows["framework_version"].map(_release) == _release(version)]
        rows = same if len(same) else rows
    if model is not None and len(rows):
        mine = rows[rows["device_model"] == model]
        rows = mine if len(mine) else rows
    return rows.iloc[0].to_dict() if len(rows) else None


def _release(version: str) -> str:
    """A framework version without its local build tag (2.11.0+cu130 -> 2.11.0): one release."""
    return str(version).split("+", 1)[0]


def _then(tables: dict[str, pd.DataFrame]) -> str | None:
    """The study's answer: the failing share on its reference GPU and on its TPU, and the median
    slowdown of the functions timed on both."""
    failing, slowdown = tables["summary_failing"], tables["summary_slowdown"]
    parts = []
    for framework in FRAMEWORK_NAMES:
        gpu, tpu = (_failing(failing, STUDY, framework, d, "eager") for d in ("gpu", "tpu"))
        if gpu is None or tpu is None:
            continue
        text = (
            f"{_name(framework)} {tpu['framework_version']}: {gpu['pct_failing']:.1f}% of functions "
            f"failing on the {model_label('gpu', gpu['device_model'])} → {tpu['pct_failing']:.1f}% on the "
            f"{tpu['device_model']}"
        )
        pair = (
            slowdown[
                (slowdown["source"] == STUDY)
                & (slowdown["framework"] == framework)
                & (slowdown["device"] == "tpu")
                & (slowdown["reference_device"] == "gpu")
            ]
            if len(slowdown)
            else slowdown
        )
        if len(pair):
            row = pair.iloc[0]
            text += f", median {ratio_text(row['median_ratio'])} slower there (n={int(row['n_functions'])})"
        parts.append(text)
    if not parts:
        return None
    return (
        "**Then (2023, the study):** moving off the reference GPU to a TPU, "
        + "; ".join(parts)
        + f" ({_link('outcomes', OUTCOME_TABLE)}, {_link('latency', SLOWDOWN_TABLE)})."
    )


def _host_cpu(row: dict) -> str | None:
    """The host CPU of a path that runs on it: an export or edge path's model is the host CPU's,
    then its runtime in parentheses ("Intel(R) Xeon(R) ... (iree llvm-cpu, local-task)"); None for
    an accelerator, or xla (its model names XLA's backend, not the machine)."""
    if row["device"] == "xla" or " (" not in str(row["device_model"]):
        return None
    return str(row["device_model"]).split(" (", 1)[0]


def _now(tables: dict[str, pd.DataFrame]) -> str | None:
    """Our answer: per framework and mode, the failing share on each device beside our CPU's."""
    failing = tables["summary_failing"]
    ours = failing[(failing["source"] != STUDY) & (failing["device"] != "cpu")] if len(failing) else failing
    parts = []
    for row in ours.to_dict("records"):
        host = _host_cpu(row)  # a path's comparison is with the CPU run of its own machine, where one is
        cpu = _failing(
            failing, row["source"], row["framework"], "cpu", row["mode"], row["framework_version"], host
        )
        if cpu is None:
            continue
        # a device run on another release than the CPU's (a lent machine's image, torch_xla's pin):
        # the gap is the versions' as well as the devices'
        other = _release(cpu["framework_version"]) != _release(row["framework_version"])
        # a path run on a host CPU whose CPU run is another machine's (a session's host changes)
        elsewhere = host not in (None, cpu["device_model"])  # a CPU run's model is its CPU
        device = model_label(row["device"], row["device_model"])
        if row["device"] == "xla":
            device = "xla (torch_xla on XLA's CPU backend, not a TPU)"
        parts.append(
            f"{_name(row['framework'])} {row['mode']} ({row['source']}): {row['pct_failing']:.1f}% of "
            f"{row['n_known']} functions failing on {device}, {row['framework_version']}, against "
            f"{cpu['pct_failing']:.1f}% of {cpu['n_known']} on the CPU, {cpu['framework_version']}"
            + (" (another version: not the device's difference alone)" if other else "")
            + (
                f" (the CPU's run is of another machine, {cpu['device_model']}: "
                "not the path's difference alone)"
                if elsewhere
                else ""
            )
        )
    if not parts:
        return None
    return (
        "**Now (newer runs):** moving off the CPU, "
        + "; ".join(parts)
        + f" ({_link('outcomes', OUTCOME_TABLE)})."
    )


def _then_vs_now(tables: dict[str, pd.DataFrame]) -> str | None:
    """Against the study's own accelerator run: what was fixed and broke, and what the latency rests on."""
    headline = tables["summary_then_now"]
    rows = (
        headline[(headline["now_device"] != "cpu") & (headline["n_compared"] > 0)]
        if len(headline)
        else headline
    )
    parts = []
    for row in rows.to_dict("records"):
        then = str(row["then_setting"]).split(" · ")
        machine = then[2] if len(then) > 3 else row["then_setting"]
        text = (
            f"{_name(row['framework'])} {str(row['now_setting']).split(' · ')[-1]} against the study's "
            f"{machine}: {row['fixed']} fixed, {row['broke']} broke of {row['n_compared']} compared"
        )
        if mode := other_mode(str(row["then_setting"]), str(row["now_setting"])):
            text += f", and no latency: the study timed {mode} mode only"
        elif row.get("latencies_from") == NONE_QUIET:
            text += ", and no latency: no quiet run of ours"
        elif row.get("median_ratio_now_vs_then") == row.get("median_ratio_now_vs_then"):
            timed_quiet = row.get("latencies_from") == QUIET
            quiet = f", {quiet_repeats_text(row['n_quiet_repeats'])}" if timed_quiet else ""
            ratio = ratio_text(row["median_ratio_now_vs_then"])
            text += f", latency now/then {ratio} (n={int(row['latency_n_functions'])}{quiet})"
        parts.append(text)
    if not parts:
        return None
    return (
        "**Then vs now:** "
        + "; ".join(parts)
        + f" ({_link('changes', CHANGES_TABLE)}, {_link('quiet repeats', BASIS_TABLE)})."
    )


def _census(census: dict[str, Any] | None) -> str | None:
    """The census: how many functions it ran and what leaves them moving off the CPU."""
    if not census:
        return None
    text = (
        f"**The census** ran {census['functions']:,} functions in {census['pairs']:,} function × dtype "
        f"pairs from the frameworks' own test databases ({_link('per setting', CENSUS_TABLE)})"
    )
    moves = [m for m in census.get("moves", []) if m.get("functions_both")]
    if moves:
        text += "; moving off the CPU, " + "; ".join(
            f"{_name(m['framework'])} {m['mode']} on {m['device']}: {m['functions_lost']} of "
            f"{m['functions_both']} functions lose at least one dtype that runs on the CPU"
            + (
                f", and {m['functions_unconfirmed']} have a dtype that failed there once, not yet "
                "confirmed alone (counted neither way)"
                if m.get("functions_unconfirmed")
                else ""
            )
            for m in moves
        )
        text += f" ({_link('moves', MOVES_TABLE)})"
    return text + "."


def findings(tables: dict[str, pd.DataFrame], census: dict[str, Any] | None) -> list[str]:
    """The opening sentences, in the study's order of questions; those without data left out."""
    return [s for s in (_then(tables), _now(tables), _then_vs_now(tables), _census(census)) if s]
