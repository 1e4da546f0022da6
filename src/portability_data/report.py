"""The report: the study's headline tables and figures from the aggregated tables, rendered
offline (Markdown + a self-contained HTML page with inline PNG figures; no CDN, no network),
plus the headline numbers as DVC metrics and the plot data as CSV for `dvc plots diff`.
"""

from __future__ import annotations

import base64
import html
import io
import json
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.atomic import atomic_write_bytes
from portability_data.tableio import read_table

OUTCOME_ORDER = ["success", "partial_failure", "complete_failure", "unknown", "unavailable"]


def _label(frame: pd.DataFrame) -> pd.Series:
    """'source / device (model) / mode' so devices and versions are named on every table and figure."""
    return (frame["source"].astype(str) + " / " + frame["framework"].astype(str) + " "
            + frame["framework_version"].astype(str) + " / " + frame["device"].astype(str) + " ("
            + frame["device_model"].astype(str) + ") / " + frame["mode"].astype(str))


def outcome_shares(outcomes: pd.DataFrame) -> pd.DataFrame:
    """Share of functions per outcome, per source x framework x version x device x mode (Table 1)."""
    if outcomes.empty:
        return pd.DataFrame(columns=["setting", "functions", *OUTCOME_ORDER])
    frame = outcomes.assign(setting=_label(outcomes))
    counts = frame.pivot_table(index="setting", columns="outcome", values="function", aggfunc="count", fill_value=0)
    counts = counts.reindex(columns=[c for c in OUTCOME_ORDER if c in counts.columns], fill_value=0)
    total = counts.sum(axis=1)
    shares = counts.div(total, axis=0).round(3)
    shares.insert(0, "functions", total)
    return shares.reset_index()


def latency_table(latencies: pd.DataFrame) -> pd.DataFrame:
    """Per-function latency and device ratio, ordered by ratio (paired rows only)."""
    paired = latencies[latencies["reference_device"].notna()]
    if paired.empty:
        return pd.DataFrame(columns=["source", "framework", "function", "device", "reference", "latency_ms",
                                     "reference_latency_ms", "ratio", "n_subtests"])
    out = pd.DataFrame({
        "source": paired["source"],
        "framework": paired["framework"],
        "function": paired["function"],
        "device": paired["device"].astype(str) + " (" + paired["device_model"].astype(str) + ")",
        "reference": paired["reference_device"].astype(str) + " (" + paired["reference_device_model"].astype(str) + ")",
        "latency_ms": paired["latency_ms"].round(4),
        "reference_latency_ms": paired["reference_latency_ms"].round(4),
        "ratio": paired["ratio"].round(3),
        "n_subtests": paired["n_subtests"],
    })
    return out.sort_values(["source", "framework", "ratio"], ascending=[True, True, False]).reset_index(drop=True)


def failure_categories(results: pd.DataFrame) -> pd.DataFrame:
    """Failing subtests per failure category, per source x framework x device x mode."""
    failing = results[results["failure_category"].notna()]
    if failing.empty:
        return pd.DataFrame(columns=["source", "framework", "device", "mode", "failure_category", "subtests"])
    return (failing.groupby(["source", "framework", "device", "mode", "failure_category"], observed=True)
            .size().rename("subtests").reset_index())


def headline_metrics(outcomes: pd.DataFrame, latencies: pd.DataFrame) -> dict[str, Any]:
    """Numbers `dvc metrics diff` compares: outcome shares and latency ratios per setting."""
    metrics: dict[str, Any] = {}
    for setting, group in outcomes.assign(setting=_label(outcomes)).groupby("setting"):
        counted = group[group["outcome"] != "unknown"]
        metrics[str(setting)] = {
            "functions": int(len(group)),
            "success_share": round(float((counted["outcome"] == "success").mean()), 4) if len(counted) else None,
            "failure_share": round(float(counted["outcome"].isin(["partial_failure", "complete_failure"]).mean()), 4)
            if len(counted) else None,
        }
    paired = latencies[latencies["ratio"].notna()]
    for (source, framework, device, model, ref, ref_model), group in paired.groupby(
        ["source", "framework", "device", "device_model", "reference_device", "reference_device_model"]
    ):
        key = f"{source} / {framework} / {device} ({model}) vs {ref} ({ref_model})"
        metrics[key] = {
            "functions": int(len(group)),
            "median_ratio": round(float(group["ratio"].median()), 4),
            "share_over_10x_slower": round(float((group["ratio"] > 10).mean()), 4),
            "share_faster": round(float((group["ratio"] < 1).mean()), 4),
        }
    return metrics


