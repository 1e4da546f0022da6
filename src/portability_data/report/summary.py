"""The report's first screen: the summary_* tables (functions failing, slowdown across devices, then
vs now, compiled really compiled) and the headlines that show them as a grid of a row per framework
and a column per setting, each linking to the section that details it (titles defined here)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from portability_data.readings.quiet import NONE_QUIET, QUIET
from portability_data.report.inputs import (
    DEVICE_ORDER,
    FAILING,
    FRAMEWORK_ORDER,
    KNOWN,
    SETTING_KEYS,
    STUDY,
    in_reading_order,
    is_primary,
    mode_rank,
    model_label,
)
from portability_data.report.render import Headline
from portability_data.report.summaries import PAIR_KEYS

SUMMARY_TITLE = "Summary"
SUMMARY_MAX_LINES = 36  # with the title and intro above it, the summary fits a 40-line screen
# Section titles the summary links to (their anchors are computed from the titles when rendering).
RUNS_TITLE = "How our runs ran"
OUTCOMES_TITLE = "Function outcomes per framework and device (the study's Table 1)"
LATENCY_TITLE = "Latency across devices"
THEN_NOW_TITLE = "Then and now: the study (2023) vs newer runs"


def ratio_text(ratio: float) -> str:
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
    return (source != STUDY, source, dev, device, str(model), mode_rank(mode))


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
        source != STUDY or is_primary(primary, source, device, model)
        for source, device, model in known[["source", "device", "device_model"]].itertuples(index=False)
    ]
    grouped = known[shown].groupby(SETTING_KEYS)["outcome"]
    table = pd.DataFrame(
        {"n_known": grouped.size(), "n_failing": grouped.apply(lambda s: int(s.isin(FAILING).sum()))}
    ).reset_index()
    table["pct_failing"] = (100.0 * table["n_failing"] / table["n_known"]).round(1)
    return in_reading_order(table)[columns]


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


def then_now_headline(
    changes: pd.DataFrame, moves: pd.DataFrame, basis: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per newer setting: the change counts against the study (same device type) beside the median
    latency ratio now / then (from the two then-and-now summary tables) and, from the latency basis
    (report.build.quiet_repeats), the quiet repeats the newer latency rests on."""
    columns = [
        "framework",
        "now_setting",
        "now_device",
        "then_setting",
        "n_compared",
        "fixed",
        "broke",
        "still_failing",
        "still_works",
        "falls_back_now",
        "removed",
        "latency_n_functions",
        "median_ratio_now_vs_then",
        "n_quiet_repeats",
        "latencies_from",
    ]
    if changes.empty:
        return pd.DataFrame(columns=columns)
    table = changes.assign(
        n_compared=changes[["fixed", "broke", "still_failing", "still_works", "falls_back_now"]]
        .sum(axis=1)
        .astype(int)
    )
    if len(moves):
        # on the setting and the study machine both: a latency read against another machine than
        # the outcomes' is not this comparison's (it stays empty instead)
        latency = moves[
            ["now_key", "now_version", "then_setting", "n_functions", "median_ratio_now_vs_then"]
        ].rename(columns={"n_functions": "latency_n_functions"})
        table = table.merge(latency, on=["now_key", "now_version", "then_setting"], how="left")
    else:
        table = table.assign(latency_n_functions=np.nan, median_ratio_now_vs_then=np.nan)
    if basis is not None and len(basis):
        quiet = basis[["now_key", "now_version", "n_quiet_repeats", "latencies_from"]]
        table = table.merge(
            quiet.drop_duplicates(["now_key", "now_version"]), on=["now_key", "now_version"], how="left"
        )
    else:
        table = table.assign(n_quiet_repeats=np.nan, latencies_from=None)
    return table[columns].reset_index(drop=True)


def compiled_summary(executions: pd.DataFrame, outcomes: pd.DataFrame) -> pd.DataFrame:
    """Per compiled-mode setting of the newer sources: subtests by how they executed (pooled, not
    superseded runs; from the execution table); a setting whose runs recorded no execution gets a row
    with n_subtests 0, so the summary says so instead of leaving it out, and `curated_ran` says
    whether any curated subtest of it ran at all (false: a census-only setting, whose outcomes are
    only the functions its framework version lacks)."""
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
                "curated_ran": True,
            }
        )
    ran = (
        {tuple(r) for r in outcomes[outcomes["n_subtests"] > 0][SETTING_KEYS].itertuples(index=False)}
        if len(outcomes)
        else set()
    )
    for setting in settings:
        rows.append(
            {
                **dict(zip(SETTING_KEYS, setting)),
                **dict.fromkeys(counts, 0),
                "pct_compiled": None,
                "curated_ran": setting in ran,
            }
        )
    return in_reading_order(pd.DataFrame(rows, columns=[*columns, "curated_ran"]))


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


