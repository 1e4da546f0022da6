"""The `report` stage's entry point: build() computes every table, figure and metric from the
input tables, _sections() lays them out, run_report() writes report.md, report.html, figures,
plot CSVs and metrics. Each table family lives in its own module (inputs, outcomes, latency,
then_now, summary, metrics, declared_support), the figures in figures.py and latency_figures.py,
the rendering in render.py; this module only wires them together.

The report covers the study's data (source mince2023) and every newer run (source portability)
together, rendered offline (Markdown + a self-contained HTML page with inline PNG figures; no CDN,
no network), plus the headline numbers as DVC metrics and the plot data as CSV for `dvc plots diff`.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings.quiet import BASIS_COLUMNS, latency_basis, quiet_load_max
from portability_data.report.data_sections import data_sections, finish_aside, start_aside
from portability_data.report.figures import (
    fig_failure_by_bucket,
    fig_failure_categories,
    fig_outcome_shares,
    fig_then_now_outcomes,
    fig_top20,
)
from portability_data.report.findings import findings
from portability_data.report.host_fallback import host_fallback_section
from portability_data.report.inputs import (
    STUDY,
    Inputs,
    canonical_samples,
    in_reading_order,
    known_rows,
    load_inputs,
    pooled_and_superseded,
    primary_models,
    slug,
    with_setting,
)
from portability_data.report.latency import (
    mode_pairs,
    mode_summary,
    pair_label,
    primary_pairs,
    rows_of_pairs,
)
from portability_data.report.latency_figures import (
    GENERATIONS_FIGURE,
    fig_faster_shares,
    fig_latency_density,
    fig_setting_scatter,
    pair_scatters,
)
from portability_data.report.metrics import headline_metrics
from portability_data.report.outcomes import (
    REACH_COLUMNS,
    bucket_matrix,
    compiler_reach,
    failure_by_bucket,
    failure_categories,
    how_runs_ran,
    sample_coverage,
    settings_overview,
)
from portability_data.report.path_fallback import path_fallback_section
from portability_data.report.render import Section, render
from portability_data.report.summaries import PAIR_KEYS, ratio_shares, summary_tables
from portability_data.report.summary import (
    LATENCY_TITLE,
    OUTCOMES_TITLE,
    RUNS_TITLE,
    SUMMARY_TITLE,
    THEN_NOW_TITLE,
    compiled_summary,
    failing_summary,
    slowdown_summary,
    summary_headlines,
    then_now_headline,
)
from portability_data.report.then_now import (
    CHANGE_ORDER,
    change_summary,
    latency_move_summary,
    removed_functions,
    then_now,
)
from portability_data.tables.atomic import atomic_write_bytes
from portability_data.tables.tableio import reads_shared

# What each source in the data is, for the report's opening line.
SOURCE_MEANING = {
    STUDY: "the study's raw data (2023)",
    "portability": "this project's runs",
    "local": "this machine's runs (`portability bench`, `portability run`), beside the others, never pooled",
}


def _labelled(labels: list[str], frame: pd.DataFrame, values: list[str]) -> pd.DataFrame:
    out = pd.DataFrame({"label": labels})
    for column in values:
        out[column] = list(frame[column]) if len(frame) else []
    return out


def _plot_csvs(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Plot data for `dvc plots`: one CSV per plot, a `label` column (the bar: setting, device pair,
    function) and numeric columns, so a horizontal-bar template diffs them across revisions."""
    shares = known_rows(tables["outcome_shares"])
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
            list(with_setting(shares)["setting"]) if len(shares) else [],
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
            [f"{label} · bucket {b}" for label, b in zip(with_setting(bucket)["setting"], bucket["bucket"])]
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


