"""Pooling results rows into subtests (aggregate.py's docstring has the rules): which rows are pooled
(`supersede`: per setting and case, only runs of the newest harness and case files, and of those
the quiet ones where a quiet and a contended run measured the same code) and the
`Subtest` that each (case_id, subtest) of a function group collects from them.

Outcomes and latencies are both computed from these subtests, so they live apart from either.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Mapping
from typing import Any

import pandas as pd

from portability_data.readings.frames import column_values, plain_frame
from portability_data.readings.quiet import contention, host_load, json_object
from portability_data.readings.subtests import GROUP, SETTING, Subtest
from portability_data.tables.contracts import CONFIRMED_OUTCOMES, FAILING_OUTCOMES


def collect_subtests(
    results: pd.DataFrame, unconfirmed_runs: Collection[str] = ()
) -> dict[tuple, dict[tuple[str, str], Subtest]]:
    """group key (GROUP columns) -> (case_id, subtest) -> Subtest, from results rows.

    `unconfirmed_runs`: runs closed partial (runs.status partial), stopped before every failure was
    re-run alone in a fresh worker. A failing or host-fallback row of theirs without a confirmation
    is read as `unknown`: it failed once beside other cases, and a failure is the framework's only
    once it recurs alone (the census reads such a pair as `unconfirmed` the same way)."""
    needed = (
        *GROUP,
        "case_id",
        "subtest",
        "run_id",
        "repeat",
        "outcome",
        "failure_category",
        "op_latencies_ms",
    )
    columns = {name: column_values(results[name]) for name in needed}
    for optional in ("execution", "confirmation"):  # absent from frames built before schema 2
        columns[optional] = column_values(results[optional]) if optional in results else [None] * len(results)
    groups: dict[tuple, dict[tuple[str, str], Subtest]] = defaultdict(dict)
    for i in range(len(results)):
        group = tuple(columns[name][i] for name in GROUP)
        key = (columns["case_id"][i], columns["subtest"][i])
        subtest = groups[group].get(key)
        if subtest is None:
            subtest = groups[group][key] = Subtest()
        outcome, category = columns["outcome"][i], columns["failure_category"][i]
        timings = columns["op_latencies_ms"][i]
        if columns["confirmation"][i] == "order_dependent" and (
            outcome in FAILING_OUTCOMES or outcome == "host_fallback"
        ):
            subtest.order_dependent = True
            outcome, category = "passed", None
        elif (
            outcome in CONFIRMED_OUTCOMES
            and category != "harness"
            and columns["confirmation"][i] is None
            and columns["run_id"][i] in unconfirmed_runs
        ):
            subtest.unconfirmed = True
            if outcome != "host_fallback":  # a failing call's timings are never a latency
                timings = None
            outcome, category = "unknown", None
        if columns["mode"][i] == "compiled" and columns["execution"][i] not in (None, "compiled"):
            subtest.not_compiled = True
        subtest.outcomes.append(outcome)
        subtest.categories.append(category)
        slot = (columns["run_id"][i], int(columns["repeat"][i]))
        subtest.ops.setdefault(slot, [])
        subtest.ops[slot] = subtest.ops[slot] + [float(v) for v in (timings or [])]
    return groups


def repeats_per_run(runs: pd.DataFrame | None, results: pd.DataFrame) -> dict[str, int]:
    """run_id -> repeats, from the runs table; runs missing there fall back to the repeats seen."""
    seen: dict[str, int] = defaultdict(int)
    for run_id, repeat in zip(column_values(results["run_id"]), column_values(results["repeat"])):
        seen[run_id] = max(seen[run_id], int(repeat) + 1)
    if runs is not None and len(runs):
        for run_id, repeats in zip(column_values(runs["run_id"]), column_values(runs["repeats"])):
            seen[run_id] = int(repeats)
    return dict(seen)


PARTIAL_BESIDE_COMPLETE = (
    "closed partial (failures not confirmed alone) beside a complete run of the same code"
)
PARTIAL_BESIDE_NEWER = "closed partial beside a newer run of the same code"


SUPERSEDED_REASON, SUPERSEDED_BY = "superseded_reason", "superseded_by"  # marked_supersession's columns


def supersede(
    results: pd.DataFrame, runs: pd.DataFrame | None, *, quiet_load_max: float | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(results to pool, superseded runs): marked_supersession's rows left unmarked, without the
    marks, and its superseded table."""
    marked, superseded = marked_supersession(results, runs, quiet_load_max=quiet_load_max)
    if not len(results):
        return results, superseded
    return results[marked[SUPERSEDED_REASON].isna().to_numpy()].reset_index(drop=True), superseded