THEN_NOW_COLUMNS = [
    "framework", "then (study)", "now", "fixed", "broke", "still failing", "still work", "latency now/then",
]  # fmt: skip


def other_mode(then_setting: str, now_setting: str) -> str | None:
    """The study's mode where a then/now row compares our setting with the study's in another mode
    (the study timed eager only: a compiled setting's latency is not read against it); else None."""
    then, now = _label_parts(then_setting), _label_parts(now_setting)
    return then[3] if then and now and then[3] != now[3] else None


def quiet_repeats_text(n: float) -> str:
    """'1 quiet repeat', '2 quiet repeats': the count a latency rests on, said once for the summary
    and the opening."""
    return f"{int(n)} quiet repeat{'' if int(n) == 1 else 's'}"


def _latency_text(r: Any) -> str:
    """A then/now row's latency cell: the median ratio with its n and quiet repeats, or why none."""
    if mode := other_mode(r.then_setting, r.now_setting):
        return f"none (the study timed {mode} mode only)"
    if r.latencies_from == NONE_QUIET:
        return "none (no quiet run)"
    if r.median_ratio_now_vs_then == r.median_ratio_now_vs_then:
        repeats = f", {quiet_repeats_text(r.n_quiet_repeats)}" if r.latencies_from == QUIET else ""
        return f"{ratio_text(r.median_ratio_now_vs_then)} (n={int(r.latency_n_functions)}{repeats})"
    if r.latencies_from == QUIET:
        return "none (no function of the study's timed in a quiet run)"
    return "—"


def then_now_rows(changes: pd.DataFrame) -> pd.DataFrame:
    """The then-vs-now headline as a short table, a row per comparison (a grid of one cell per
    setting made cells of 150 characters): the study's version and machine, ours, the outcome
    changes (— where the study has no outcome on that device) and the latency cell."""
    rows, order = [], []
    for r in changes.itertuples(index=False):
        source, version, model, mode = _label_parts(r.now_setting) or (r.now_setting, "", "", "")
        then = _label_parts(r.then_setting)
        counts = (
            [str(r.fixed), str(r.broke), str(r.still_failing), str(r.still_works)]
            if r.n_compared
            else ["—"] * 4
        )
        if r.removed:
            counts[-1] += f" ({r.removed} removed)"
        rows.append(
            [
                r.framework,
                f"{then[1]} · {then[2]} · {then[3]}" if then else "no study run on this device type",
                f"{source} · {version} · {model} · {mode}",
                *counts,
                _latency_text(r),
            ]
        )
        framework_rank = FRAMEWORK_ORDER.index(r.framework) if r.framework in FRAMEWORK_ORDER else 99
        order.append((framework_rank, source != STUDY, source, model, mode_rank(mode)))
    ranked = [row for _, row in sorted(zip(order, rows), key=lambda pair: pair[0])]
    return pd.DataFrame(ranked, columns=THEN_NOW_COLUMNS)


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
            f"{ratio_text(r.median_ratio)} · {ratio_text(r.worst_ratio)} (n={r.n_functions})"
        )
    slowdown_grid = _grid(cells, sorted(order, key=order.get), _frameworks_in(slowdown))
    paired = set(slowdown["source"]) if len(slowdown) else set()
    unpaired_note = "".join(
        f" {source} has no device pair yet (measured: {', '.join(_devices_of(group))})."
        for source, group in (failing.groupby("source") if len(failing) else [])
        if source not in paired
    )

    then_now_grid = then_now_rows(changes)

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
        elif r.curated_ran:
            text = "not recorded (runs older than the execution column)"
        else:
            text = "no curated run (census only)"
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
            "function's outcome, and the median latency ratio now / then against that same machine "
            "(below 1× = faster now), with the quiet repeats ours rests on (runs that shared the cores "
            "count for outcomes, never for latencies).",
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