def _figure_png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def figures(outcomes: pd.DataFrame, latencies: pd.DataFrame) -> dict[str, bytes]:
    """The report's figures as PNG bytes (matplotlib, Agg backend: nothing leaves the machine)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: dict[str, bytes] = {}
    shares = outcome_shares(outcomes)
    if not shares.empty:
        columns = [c for c in OUTCOME_ORDER if c in shares.columns]
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(shares) + 1.5))
        left = pd.Series(0.0, index=shares.index)
        colours = {"success": "#1b9e77", "partial_failure": "#e6ab02", "complete_failure": "#d95f02",
                   "unknown": "#999999", "unavailable": "#7570b3"}
        for column in columns:
            ax.barh(shares["setting"], shares[column], left=left, label=column.replace("_", " "),
                    color=colours[column])
            left += shares[column]
        ax.set_xlabel("share of functions")
        ax.set_xlim(0, 1)
        ax.set_title("Function outcomes per framework, device and mode")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.06), ncol=len(columns), frameon=False)
        out["outcome_shares.png"] = _figure_png(fig)
        plt.close(fig)
    paired = latencies[latencies["ratio"].notna()]
    for (source, framework, device, model, ref, ref_model), group in paired.groupby(
        ["source", "framework", "device", "device_model", "reference_device", "reference_device_model"]
    ):
        if len(group) < 2:
            continue
        fig, ax = plt.subplots(figsize=(5.5, 5))
        ax.loglog(group["reference_latency_ms"], group["latency_ms"], "o", alpha=0.7)
        low = float(min(group["reference_latency_ms"].min(), group["latency_ms"].min()))
        high = float(max(group["reference_latency_ms"].max(), group["latency_ms"].max()))
        ax.plot([low, high], [low, high], "k--", linewidth=0.8, label="equal latency")
        ax.set_xlabel(f"{ref} ({ref_model}) latency, ms (log)")
        ax.set_ylabel(f"{device} ({model}) latency, ms (log)")
        ax.set_title(f"{framework}, {source}: per-function latency")
        ax.legend(frameon=False)
        name = f"latency_{source}_{framework}_{device}_{_slug(model)}_vs_{ref}_{_slug(ref_model)}.png"
        out[name] = _figure_png(fig)
        plt.close(fig)
    return out


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in str(text)).strip("-").lower()[:40]


def _markdown_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "_no rows_\n"
    columns = list(frame.columns)
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


def run_report(data_dir: Path, out_dir: Path, metrics_path: Path) -> None:
    """The `report` stage: Markdown, offline HTML, figures, plot CSVs and metrics."""
    outcomes = read_table("outcomes", data_dir / "outcomes")
    latencies = read_table("latencies", data_dir / "latencies")
    results = read_table("results", data_dir / "results")
    sections = [
        ("Function outcomes per framework, device and mode (the study's Table 1)", outcome_shares(outcomes)),
        ("Failure categories (failing subtests)", failure_categories(results)),
        ("Per-function latency and device ratio, by ratio", latency_table(latencies)),
    ]
    images = figures(outcomes, latencies)
    figure_dir = out_dir / "figures"
    figure_dir.mkdir(parents=True, exist_ok=True)
    for old in figure_dir.glob("*.png"):
        if old.name not in images:
            old.unlink()
    for name, data in images.items():
        atomic_write_bytes(figure_dir / name, data)
    markdown = ["# portability report\n", "Generated by `portability report` from data/ (see README).\n"]
    page = ["<!doctype html><html><head><meta charset='utf-8'><title>portability report</title>",
            "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse;"
            "font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}</style></head><body>",
            "<h1>portability report</h1>"]
    for title, table in sections:
        markdown += [f"\n## {title}\n", _markdown_table(table)]
        page += [f"<h2>{html.escape(title)}</h2>", table.to_html(index=False, border=0) if len(table) else
                 "<p><em>no rows</em></p>"]
    markdown.append("\n## Figures\n")
    page.append("<h2>Figures</h2>")
    for name, data in images.items():
        markdown.append(f"![{name}](figures/{name})\n")
        encoded = base64.b64encode(data).decode()
        page.append(f"<figure><img alt='{html.escape(name)}' src='data:image/png;base64,{encoded}'>"
                    f"<figcaption>{html.escape(name)}</figcaption></figure>")
    page.append("</body></html>")
    atomic_write_bytes(out_dir / "report.md", "\n".join(markdown).encode())
    atomic_write_bytes(out_dir / "report.html", "\n".join(page).encode())
    plots = out_dir / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    shares = outcome_shares(outcomes)
    long = (shares.melt(id_vars=["setting", "functions"], var_name="outcome", value_name="share")
            .rename(columns={"setting": "device"}) if len(shares) else
            pd.DataFrame(columns=["device", "functions", "outcome", "share"]))
    atomic_write_bytes(plots / "outcome_shares.csv", long.to_csv(index=False).encode())
    atomic_write_bytes(plots / "latency_ratios.csv", latency_table(latencies).to_csv(index=False).encode())
    atomic_write_bytes(metrics_path, (json.dumps(headline_metrics(outcomes, latencies), indent=2,
                                                 sort_keys=True) + "\n").encode())
