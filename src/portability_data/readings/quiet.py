"""Latencies from quiet runs only (issue 49), and how many independent quiet repeats they rest on.

A run whose own measurement says other work shared the cores (runs.host_other_cpu_max above
params.yaml aggregate.quiet_load_max - 1 cores, or, without it, runs.host_load_max above
quiet_load_max: `subtests.contention`) is pooled for outcomes (a failure is a failure
however busy the machine was) but never for latencies, whose every timing it would inflate. A run
that recorded neither measure (the study's, our oldest) is *unmeasured*: its timings stay, and it
is not counted as quiet. Runs whose [started_at, finished_at] overlap ran side by side: pooled they
are one repeat, not several independent ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings.frames import column_values, plain_frame
from portability_data.readings.subtests import SETTING

DEFAULT_QUIET_LOAD_MAX = 1.5  # params.yaml aggregate.quiet_load_max where absent
BASIS_COLUMNS = [
    *SETTING,
    "n_pooled_runs",
    "n_contended_runs",
    "n_unmeasured_runs",
    "n_quiet_runs",
    "n_quiet_repeats",
    "latencies_from",
]
# latencies_from: what a setting's latencies rest on
QUIET, UNMEASURED, NONE_QUIET = "quiet runs", "unmeasured runs", "none: no quiet run"


def _facts(runs: pd.DataFrame | None) -> dict[str, dict[str, Any]]:
    """run_id -> the facts quietness and overlap are read from."""
    if runs is None or not len(runs):
        return {}
    out = {}
    for record in plain_frame(runs).to_dict("records"):
        out[record["run_id"]] = {
            "load": host_load(record.get("host_load_max")),
            "other": host_load(record.get("host_other_cpu_max")),
            "started": _instant(record.get("started_at")),
            "finished": _instant(record.get("finished_at")),
        }
    return out


def _instant(value: Any) -> pd.Timestamp | None:
    if value is None:
        return None
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError):
        return None
    return None if pd.isna(stamp) else stamp


def run_quietness(fact: dict[str, Any], quiet_load_max: float | None) -> str:
    """'quiet', 'contended' or 'unmeasured' by the run's own measure (None threshold: all unmeasured)."""
    if quiet_load_max is None:
        return "unmeasured"
    over = contention(fact, quiet_load_max)
    if over is None:
        return "unmeasured"
    return "quiet" if over[0] <= 0 else "contended"


def contended_run_ids(runs: pd.DataFrame | None, quiet_load_max: float | None) -> frozenset[str]:
    """The runs whose timings latencies leave out: their own measure says they were contended."""
    return frozenset(
        run_id for run_id, fact in _facts(runs).items() if run_quietness(fact, quiet_load_max) == "contended"
    )


def independent_repeats(intervals: list[tuple[pd.Timestamp | None, pd.Timestamp | None]]) -> int:
    """How many independent repeats some runs are: runs whose time spans overlap (directly or through
    a chain) count once; a run without both times counts as one on its own."""
    timed = sorted((s, f) for s, f in intervals if s is not None and f is not None)
    untimed = len(intervals) - len(timed)
    clusters, end = 0, None
    for start, finish in timed:
        if end is None or start >= end:
            clusters += 1
            end = finish
        else:
            end = max(end, finish)
    return clusters + untimed


def latency_basis(
    pooled: pd.DataFrame, runs: pd.DataFrame | None, quiet_load_max: float | None
) -> pd.DataFrame:
    """Per setting of the pooled results rows: its pooled runs by quietness, the independent quiet
    repeats (overlapping quiet runs counted once) and what its latencies rest on ("none: no quiet
    run" where every measured run was contended and no unmeasured run stands)."""
    if pooled is None or not len(pooled):
        return pd.DataFrame(columns=BASIS_COLUMNS)
    facts = _facts(runs)
    by_setting: dict[tuple[Any, ...], set[str]] = {}
    settings = zip(*(column_values(pooled[c]) for c in SETTING))
    for setting, run_id in zip(settings, column_values(pooled["run_id"])):
        by_setting.setdefault(tuple(setting), set()).add(run_id)
    rows = []
    for setting, run_ids in by_setting.items():
        kinds = {r: run_quietness(facts.get(r, {}), quiet_load_max) for r in run_ids}
        quiet = [r for r, kind in kinds.items() if kind == "quiet"]
        unmeasured = sum(kind == "unmeasured" for kind in kinds.values())
        repeats = independent_repeats([(facts[r]["started"], facts[r]["finished"]) for r in quiet])
        rows.append(
            {
                **dict(zip(SETTING, setting)),
                "n_pooled_runs": len(run_ids),
                "n_contended_runs": sum(kind == "contended" for kind in kinds.values()),
                "n_unmeasured_runs": unmeasured,
                "n_quiet_runs": len(quiet),
                "n_quiet_repeats": repeats,
                "latencies_from": QUIET if quiet else UNMEASURED if unmeasured else NONE_QUIET,
            }
        )
    return pd.DataFrame(rows, columns=BASIS_COLUMNS)


def quiet_load_max(params_path: Path = Path("params.yaml")) -> float | None:
    """params.yaml aggregate.quiet_load_max: the host load average (per machine) at or below which
    a run counts as quiet. DEFAULT_QUIET_LOAD_MAX where the file, section or key is absent (a bare
    machine, older params); null turns the rule off; anything else is a ParamsError."""
    import yaml

    from portability_data.readings.params import ParamsError

    try:
        params = yaml.safe_load(Path(params_path).read_text(encoding="utf-8"))
    except OSError:
        return DEFAULT_QUIET_LOAD_MAX
    except yaml.YAMLError as exc:
        raise ParamsError(str(params_path), [f"not valid YAML: {exc}"]) from None
    section = params.get("aggregate") if isinstance(params, dict) else None
    if not isinstance(section, dict) or "quiet_load_max" not in section:
        return DEFAULT_QUIET_LOAD_MAX
    value = section["quiet_load_max"]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ParamsError(
            str(params_path),
            [f"aggregate.quiet_load_max: must be a load average >= 0 (or null: off), got {value!r}"],
        )
    return float(value)


def contention(fact: Mapping[str, Any], quiet_load_max: float) -> tuple[float, str] | None:
    """(how far over its quiet limit a run was, <= 0 when quiet; what was over what) by its best
    measure: other work in cores where recorded (limit quiet_load_max - 1: the load average's
    allowance beside the run's own worker), else the host load average; None without either."""
    if fact.get("other") is not None:
        limit = quiet_load_max - 1
        return fact["other"] - limit, f"other work {fact['other']:.2f} cores > {limit:g}"
    if fact.get("load") is not None:
        return fact["load"] - quiet_load_max, f"host load {fact['load']:.2f} > {quiet_load_max:g}"
    return None


def host_load(value: Any) -> float | None:
    """A runs.host_load_max value as a float; None where not recorded (runs before v3)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        load = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(load) else load


def json_object(text: Any) -> dict[str, Any]:
    """A JSON object column value as a dict ({} for null or malformed)."""
    import json

    if not isinstance(text, str):
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