def quiet_repeats(inputs: Inputs, pooled: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per setting of our pooled runs (`pooled`: pooled_and_superseded's rows, else read here): the quiet
    repeats its latencies rest on (readings/quiet.py), with the then/now key (now_key, now_version)
    the headline joins on."""
    if inputs.results is None or inputs.results.empty:
        return pd.DataFrame(columns=[*BASIS_COLUMNS, "now_key", "now_version"])
    if pooled is None:
        pooled, _ = pooled_and_superseded(inputs.results)
    ours = pooled[pooled["source"] != STUDY]  # the study's runs recorded no load: all unmeasured
    basis = latency_basis(ours, inputs.runs, inputs.quiet_load_max)
    basis["now_key"] = [
        f"{source}/{framework}/{slug(model)}/{mode}"
        for source, framework, model, mode in basis[
            ["source", "framework", "device_model", "mode"]
        ].itertuples(index=False)
    ]
    basis["now_version"] = basis["framework_version"]
    return in_reading_order(basis)


def build(
    inputs: Inputs, *, pair_figures: bool = True
) -> tuple[list[Section], dict[str, pd.DataFrame], dict[str, bytes], dict[str, Any]]:
    """Every table, figure and metric of the report from the input tables; `pair_figures` False
    leaves out the device pairs' latency scatters (latency_figures.pair_scatters), drawn elsewhere."""
    outcomes, latencies = inputs.outcomes, inputs.latencies
    samples = canonical_samples(inputs.samples)
    primary = primary_models(outcomes, latencies)
    summary = summary_tables(outcomes, latencies, samples if len(samples) else None)
    cross = primary_pairs(latencies, primary, same_type=False)
    generations = primary_pairs(latencies, primary, same_type=True)
    by_function = summary["latency_by_function"]
    cross_functions = rows_of_pairs(by_function, cross)
    gen_shares = ratio_shares(generations, PAIR_KEYS) if len(generations) else pd.DataFrame()
    changes, moves = then_now(inputs, primary)
    modes = mode_pairs(latencies)
    tables: dict[str, pd.DataFrame] = {
        **summary,
        "settings": settings_overview(outcomes, latencies, primary),
        "sample_coverage": sample_coverage(outcomes, samples, inputs.census),
        "cross_device_shares": rows_of_pairs(summary["slowdown_shares"], cross),
        "cross_device_functions": cross_functions,
        "generation_shares": gen_shares,
        "failure_by_bucket": failure_by_bucket(outcomes, samples),
        "failure_categories": failure_categories(outcomes, inputs.results, inputs.runs),
        "then_now_changes": changes,
        "then_now_summary": change_summary(changes),
        "then_now_latency": moves,
        "then_now_latency_summary": latency_move_summary(moves),
        "removed": removed_functions(inputs),
        "modes": modes,
        "mode_summary": mode_summary(modes),
    }
    pooled = None  # split once: the execution table and the quiet repeats read the same pooled rows
    if inputs.results is not None and not inputs.results.empty:
        pooled = pooled_and_superseded(inputs.results)
    tables["executions"], tables["superseded"] = how_runs_ran(
        inputs.results, inputs.runs, inputs.cases, pooled=pooled
    )
    tables["compiler_reach"] = compiler_reach(tables["executions"])
    tables["summary_failing"] = failing_summary(outcomes, primary)
    tables["summary_slowdown"] = slowdown_summary(tables["cross_device_shares"], cross_functions)
    tables["latency_basis"] = quiet_repeats(inputs, None if pooled is None else pooled[0])
    tables["summary_then_now"] = then_now_headline(
        tables["then_now_summary"], tables["then_now_latency_summary"], tables["latency_basis"]
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
    pairs = pair_scatters(latencies, primary)
    scatter_names = [name for name, _ in pairs if name != GENERATIONS_FIGURE]
    if pair_figures:  # else the caller draws them (run_report: the second process)
        makers.extend(pairs)
    for name, make in makers:
        data = make()
        if data is not None:
            images[name] = data
    sections = _sections(tables, scatter_names)
    return sections, tables, images, headline_metrics(tables, primary)


def _sections(tables: dict[str, pd.DataFrame], scatter_names: list[str]) -> list[Section]:
    def cols(name: str, drop: tuple[str, ...] = ()) -> pd.DataFrame:
        frame = in_reading_order(tables.get(name, pd.DataFrame()))
        return frame.drop(columns=[c for c in drop if c in frame.columns]) if len(frame.columns) else frame

    hidden = ("now_key", "now_version", "now_device")
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
            "Sample coverage: sampled functions (replaced ones left out) measured by a curated case "
            "(outcome rows), by the census (support matrix rows) and by either; the rest were not run "
            "or are spelled differently.",
            [("Settings", cols("settings")), ("Sample coverage", cols("sample_coverage"))],
            [],
        ),
        Section(
            RUNS_TITLE,
            "How each of our runs executed, per setting: subtests eager or really compiled, failing rows "
            "that no failure rule classifies (pct_unclassified: at most 5% in every setting), how busy "
            "the host was (host_load_max, host_other_cpu_max: above 1.5 and 0.5 other work shared the "
            "cores) and which runs were superseded. How these are counted: "
            "[docs/METHOD.md, How our runs ran](../docs/METHOD.md#how-our-runs-ran).",
            [
                ("Execution per setting", cols("executions", tuple(REACH_COLUMNS))),
                ("Through the compiler, per compiled setting", tables.get("compiler_reach", pd.DataFrame())),
                ("Superseded runs", cols("superseded")),
            ],
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
            [("Top 20 vs all", known_rows(cols("top20_vs_all")))],
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
            "Scatter plots use each device type's primary model; the share table lists every pair. "
            "Latencies come from quiet runs only: a run whose own measure says other work shared the "
            "cores counts for outcomes, never for latencies; runs that overlapped in time are one "
            "repeat. 'Quiet repeats per setting' says what each of our settings' latencies rest on "
            "(latencies_from 'none: no quiet run': that setting has no latency).",
            [
                ("Quiet repeats per setting", cols("latency_basis", hidden)),
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
                ("Outcomes of the models compared", known_rows(cols("hardware_generation_outcomes"))),
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


def run_report(
    data_dir: Path,
    out_dir: Path,
    metrics_path: Path,
    *,
    params_path: Path = Path("params.yaml"),
    parallel: bool = True,
) -> None:
    """The `report` stage: Markdown, offline HTML, figures, plot CSVs and metrics, from data_dir's
    tables (pooled as the aggregate stage pools them: params_path's aggregate.quiet_load_max).
    Sections read their own tables; a table several of them read is read once (reads_shared).
    `parallel`: data_sections runs in a second process while this one pools the results and
    builds the rest (issue 57: about a third of the report's work, on a second core); the output
    is the same bytes either way."""
    data_dir, out_dir, metrics_path = Path(data_dir), Path(out_dir), Path(metrics_path)
    with reads_shared(), tempfile.TemporaryDirectory(prefix="report-aside-") as scratch:
        aside_file = Path(scratch) / "aside.pickle"
        side = start_aside(data_dir, aside_file) if parallel else None
        try:
            inputs = load_inputs(data_dir, quiet_load_max=quiet_load_max(params_path))
            built = build(inputs, pair_figures=False)  # data_sections draws them
        except BaseException:
            if side is not None:  # no second process outlives the report
                side.kill()
                side.wait()
            raise
        aside = finish_aside(side, aside_file) if side is not None else None
        if aside is None:  # serial, or the second process failed: here, so an error is this process's
            aside = data_sections(data_dir)
        _write_report(data_dir, out_dir, metrics_path, inputs, built, aside)


def _write_report(
    data_dir: Path,
    out_dir: Path,
    metrics_path: Path,
    inputs: Inputs,
    built: tuple[list[Section], dict[str, pd.DataFrame], dict[str, bytes], dict[str, Any]],
    aside: tuple[list[Section], dict[str, bytes], dict[str, Any]],
) -> None:
    sections, tables, images, metrics = built
    sections.extend(aside[0])
    images.update(aside[1])
    metrics.update(aside[2])
    census = aside[2].get("census")
    fallback = host_fallback_section(data_dir, tables["then_now_changes"], tables["then_now_latency"])
    if fallback is not None:
        sections.append(fallback[0])
        metrics["host_fallback"] = fallback[1]
    outside = path_fallback_section(data_dir)
    if outside is not None:
        sections.append(outside)
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
    markdown, page = render(sections, images, intro, findings(tables, census))
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
