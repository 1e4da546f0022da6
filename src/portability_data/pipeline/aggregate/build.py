"""Aggregate result shards into function outcomes and latencies (the study's procedure), and
summary tables (the study's headline figures) from any set of shards.

A function group is source x framework x framework_version x function x device x device_model x
mode; a subtest is identified within its group by (case_id, subtest), subtest being the name with
the device token removed, so the same subtest pairs across devices.

Outcomes (docs/METHOD.md section 6, contract `outcomes`):
- A subtest *failed* if any of its rows (any repeat, any run, any report node id) failed, errored,
  timed out, crashed or ran out of memory, except failures in category "harness" (the test code,
  not the function, broke: they count neither as failed nor as passed). It *passed* if every
  other non-skipped row passed; it is *unknown* if some row is unknown (no report covers the
  device) and none failed; *skipped* if all its rows were skipped. The contract's wording
  (n_passed "in every repeat", n_failed "in some repeat") is this rule; the study had one pytest
  report per machine, so its repeats all carry the same outcome and the choice does not change
  its figures.
- Host fallback (schema 7): a subtest that ran through with some op on the host instead of the device
  (results.outcome host_fallback: torch_xla's fallback counters, or an output on the host) and did
  not fail is *host_fallback*: counted in n_host_fallback, not in n_passed.
- n_subtests = passed + host_fallback + failed + unknown subtests (skipped and harness-only ones
  excluded), so n_subtests - n_passed - n_host_fallback - n_failed is the number of unknown subtests.
- outcome: success (all passed), complete_failure (all failed), partial_failure (some of each, a
  host_fallback subtest counting as one that ran); host_fallback (none failed, some fell back);
  unknown where nothing is known (no passed or failed subtest: all unknown, skipped or harness),
  or where unknown subtests leave success/complete failure undecided (a group with both passed and
  failed subtests is a partial failure whatever the unknowns).
- unavailable: the function does not exist in that framework version, so nothing could run:
  every row of the group is skipped with error_type "FunctionUnavailable", or (run_aggregate with
  the cases table) its case has status "removed" with removed_since at or before the run's
  framework version and nothing ran (no group, or an unknown one): such groups get a row with
  zero counts for every run group (source, framework, version, device, model, mode) of the runs
  table. Evidence wins: a removed case whose subtests did run keeps its measured outcome.
- dominant_failure_category: the most frequent category over failed subtests (each failed
  subtest votes with its own most frequent category; ties by name); null without failures.
- Order dependence: a failing row whose subtest passed when re-run alone in a fresh worker
  (results.confirmation = order_dependent) is not the framework's failure: it counts as passed,
  and n_order_dependent says how many subtests of the group were so.
- Unconfirmed: a failing or host-fallback row of a run closed partial (runs.status partial) that was
  never re-run alone (results.confirmation null) is read as unknown, not failed: the run stopped
  before its failures were confirmed, and a failure is the framework's only once it recurs alone.
- Compiled means compiled: in compiled mode a subtest counts only if every timed call of it went
  through the compiler whole (results.execution = compiled, or null in shards that predate the
  column); subtests with graph breaks, an eager fallback or code the harness did not route are
  left out and counted in n_not_compiled. A group with none left is `not_compiled`.
- Supersession (`supersede`): for each setting (source, framework, version, device, model, mode)
  and case, only rows of runs made with the newest harness and the newest version of the case's
  files are pooled; older runs stay in the dataset and the report names them. Of the runs of the
  same code, a contended one is left out where a quiet one stands beside it: other work outside the
  run's own processes above params.yaml aggregate.quiet_load_max - 1 cores (runs.host_other_cpu_max,
  schema 6), or, for a run without that measure, a host load average above quiet_load_max; runs
  with neither are pooled as before.
- Cases that exist (`without_orphans`): rows of our own runs whose case id the cases table no
  longer has (a renamed or deleted case) stay in the shards but are left out of the outcomes.
- Failure rules re-read (`reclassify_failures`): result shards are immutable and carry the rule
  table's reading at run time, so a rule added later would never reach them. Before anything is
  pooled, every failing row of our own sources is classified again with the current rule table
  (runner/rules/failures.yaml); the study's imported rows (source mince2023) keep the study's
  reading. A message the runner stored cut at 2000 characters keeps its run-time rule where the
  current table finds none (the cut may have removed what it matched). Rows whose reading changed
  are marked (column failure_reread), counted in the log and in the report.
- Quiet latencies (`quiet`, issue 49): a pooled run whose own measure says other work
  shared the cores (the contention test above: other work above quiet_load_max - 1 cores, else a
  host load above quiet_load_max) counts for outcomes but its timings are left out of latencies,
  whether or not a quiet run stands beside it; runs without either measure keep their timings.

Latencies (docs/METHOD.md section 6, the published tables' procedure, contract `latencies`):
1. per device, a subtest is dropped if it has no passing result: kept are subtests with a row
   passed, unknown, or failed in category "harness" (the JAX `partial_timed()` error does not
   count against the function); CPU variants are their own device group already (the importer
   splits them off);
2. pairing across devices by (case_id, subtest), subtest names carrying no device token;
3. a subtest is used only if it recorded operation timings in every repeat of every run it appears
   in (repeats from the runs table) and, for a pair, is kept on both devices;
4. subtest latency = mean of all its operation timings over all runs (the timings pooled);
   function latency = unweighted mean of its subtests' latencies; ratio = latency_ms /
   reference_latency_ms over the same subtests.
Rows: one per function group with reference_* null (every usable subtest of that device), and one
per ordered pair of device groups (device, reference) within the same source, framework,
framework_version, function and mode that share at least one usable subtest; both orientations
are written, so any device can serve as the reference. median_ms = median of the subtests'
median timings; spread = median over subtests of IQR / median of their timings.

Where the parts live: pipeline/subtests.py (supersession, pooling rows into subtests; shared),
outcomes (outcome classification, unavailable functions), latencies (latency rows), and in
readings/: subtests (a subtest's status), quiet (which runs were contended), frames (Arrow/plain
frame conversions); this module runs them as the `aggregate` stage.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import pandas as pd

from portability_data.pipeline.aggregate.latencies import compute_latencies
from portability_data.pipeline.aggregate.outcomes import (
    compute_outcomes,
    function_outcome,
    removed_groups,
    unavailable_from_results,
)
from portability_data.pipeline.failure_reading import STUDY_SOURCE, reclassify_failures
from portability_data.pipeline.subtests import (
    SUPERSEDED_BY,
    SUPERSEDED_REASON,
    collect_subtests,
    marked_supersession,
    repeats_per_run,
    supersede,
)
from portability_data.readings.frames import column_values
from portability_data.readings.quiet import (
    DEFAULT_QUIET_LOAD_MAX,
    contended_run_ids,
    quiet_load_max,
)
from portability_data.readings.subtests import partial_run_ids
from portability_data.tables.contracts import REREAD, TABLES, is_census_case

__all__ = ["aggregate", "pooled_rows", "reclassify_failures", "run_aggregate", "supersede"]

log = logging.getLogger(__name__)


def without_census(results: pd.DataFrame) -> pd.DataFrame:
    """The result rows of curated cases (census cases: pipeline/support_matrix.py)."""
    if not len(results):
        return results
    return results[[not is_census_case(case_id) for case_id in results["case_id"]]]


def _log_rereads(results: pd.DataFrame) -> None:
    """How many failing rows the current rule table read differently, per framework and mode."""
    if REREAD not in results or not results[REREAD].any():
        return
    changed = results[results[REREAD]]
    counts = Counter(zip(column_values(changed["framework"]), column_values(changed["mode"])))
    log.info(
        "the current failure rules read %d failing rows differently than at run time: %s",
        len(changed),
        ", ".join(f"{fw} {mode}: {n}" for (fw, mode), n in sorted(counts.items())),
    )


def without_orphans(results: pd.DataFrame, cases: pd.DataFrame | None) -> pd.DataFrame:
    """Our own rows (not the study's) whose case the cases table no longer has are left out: a
    case renamed or deleted keeps its rows in the immutable shards, but an outcome belongs to a case
    that exists (the renamed one is measured under its new id). Without a cases table (or one
    without case ids) nothing is left out."""
    if cases is None or not len(cases) or "case_id" not in cases or not len(results):
        return results
    known = set(column_values(cases["case_id"]))
    case_ids = column_values(results["case_id"])
    orphan = [
        s != STUDY_SOURCE and c not in known for s, c in zip(column_values(results["source"]), case_ids)
    ]
    if any(orphan):
        gone = sorted({c for c, o in zip(case_ids, orphan) if o})
        log.info(
            "%d rows of %d case(s) no longer in the cases table left out: %s",
            sum(orphan),
            len(gone),
            ", ".join(gone),
        )
    return results[[not o for o in orphan]].reset_index(drop=True)


def pooled_rows(
    results: pd.DataFrame, runs: pd.DataFrame | None, *, quiet_load_max: float | None = DEFAULT_QUIET_LOAD_MAX
) -> pd.DataFrame:
    """Every row with its failure read by the current rules and its supersession marked
    (subtests.marked_supersession), census rows and the rows of cases no longer in the cases table
    included (the report reads both). The `pooled` table is these rows in its columns; aggregate
    pools the unmarked curated ones that still have a case. Supersession is decided per setting and
    case, so the census' and the orphans' rows decide nothing for the others."""
    reread = reclassify_failures(results.reset_index(drop=True))
    _log_rereads(without_census(reread))
    marked, _ = marked_supersession(reread, runs, quiet_load_max=quiet_load_max)
    return marked


def pooled_table(marked: pd.DataFrame) -> pd.DataFrame:
    """pooled_rows' rows in the `pooled` table's columns (the list column as objects: tableio
    converts an Arrow-backed list column with nulls badly)."""
    return marked[list(TABLES["pooled"].names)].astype({"host_fallback_ops": object})


def aggregate(
    results: pd.DataFrame,
    runs: pd.DataFrame | None = None,
    cases: pd.DataFrame | None = None,
    *,
    quiet_load_max: float | None = DEFAULT_QUIET_LOAD_MAX,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(outcomes, latencies) from results rows (any number of shards), their runs rows and,
    optionally, the cases table (for functions removed from a framework version). Failing rows are
    classified again by the current rules, then rows of superseded runs are left out (`supersede`,
    with the quiet-run threshold; None: off) and the timings of contended runs are left out of the
    latencies (`quiet`). Census rows are not the study's kind of measurement
    (its sample, its outcome per function): they go to the support matrix instead."""
    return aggregate_marked(
        pooled_rows(results, runs, quiet_load_max=quiet_load_max), runs, cases, quiet_load_max
    )


def aggregate_marked(
    marked: pd.DataFrame, runs: pd.DataFrame | None, cases: pd.DataFrame | None, quiet_load_max: float | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """aggregate's (outcomes, latencies) from pooled_rows' marked rows."""
    pooled = marked[marked[SUPERSEDED_REASON].isna()].drop(columns=[SUPERSEDED_REASON, SUPERSEDED_BY])
    results = without_orphans(without_census(pooled).reset_index(drop=True), cases).reset_index(drop=True)
    groups = collect_subtests(results, partial_run_ids(runs))
    unavailable = unavailable_from_results(results)
    if cases is not None and runs is not None and len(cases):
        for group in removed_groups(cases, runs):
            statuses = Counter(s.status() for s in groups.get(group, {}).values())
            if function_outcome(statuses) == "unknown":
                groups.setdefault(group, {})
                unavailable.add(group)
    latencies = compute_latencies(
        groups, repeats_per_run(runs, results), contended_run_ids(runs, quiet_load_max)
    )
    return compute_outcomes(groups, unavailable), latencies


def _table_file(path: Path, table: str) -> Path:
    path = Path(path)
    return path if path.suffix == ".parquet" else path / f"{table}.parquet"


def run_aggregate(
    results_dir: Path,
    runs_dir: Path,
    outcomes_out: Path,
    latencies_out: Path,
    pooled_out: Path,
    *,
    cases_path: Path | None = None,
    quarantine: bool = False,
    params_path: Path = Path("params.yaml"),
) -> tuple[Path, Path, Path]:
    """The pipeline stage: read every results shard and runs row (and the cases table where it
    exists), aggregate with params_path's quiet-run threshold, write outcomes, latencies and the
    rows they pool (`pooled`, every curated row marked: what the report reads). `quarantine`
    leaves bad shards out (tableio's rule). An output without a .parquet suffix is taken as a
    folder (<folder>/<table>.parquet)."""
    from portability_data.tables.tableio import read_shards, read_table, write_table

    shards = read_shards("results", [Path(results_dir)], quarantine=quarantine)
    for bad in sorted(shards.bad):
        log.warning("left out bad shard %s", bad)
    results = shards.frame
    runs = read_table("runs", Path(runs_dir))
    cases = read_table("cases", Path(cases_path)) if cases_path and Path(cases_path).exists() else None
    threshold = quiet_load_max(params_path)
    marked = pooled_rows(results, runs, quiet_load_max=threshold)
    outcomes, latencies = aggregate_marked(marked, runs, cases, threshold)
    return (
        write_table("outcomes", outcomes, _table_file(outcomes_out, "outcomes")),
        write_table("latencies", latencies, _table_file(latencies_out, "latencies")),
        write_table("pooled", pooled_table(marked), _table_file(pooled_out, "pooled")),
    )