def marked_supersession(
    results: pd.DataFrame, runs: pd.DataFrame | None, *, quiet_load_max: float | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(every row of results with columns SUPERSEDED_REASON and SUPERSEDED_BY: null for a row that
    is pooled, else why and which run superseded it; superseded runs). The aggregate stage writes
    the marked rows (table `pooled`), so readers pool as it pools without pooling again.

    Per setting and case, the newest run that ran the case (runs.started_at) fixes the harness
    digest and the case's digest; rows of that case from runs made with another harness or other
    case files are superseded, and so are all rows of runs without digests (made before runs
    recorded them) in a setting where a run has them. Settings
    where no run has digests (the study's) are pooled as they are. The superseded table has one
    row per run: run_id, setting, superseded rows, reason, the run that superseded it.

    Quiet runs preferred (`quiet_load_max`, params.yaml aggregate.quiet_load_max; None: off): of
    the runs of one setting and case that are pooled (same harness and case digests), where one
    was quiet, those that were not are contended beside a quieter measurement of the same code and
    are superseded by the quietest. Quiet: the CPU work outside the run's own processes peaked at
    <= quiet_load_max - 1 cores (runs.host_other_cpu_max, since schema 6: the run's own worker and
    compiler threads do not count), or, for a run without that measure, its host load average
    peaked at <= quiet_load_max (the load average counts the run's own worker as about 1). Runs
    with neither are neither: they stay pooled. Without a quiet run nothing is dropped.

    A run closed partial (runs.status partial: stopped by hand, its failures not all confirmed
    alone) is superseded, case by case, by a complete run of the same code
    (complete_runs_of_same_code), else by the newest run of the same code that measured the case
    again (a re-measure meant to replace it)."""
    columns = ["run_id", *SETTING, "n_rows", "reason", "superseded_by"]
    unmarked = results.assign(**{SUPERSEDED_REASON: None, SUPERSEDED_BY: None})
    if runs is None or not len(runs) or "harness_digest" not in runs or not len(results):
        return unmarked, pd.DataFrame(columns=columns)
    facts: dict[str, dict[str, Any]] = {}
    for record in plain_frame(runs).to_dict("records"):
        digests = record.get("case_digests")
        facts[record["run_id"]] = {
            "setting": tuple(record[c] for c in SETTING),
            "started": str(record.get("started_at") or ""),
            "harness": record.get("harness_digest")
            if isinstance(record.get("harness_digest"), str)
            else None,
            "cases": json_object(digests),
            "load": host_load(record.get("host_load_max")),
            "other": host_load(record.get("host_other_cpu_max")),
            "status": record.get("status"),
        }
    run_ids, case_ids = column_values(results["run_id"]), column_values(results["case_id"])
    newest: dict[tuple, tuple[str, str, str | None, str | None]] = {}
    for run_id, case_id in set(zip(run_ids, case_ids)):
        fact = facts.get(run_id)
        if fact is None or fact["harness"] is None:
            continue
        key = (fact["setting"], case_id)
        candidate = (fact["started"], run_id, fact["harness"], fact["cases"].get(case_id))
        if key not in newest or candidate[:2] > newest[key][:2]:
            newest[key] = candidate
    settings_with_digests = {setting for setting, _ in newest}
    pairs = set(zip(run_ids, case_ids))
    # partial runs give way first, so the quiet preference chooses among the runs that stand: else
    # a newer partial re-measure (contended) and the older partial (quiet) would supersede each other
    partial = partial_runs_given_way(pairs, facts, newest)
    contended = contended_runs(pairs - set(partial), facts, newest, quiet_load_max)
    marks: list[tuple[str, str] | None] = []
    dropped: Counter[str] = Counter()
    reasons: dict[str, tuple[str, str]] = {}
    for run_id, case_id in zip(run_ids, case_ids):
        fact = facts.get(run_id)
        if fact is None or fact["setting"] not in settings_with_digests:
            marks.append(None)
            continue
        best = newest.get((fact["setting"], case_id))
        if best is None:
            marks.append(None)
            continue
        if (run_id, case_id) in partial:
            reason, by = partial[run_id, case_id]
        elif (run_id, case_id) in contended:  # the same code as the newest run (maybe the newest itself)
            reason, by = contended[run_id, case_id]
        elif best[1] == run_id:
            marks.append(None)
            continue
        elif fact["harness"] is None:
            reason, by = "made before runs recorded harness and case digests", best[1]
        elif fact["harness"] != best[2]:
            reason, by = "older harness", best[1]
        elif fact["cases"].get(case_id) != best[3]:
            reason, by = "older case files", best[1]
        else:
            marks.append(None)
            continue
        marks.append((reason, by))
        dropped[run_id] += 1
        reasons.setdefault(run_id, (reason, by))
    superseded = pd.DataFrame(
        [
            {
                "run_id": run_id,
                **dict(zip(SETTING, facts[run_id]["setting"])),
                "n_rows": n,
                "reason": reasons[run_id][0],
                "superseded_by": reasons[run_id][1],
            }
            for run_id, n in sorted(dropped.items())
        ],
        columns=columns,
    )
    marked = results.assign(
        **{
            SUPERSEDED_REASON: [None if m is None else m[0] for m in marks],
            SUPERSEDED_BY: [None if m is None else m[1] for m in marks],
        }
    )
    return marked, superseded


def newest_of_same_code(
    fact: Mapping[str, Any], case_id: str, newest: Mapping[tuple, tuple[str, str, str | None, str | None]]
) -> tuple[str, str, str | None, str | None] | None:
    """The newest run of the run's setting and case (supersede's `newest`) where the run measured the
    case with the same code (harness and case digests), else None."""
    best = newest.get((fact["setting"], case_id))
    if best is not None and (fact["harness"], fact["cases"].get(case_id)) == best[2:]:
        return best
    return None


def complete_runs_of_same_code(
    pairs: set[tuple[str, str]],
    facts: Mapping[str, Mapping[str, Any]],
    newest: Mapping[tuple, tuple[str, str, str | None, str | None]],
) -> dict[tuple, str]:
    """(setting, case_id) -> the newest complete run of the case's newest code (harness and case
    digests). A run closed partial by hand never confirmed its failures alone in a fresh worker, so
    beside a complete run of the same code its rows are superseded, not pooled."""
    out: dict[tuple, tuple[str, str]] = {}
    for run_id, case_id in pairs:
        fact = facts.get(run_id)
        if fact is None or fact.get("status") != "complete":
            continue
        key = (fact["setting"], case_id)
        if newest_of_same_code(fact, case_id, newest) is not None:
            candidate = (fact["started"], run_id)
            if key not in out or candidate > out[key]:
                out[key] = candidate
    return {key: run_id for key, (_, run_id) in out.items()}


def partial_runs_given_way(
    pairs: set[tuple[str, str]],
    facts: Mapping[str, Mapping[str, Any]],
    newest: Mapping[tuple, tuple[str, str, str | None, str | None]],
) -> dict[tuple[str, str], tuple[str, str]]:
    """(run_id, case_id) -> (reason, the run it gives way to) for each case of a run closed
    partial that another run of the case's newest code (harness and case digests) measured: the
    newest complete one, else the newest run, itself partial (a re-measure meant to replace it)."""
    completed = complete_runs_of_same_code(pairs, facts, newest)
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for run_id, case_id in pairs:
        fact = facts.get(run_id)
        if fact is None or fact.get("status") != "partial":
            continue
        key = (fact["setting"], case_id)
        best = newest_of_same_code(fact, case_id, newest)
        if best is None:
            continue  # another harness or case files: supersede's other reasons apply
        if key in completed:
            out[run_id, case_id] = (PARTIAL_BESIDE_COMPLETE, completed[key])
        elif best[1] != run_id:
            out[run_id, case_id] = (PARTIAL_BESIDE_NEWER, best[1])
    return out


def contended_runs(
    pairs: set[tuple[str, str]],
    facts: Mapping[str, Mapping[str, Any]],
    newest: Mapping[tuple, tuple[str, str, str | None, str | None]],
    quiet_load_max: float | None,
) -> dict[tuple[str, str], tuple[str, str]]:
    """(run_id, case_id) -> (reason, the quietest run) for the contended runs that a quiet
    run of the same setting, case, harness and case files stands beside (supersede's docstring)."""
    if quiet_load_max is None:
        return {}
    same_code: dict[tuple, list[str]] = defaultdict(list)
    for run_id, case_id in pairs:
        fact = facts.get(run_id)
        if fact is None or fact["harness"] is None or contention(fact, quiet_load_max) is None:
            continue
        if newest_of_same_code(fact, case_id, newest) is not None:
            same_code[(fact["setting"], case_id)].append(run_id)
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for (_, case_id), run_ids in same_code.items():
        over = {r: contention(facts[r], quiet_load_max) for r in run_ids}
        quiet = [r for r in run_ids if over[r][0] <= 0]
        if not quiet or len(quiet) == len(run_ids):
            continue
        quietest = min(quiet, key=lambda r: (over[r][0], r))
        for run_id in set(run_ids) - set(quiet):
            reason = f"contended ({over[run_id][1]}) beside a quieter run of the same code"
            out[run_id, case_id] = (reason, quietest)
    return out
