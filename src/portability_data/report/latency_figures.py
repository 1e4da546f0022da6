"""The report's latency figures as PNG bytes: per-function latency scatters (device pairs, then vs
now, eager vs compiled), latency densities per device, and where each function is faster."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from portability_data.report.figures import PALETTE, log_axes, png_bytes, pyplot
from portability_data.report.inputs import (
    DEVICE_ORDER,
    FRAMEWORK_ORDER,
    is_primary,
    model_label,
    reading_order_key,
    setting_order,
    slug,
    with_setting,
)
from portability_data.report.latency import pair_label, primary_pairs
from portability_data.report.summaries import PAIR_KEYS

SLOWDOWN_FACTOR = 10.0


def fig_latency_scatter(pairs: pd.DataFrame, title: str) -> bytes | None:
    """Per-function latency on one device (y) against another (x), log-log, one panel per framework and
    device pair (a row per pair of models, so old-vs-new rows line up)."""
    pairs = pairs[pairs["ratio"].notna()] if len(pairs) else pairs
    if pairs.empty:
        return None
    plt = pyplot()
    keys = PAIR_KEYS
    groups = sorted(
        pairs.groupby(keys),
        key=lambda kv: (
            DEVICE_ORDER.index(kv[0][4]) if kv[0][4] in DEVICE_ORDER else 9,
            kv[0][5],
            kv[0][7],
            reading_order_key(kv[0][1], kv[0][4], kv[0][0], kv[0][5]),
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
        log_axes(ax)
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
    return png_bytes(fig)


def fig_latency_density(latencies: pd.DataFrame, primary: dict[tuple[str, str], str]) -> bytes | None:
    """Density of per-function latency (log scale, Gaussian kernel of 0.2 decade) per device setting,
    one panel per framework; primary models only (the others are in the generations figure)."""
    unpaired = latencies[latencies["reference_device"].isna()] if len(latencies) else latencies
    unpaired = unpaired[unpaired["latency_ms"] > 0] if len(unpaired) else unpaired
    if len(unpaired):
        unpaired = unpaired[
            [
                is_primary(primary, s, d, m)
                for s, d, m in unpaired[["source", "device", "device_model"]].itertuples(index=False)
            ]
        ]
    if unpaired.empty:
        return None
    plt = pyplot()
    frame = with_setting(unpaired)
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
        for i, setting in enumerate(reversed(setting_order(part))):
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
        log_axes(ax, "x")
        ax.set_ylim(bottom=0)
        ax.set_ylabel("density (per decade)")
        ax.set_title(framework)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1))
    axes[-1, 0].set_xlabel("per-function latency, ms (log scale)")
    fig.suptitle("Latency distribution per device (every timed function; primary model of each device type)")
    return png_bytes(fig)


def fig_faster_shares(shares: pd.DataFrame) -> bytes | None:
    """Per device pair: % of functions faster on each device, and % more than 10x slower."""
    if shares.empty:
        return None
    plt = pyplot()
    order = sorted(
        range(len(shares)),
        key=lambda i: (
            *reading_order_key(
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
    return png_bytes(fig)


def fig_setting_scatter(
    frame: pd.DataFrame, x: str, y: str, x_setting: str, y_setting: str, title: str, faster_word: str
) -> bytes | None:
    """Per-function latency in one setting (y) against another (x), log-log, one panel per pair of
    settings: then vs now, eager vs compiled (the function-level latencies; the subtests may differ)."""
    frame = frame[(frame[x] > 0) & (frame[y] > 0)] if len(frame) else frame
    if frame.empty:
        return None
    plt = pyplot()
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
        log_axes(ax)
        ax.set_aspect("equal")
        ax.set_xlabel(f"{_short(x_label)}, ms", fontsize=8)
        ax.set_ylabel(f"{_short(y_label)}, ms", fontsize=8)
        faster = float((ys < xs).mean() * 100)
        ax.set_title(f"y: {y_label}\nx: {x_label}\nn={len(group)}, {faster:.0f}% {faster_word}", fontsize=7.5)
        ax.legend(fontsize=6.5, frameon=False, loc="upper left")
    fig.suptitle(title)
    return png_bytes(fig)


def _short(label: str) -> str:
    """A setting label without its source, for axis labels that must fit."""
    parts = [p.strip() for p in label.split("·")]
    return " · ".join(parts[1:]) if len(parts) > 1 else label


GENERATIONS_FIGURE = "generations_latency.png"


def pair_scatters(latencies: pd.DataFrame, primary: dict[tuple[str, str], str]) -> list[tuple[str, Any]]:
    """The report's per-function latency scatters of device pairs, in report order, as (file name,
    a maker of its PNG bytes or None): one per cross-device pair of primary models, then the
    hardware generations. Their names are known without drawing, so build() can lay out the
    latency section while the second process draws them (report/data_sections.py)."""
    cross = primary_pairs(latencies, primary, same_type=False)
    generations = primary_pairs(latencies, primary, same_type=True)
    makers: list[tuple[str, Any]] = [
        (
            GENERATIONS_FIGURE,
            lambda: fig_latency_scatter(
                generations, "Old vs new hardware of one type: per-function latency (same subtests)"
            ),
        )
    ]
    if not len(cross):
        return makers
    ordered = sorted(
        cross.groupby(["device", "reference_device"]),
        key=lambda kv: (
            DEVICE_ORDER.index(kv[0][1]) if kv[0][1] in DEVICE_ORDER else 9,
            DEVICE_ORDER.index(kv[0][0]) if kv[0][0] in DEVICE_ORDER else 9,
        ),
    )
    for (dev, ref), group in ordered:
        title = f"Per-function latency, {dev.upper()} against {ref.upper()} (same subtests, primary models)"
        makers.append(
            (f"latency_{slug(dev)}_vs_{slug(ref)}.png", lambda g=group, t=title: fig_latency_scatter(g, t))
        )
    return makers
