"""What was measured and how it came out, per setting: the settings and sample coverage, how our
runs executed (eager, compiled, graph breaks, ...), and failure rates by frequency bucket and by
failure category (the study's Table 1 family beyond the outcome shares the pipeline computes)."""

from __future__ import annotations

import pandas as pd

from portability_data.readings.subtests import partial_run_ids
from portability_data.report.inputs import (
    BUCKET_ORDER,
    FAILING,
    KNOWN,
    SETTING_KEYS,
    STUDY,
    canonical_function,
    in_reading_order,
    is_primary,
    pooled_and_superseded,
    setting_order,
    with_setting,
)
from portability_data.report.summaries import outcomes_per_sample
from portability_data.tables.contracts import FAILING_OUTCOMES, REREAD, is_census_case


def how_runs_ran(
    results: pd.DataFrame | None,
    runs: pd.DataFrame | None,
    cases: pd.DataFrame | None = None,
    *,
    pooled: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(execution counts, superseded runs). Per setting of the pooled (not superseded, quiet runs
    preferred: the `pooled` table's marks, as aggregate pooled) runs that record it: subtests by how
    they executed, the share of compiled-mode cases whose function under test really compiled,
    order-dependent subtests, the share of failing rows
    no rule classified and how many failing rows the current rule table read differently than the
    run did (column failure_reread: aggregate.reclassify_failures); the largest host load average
    seen while they ran (the run's own worker adds about 1: above 1.5 other work competed for the
    cores). A subtest counts under the least compiled of its rows. Compiled settings also get the
    compiler's reach over the cases table (`compiler_reach_counts`). `pooled`:
    pooled_and_superseded's answer for these results where the caller has it (split once)."""
    columns = [
        *SETTING_KEYS,
        "n_cases",
        "n_subtests",
        "eager",
        "compiled",
        "graph_breaks",
        "eager_fallback",
        "not_routed",
        "pct_cases_compiled",
        "n_order_dependent",
        "n_failing_rows",
        "pct_unclassified",
        "n_reclassified",
        "host_load_max",
        "host_other_cpu_max",
        *REACH_COLUMNS,
    ]
    if results is None or results.empty or "execution" not in results:
        return pd.DataFrame(columns=columns), pd.DataFrame()
    pooled, superseded = pooled or pooled_and_superseded(results)
    kept = pooled[pooled["execution"].notna()]
    by_setting = dict(iter(pooled.groupby(SETTING_KEYS)))
    load_of, other_of = run_host_load(runs), run_host_load(runs, "host_other_cpu_max")
    rank = ["not_routed", "eager_fallback", "graph_breaks", "compiled", "eager"]
    rows = []
    for setting, group in kept.groupby(SETTING_KEYS):
        worst = group.groupby(["case_id", "subtest"])["execution"].agg(lambda v: min(v, key=rank.index))
        counts = worst.value_counts()
        by_case = worst.groupby(level=0).agg(lambda v: all(e == "compiled" for e in v))
        failing = group[group["outcome"].isin(FAILING_OUTCOMES)]
        order_dependent = group[group["confirmation"] == "order_dependent"][["case_id", "subtest"]]
        compiled_mode = setting[-1] == "compiled"
        rows.append(
            {
                **dict(zip(SETTING_KEYS, setting)),
                "n_cases": int(worst.index.get_level_values(0).nunique()),
                "n_subtests": len(worst),
                **{e: int(counts.get(e, 0)) for e in rank[::-1]},
                "pct_cases_compiled": round(100.0 * by_case.mean(), 1)
                if compiled_mode and len(by_case)
                else None,
                "n_order_dependent": len(order_dependent.drop_duplicates()),
                "n_failing_rows": len(failing),
                "pct_unclassified": round(100.0 * (failing["failure_rule"] == "unclassified").mean(), 1)
                if len(failing)
                else 0.0,
                "n_reclassified": int(failing[REREAD].eq(True).sum()) if REREAD in failing else 0,
                "host_load_max": _most(load_of, group["run_id"]),
                "host_other_cpu_max": _most(other_of, group["run_id"]),
                **(
                    compiler_reach_counts(by_setting[setting], cases, setting[1])
                    if compiled_mode
                    else dict.fromkeys(REACH_COLUMNS)
                ),
            }
        )
    return in_reading_order(pd.DataFrame(rows, columns=columns)), superseded


# A case's function under test went through the compiler: some subtest ran compiled, with graph
# breaks or fell back after trying, or failed where the rule table reads a compiler limitation.
THROUGH_COMPILER = ("compiled", "graph_breaks", "eager_fallback")
COMPILE_FAILURE = "compile_limitation"
REACH_COLUMNS = [
    "n_active_cases",
    "n_no_compiled_form",
    "n_through_compiler",
    "pct_through_compiler",
    "n_routable_through_compiler",
    "pct_routable_through_compiler",
]


def compiler_reach_counts(
    rows: pd.DataFrame, cases: pd.DataFrame | None, framework: str
) -> dict[str, int | float | None]:
    """For one compiled setting's pooled rows: the framework's active (curated) cases, those whose
    function has no compiled form (cases.no_compiled_form; all null in older tables: none), and how
    many active cases, and of the routable ones (the others), went through the compiler."""
    if cases is None or cases.empty:
        return dict.fromkeys(REACH_COLUMNS)
    mine = cases[(cases["framework"] == framework) & (cases["status"] == "active")]
    mine = mine[[not is_census_case(c) for c in mine["case_id"]]]
    active = set(mine["case_id"])
    reasons = mine["no_compiled_form"] if "no_compiled_form" in mine else pd.Series(None, index=mine.index)
    no_form = {c for c, why in zip(mine["case_id"], reasons) if isinstance(why, str) and why.strip()}
    failed_compiling = rows["outcome"].isin(FAILING_OUTCOMES) & (
        rows["failure_subcategory"] == COMPILE_FAILURE if "failure_subcategory" in rows else False
    )
    through = set(rows.loc[rows["execution"].isin(THROUGH_COMPILER) | failed_compiling, "case_id"]) & active
    routable = active - no_form

    def pct(n: int, d: int) -> float | None:
        return round(100.0 * n / d, 1) if d else None

    return {
        "n_active_cases": len(active),
        "n_no_compiled_form": len(no_form),
        "n_through_compiler": len(through),
        "pct_through_compiler": pct(len(through), len(active)),
        "n_routable_through_compiler": len(through & routable),
        "pct_routable_through_compiler": pct(len(through & routable), len(routable)),
    }


def compiler_reach(executions: pd.DataFrame) -> pd.DataFrame:
    """Per compiled setting with a cases table: one sentence of the compiler's reach, e.g.
    'tensorflow compiled: 60/70 (86%) of all cases, 60/60 (100%) of routable cases; 10 have no
    compiled form'."""
    columns = ["setting", "through_compiler"]
    shown = executions[(executions["mode"] == "compiled") & executions["n_active_cases"].notna()]
    if shown.empty:
        return pd.DataFrame(columns=columns)
    texts = []
    for r in shown.itertuples(index=False):
        routable = int(r.n_active_cases) - int(r.n_no_compiled_form)
        text = f"{r.framework} compiled: {_share(r.n_through_compiler, r.n_active_cases)} of all cases, "
        text += f"{_share(r.n_routable_through_compiler, routable)} of routable cases"
        texts.append(text + f"; {int(r.n_no_compiled_form)} have no compiled form")
    return pd.DataFrame({"setting": list(with_setting(shown)["setting"]), "through_compiler": texts})


def _share(n: float, d: float) -> str:
    """'60/70 (86%)'; without a denominator '0/0'."""
    n, d = int(n), int(d)
    return f"{n}/{d} ({100.0 * n / d:.0f}%)" if d else f"{n}/{d}"


def _most(seen: dict[str, float | None], run_ids: pd.Series) -> float | None:
    """The largest recorded value of these runs (None: none recorded)."""
    return max((seen[r] for r in set(run_ids) if seen.get(r) is not None), default=None)


def run_host_load(runs: pd.DataFrame | None, column: str = "host_load_max") -> dict[str, float | None]:
    """run_id -> the largest host load average its supervisor saw (None: not recorded, before v3),
    or with `column` host_other_cpu_max the most CPU work outside its processes (before v6: None)."""
    if runs is None or runs.empty or column not in runs:
        return {}
    return {
        run_id: None if pd.isna(load) else float(load) for run_id, load in zip(runs["run_id"], runs[column])
    }


def failure_by_bucket(outcomes: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Per setting, sample and frequency bucket: functions of known outcome, % failing (partial or
    complete). The study's outcomes count for its own sample only; ours for every sample, each
    function in the bucket its sample drew it from (then and now side by side)."""
    columns = [*SETTING_KEYS, "sample_id", "bucket", "n_known", "n_failing", "pct_failing"]
    if outcomes.empty or samples.empty:
        return pd.DataFrame(columns=columns)
    known = outcomes[outcomes["outcome"].isin(KNOWN)]
    parts = []
    for sample_id, drawn, measured in outcomes_per_sample(known, samples):
        buckets: dict[tuple[str, str], str] = {}
        for framework, function, bucket in zip(drawn["framework"], drawn["function"], drawn["bucket"]):
            buckets.setdefault((framework, canonical_function(framework, function)), str(bucket))
        frame = measured.assign(
            sample_id=sample_id,
            bucket=[buckets.get((fw, fn)) for fw, fn in zip(measured["framework"], measured["function"])],
        )
        parts.append(frame[frame["bucket"].notna()])
    frame = pd.concat(parts, ignore_index=True) if parts else known.iloc[:0]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    grouped = frame.groupby([*SETTING_KEYS, "sample_id", "bucket"])["outcome"]
    table = pd.DataFrame(
        {"n_known": grouped.size(), "n_failing": grouped.apply(lambda s: int(s.isin(FAILING).sum()))}
    )
    table["pct_failing"] = (100.0 * table["n_failing"] / table["n_known"]).round(1)
    table = table.reset_index()
    table["_b"] = [BUCKET_ORDER.index(b) if b in BUCKET_ORDER else 99 for b in table["bucket"]]
    table["_s"] = table["sample_id"] != STUDY
    return (
        table.sort_values([*SETTING_KEYS, "_s", "sample_id", "_b"])
        .drop(columns=["_b", "_s"])
        .reset_index(drop=True)[columns]
    )


def failure_categories(
    outcomes: pd.DataFrame, results: pd.DataFrame | None, runs: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per setting and failure category: failing functions (by their dominant category) and failing
    subtest rows (from results, where read). Harness failures are the study's, not the function's;
    a failing row that a run closed partial never confirmed alone is not counted (aggregation reads
    it as unknown: pipeline.subtests.collect_subtests)."""
    columns = [*SETTING_KEYS, "failure_category", "functions", "subtest_rows"]
    failing = outcomes[outcomes["outcome"].isin(FAILING)] if len(outcomes) else outcomes
    functions = (
        failing.assign(failure_category=failing["dominant_failure_category"].fillna("other"))
        .groupby([*SETTING_KEYS, "failure_category"])
        .size()
        .rename("functions")
        if len(failing)
        else pd.Series(dtype=float, name="functions")
    )
    rows = pd.Series(dtype=float, name="subtest_rows")
    if results is not None and len(results):
        bad = results[results["failure_category"].notna() & (results["failure_category"] != "harness")]
        if "confirmation" in bad:
            unconfirmed = bad["confirmation"].isna() & bad["run_id"].isin(partial_run_ids(runs))
            bad = bad[~unconfirmed]
        if len(bad):
            rows = bad.groupby([*SETTING_KEYS, "failure_category"]).size().rename("subtest_rows")
    if functions.empty and rows.empty:
        return pd.DataFrame(columns=columns)
    table = pd.concat([functions, rows], axis=1).fillna(0).astype(int).reset_index()
    table.columns = columns
    return table.sort_values(columns[:7]).reset_index(drop=True)


def bucket_matrix(table: pd.DataFrame) -> pd.DataFrame:
    """The bucket table for reading: a row per setting, a column per bucket, cells '% failing (n)'."""
    if table.empty:
        return pd.DataFrame(columns=["setting", *BUCKET_ORDER])
    frame = with_setting(table)
    frame = frame.assign(cell=[f"{p:.0f}% ({n})" for p, n in zip(frame["pct_failing"], frame["n_known"])])
    matrix = frame.pivot_table(index="setting", columns="bucket", values="cell", aggfunc="first")
    matrix = matrix.reindex(columns=[b for b in BUCKET_ORDER if b in matrix.columns]).fillna("")
    matrix = matrix.reindex(list(reversed(setting_order(frame))))
    matrix.columns.name = None
    return matrix.reset_index()


def sample_coverage(
    outcomes: pd.DataFrame, samples: pd.DataFrame, census: frozenset[tuple[str, str]] = frozenset()
) -> pd.DataFrame:
    """Per sample and framework: sampled functions, how many have outcome rows under the same name
    (curated cases; TensorFlow's `tf.` spelling matched as `tensorflow.`), how many the census
    measured (the support matrix), either, and which neither did: name mismatches show here.
    Counting curated outcomes only called 28 of torch's 69 measured 2026 functions unmeasured."""
    columns = ["sample_id", "framework", "sampled", "curated", "census", "measured", "not_measured_examples"]
    if samples.empty:
        return pd.DataFrame(columns=columns)
    measured = set(zip(outcomes["framework"], outcomes["function"])) if len(outcomes) else set()
    rows = []
    tested = samples[samples["status"] != "replaced"]
    for (sample_id, framework), group in tested.groupby(["sample_id", "framework"]):
        names = sorted(set(group["function"]))
        curated = {n for n in names if (framework, n) in measured}
        by_census = {n for n in names if (framework, n) in census}
        missing = [n for n in names if n not in curated | by_census]
        rows.append(
            {
                "sample_id": sample_id,
                "framework": framework,
                "sampled": len(names),
                "curated": len(curated),
                "census": len(by_census),
                "measured": len(curated | by_census),
                "not_measured_examples": ", ".join(missing[:5]),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def settings_overview(
    outcomes: pd.DataFrame, latencies: pd.DataFrame, primary: dict[tuple, str]
) -> pd.DataFrame:
    """Every measured setting: functions, how many have a known outcome, how many were timed."""
    columns = [*SETTING_KEYS, "primary_model", "n_functions", "n_known_outcome", "n_timed"]
    if outcomes.empty and latencies.empty:
        return pd.DataFrame(columns=columns)
    counts = outcomes.groupby(SETTING_KEYS).agg(
        n_functions=("function", "size"), n_known_outcome=("outcome", lambda s: int(s.isin(KNOWN).sum()))
    )
    unpaired = latencies[latencies["reference_device"].isna()] if len(latencies) else latencies
    timed = unpaired.groupby(SETTING_KEYS).size().rename("n_timed") if len(unpaired) else None
    table = counts.join(timed, how="outer") if timed is not None else counts.assign(n_timed=0)
    table = table.fillna(0).astype(int).reset_index()
    table["primary_model"] = [
        "yes" if is_primary(primary, s, d, dm) else ""
        for s, f, v, d, dm, m in table[SETTING_KEYS].itertuples(index=False)
    ]
    return in_reading_order(table)[columns]
