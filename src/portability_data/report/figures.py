"""The report's figures as PNG bytes (matplotlib, Agg): the shared style (palette, outcome and
change styles), setup and encoding helpers, the one stacked-bar helper, and the figures of
outcomes, failure rates and then-vs-now changes. Latency figures are in latency_figures.py."""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import pandas as pd

from portability_data.report.inputs import (
    BUCKET_ORDER,
    FRAMEWORK_ORDER,
    KNOWN,
    known_rows,
    setting_order,
    with_setting,
)
from portability_data.report.then_now import CHANGE_ORDER

# Okabe-Ito: distinguishable under the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"]
LABEL_BOX = {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.8}
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
OUTCOME_STYLE = {  # colour, hatch: hatches keep the classes apart in grey print too
    "success": ("#009E73", ""),
    "host_fallback": ("#56B4E9", "--"),
    "partial_failure": ("#E69F00", "//"),
    "complete_failure": ("#D55E00", "xx"),
    "unknown": ("#BBBBBB", ""),
    "unavailable": ("#CC79A7", ".."),
}
CATEGORY_ORDER = ["not_implemented", "type_failure", "float_precision", "memory", "timeout", "other"]
CHANGE_STYLE = {
    "fixed": ("#009E73", "\\\\"),
    "broke": ("#D55E00", "xx"),
    "still_failing": ("#E69F00", "//"),
    "still_works": ("#56B4E9", ""),
    "falls_back_now": ("#56B4E9", "--"),
    "removed": ("#CC79A7", ".."),
    "not_measured_then": ("#BBBBBB", ""),
    "unknown_now": ("#888888", ""),
    "not_run_now": ("#DDDDDD", "--"),
    "new": ("#0072B2", "++"),
}


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (no display), with the report's style settings."""
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


def png_bytes(fig: Any) -> bytes:
    """The figure as PNG bytes; closes it. A figure with a constrained layout is laid out here once
    and drawn once: savefig would lay it out and draw it twice (a measuring pass, then the real
    one). Others keep the tight bounding box, which needs the measuring pass: their long setting
    labels widen the canvas, which a constrained layout of the same size would squeeze instead."""
    buffer = io.BytesIO()
    engine = fig.get_layout_engine()
    if type(engine).__name__ == "ConstrainedLayoutEngine":
        engine.execute(fig)
        fig.set_layout_engine("none")
        fig.savefig(buffer, format="png", dpi=100)
    else:
        fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    pyplot().close(fig)
    return buffer.getvalue()


def log_axes(ax: Any, axis: str = "both") -> None:
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
    known = known_rows(shares)
    if known.empty:
        return None
    plt = pyplot()
    frame = with_setting(known)
    order = setting_order(frame)
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
    return png_bytes(fig)


def fig_top20(top: pd.DataFrame) -> bytes | None:
    """% failing (partial + complete) among the top-20 functions vs all sampled ones, per setting."""
    known = known_rows(top)
    if known.empty:
        return None
    plt = pyplot()
    frame = with_setting(known)
    frame = frame.assign(
        pct_failing=(frame["pct_partial_failure"] + frame["pct_complete_failure"]).astype(float)
    )
    order = setting_order(frame)
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
    return png_bytes(fig)


def fig_failure_by_bucket(table: pd.DataFrame) -> bytes | None:
    """% failing per frequency bucket (top 20, then deciles), one panel per framework, a line per setting."""
    if table.empty:
        return None
    plt = pyplot()
    frame = with_setting(table)
    frameworks = [f for f in FRAMEWORK_ORDER if f in set(frame["framework"])] + sorted(
        set(frame["framework"]) - set(FRAMEWORK_ORDER)
    )
    fig, axes = plt.subplots(
        len(frameworks), 1, figsize=(10, 2.8 * len(frameworks) + 0.6), sharex=True, squeeze=False
    )
    x_of = {b: i for i, b in enumerate(BUCKET_ORDER)}
    for ax, framework in zip(axes[:, 0], frameworks):
        part = frame[frame["framework"] == framework]
        for i, setting in enumerate(reversed(setting_order(part))):
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
    return png_bytes(fig)


def fig_failure_categories(table: pd.DataFrame) -> bytes | None:
    """Failing functions per dominant failure category, stacked, per setting."""
    table = table[table["functions"] > 0] if len(table) else table
    if table.empty:
        return None
    plt = pyplot()
    frame = with_setting(table)
    order = setting_order(frame)
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
    return png_bytes(fig)


def fig_then_now_outcomes(summary: pd.DataFrame) -> bytes | None:
    """Functions per change category (study 2023 vs newer run, same device type), per newer setting."""
    if summary.empty:
        return None
    plt = pyplot()
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
    return png_bytes(fig)
