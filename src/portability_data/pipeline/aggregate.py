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
- n_subtests = passed + failed + unknown subtests (skipped and harness-only ones excluded), so
  n_subtests - n_passed - n_failed is the number of unknown subtests.
- outcome: success (all passed), complete_failure (all failed), partial_failure (some of each);
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
- Compiled means compiled: in compiled mode a subtest counts only if every timed call of it went
  through the compiler whole (results.execution = compiled, or null in shards that predate the
  column); subtests with graph breaks, an eager fallback or code the harness did not route are
  left out and counted in n_not_compiled. A group with none left is `not_compiled`.
- Supersession (`supersede`): for each setting (source, framework, version, device, model, mode)
  and case, only rows of runs made with the newest harness and the newest version of the case's
  files are pooled; older runs stay in the dataset and the report names them.

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
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from portability_data.tables.contracts import LATENCIES, OUTCOMES

log = logging.getLogger(__name__)

FAILING = frozenset({"failed", "error", "timeout", "crashed", "memory"})
GROUP = ("source", "framework", "framework_version", "function", "device", "device_model", "mode")
PAIR_SCOPE = ("source", "framework", "framework_version", "function", "mode")
# Summary tables orient each device pair with the earlier device of this order as the reference,
# so the study's ratio reads TPU / GPU.
REFERENCE_ORDER = ("gpu", "cpu", "tpu", "mps")
SLOWDOWN_FACTOR = 10.0


def _values(series: pd.Series) -> list[Any]:
    """Python values of a column, Arrow-backed or not (lists stay lists, nulls become None)."""
    if isinstance(series.dtype, pd.ArrowDtype):
        return series.array.__arrow_array__().to_pylist()
    return [None if _is_null(v) else v for v in series.tolist()]


def _is_null(value: Any) -> bool:
    if isinstance(value, (list, tuple, np.ndarray)):
        return False
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


@dataclass
class Subtest:
    """Everything aggregation needs about one subtest of one function group."""

    outcomes: list[str] = field(default_factory=list)
    categories: list[str | None] = field(default_factory=list)
    ops: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    order_dependent: bool = False  # a failing row passed alone in a fresh worker
    not_compiled: bool = False  # compiled mode, but some row did not really compile

    def status(self) -> str:
        """failed / passed / unknown / harness / skipped, per the module rule."""
        counted = [(o, c) for o, c in zip(self.outcomes, self.categories) if o != "skipped"]
        if any(o in FAILING and c != "harness" for o, c in counted):
            return "failed"
        plain = [o for o, c in counted if not (o in FAILING and c == "harness")]
        if plain and all(o == "passed" for o in plain):
            return "passed"
        if any(o == "unknown" for o in plain):
            return "unknown"
        if counted:
            return "harness" if not plain else "unknown"
        return "skipped"

    def has_passing_result(self) -> bool:
        """The study's latency filter: kept unless no row passed (unknown and harness rows keep it)."""
        return any(
            o in ("passed", "unknown") or (o in FAILING and c == "harness")
            for o, c in zip(self.outcomes, self.categories)
        )

    def dominant_category(self) -> str | None:
        pairs = zip(self.outcomes, self.categories)
        return _mode(c or "other" for o, c in pairs if o in FAILING and c != "harness")

    def timed_in_every_run(self, repeats: Mapping[str, int]) -> bool:
        """Operation timings in every repeat of every run the subtest appears in."""
        runs = {run_id for run_id, _ in self.ops}
        return bool(runs) and all(
            self.ops.get((run_id, r)) for run_id in runs for r in range(repeats.get(run_id, 1))
        )

    def pooled(self) -> list[float]:
        return [v for key in sorted(self.ops) for v in self.ops[key]]


def _mode(values: Iterable[str]) -> str | None:
    counts = Counter(values)
    if not counts:
        return None
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def collect_subtests(results: pd.DataFrame) -> dict[tuple, dict[tuple[str, str], Subtest]]:
    """group key (GROUP columns) -> (case_id, subtest) -> Subtest, from results rows."""
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
    columns = {name: _values(results[name]) for name in needed}
    for optional in ("execution", "confirmation"):  # absent from frames built before schema 2
        columns[optional] = _values(results[optional]) if optional in results else [None] * len(results)
    groups: dict[tuple, dict[tuple[str, str], Subtest]] = defaultdict(dict)
    for i in range(len(results)):
        group = tuple(columns[name][i] for name in GROUP)
        key = (columns["case_id"][i], columns["subtest"][i])
        subtest = groups[group].get(key)
        if subtest is None:
            subtest = groups[group][key] = Subtest()
        outcome, category = columns["outcome"][i], columns["failure_category"][i]
        if columns["confirmation"][i] == "order_dependent" and outcome in FAILING:
            subtest.order_dependent = True
            outcome, category = "passed", None
        if columns["mode"][i] == "compiled" and columns["execution"][i] not in (None, "compiled"):
            subtest.not_compiled = True
        subtest.outcomes.append(outcome)
        subtest.categories.append(category)
        slot = (columns["run_id"][i], int(columns["repeat"][i]))
        subtest.ops.setdefault(slot, [])
        subtest.ops[slot] = subtest.ops[slot] + [float(v) for v in (columns["op_latencies_ms"][i] or [])]
    return groups


def _repeats(runs: pd.DataFrame | None, results: pd.DataFrame) -> dict[str, int]:
    """run_id -> repeats, from the runs table; runs missing there fall back to the repeats seen."""
    seen: dict[str, int] = defaultdict(int)
    for run_id, repeat in zip(_values(results["run_id"]), _values(results["repeat"])):
        seen[run_id] = max(seen[run_id], int(repeat) + 1)
    if runs is not None and len(runs):
        for run_id, repeats in zip(_values(runs["run_id"]), _values(runs["repeats"])):
            seen[run_id] = int(repeats)
    return dict(seen)


def function_outcome(statuses: Counter) -> str:
    """success / partial_failure / complete_failure / unknown from subtest status counts."""
    passed, failed, unknown = statuses["passed"], statuses["failed"], statuses["unknown"]
    if passed and failed:
        return "partial_failure"
    if unknown or not (passed or failed):
        return "unknown"
    return "success" if passed else "complete_failure"


def compute_outcomes(
    groups: dict[tuple, dict[tuple[str, str], Subtest]], unavailable_groups: set[tuple] | None = None
) -> pd.DataFrame:
    rows = []
    for group, all_subtests in sorted(groups.items()):
        subtests = {k: s for k, s in all_subtests.items() if not s.not_compiled}
        statuses = Counter(s.status() for s in subtests.values())
        failed = [s.dominant_category() for s in subtests.values() if s.status() == "failed"]
        outcome = function_outcome(statuses)
        if not subtests and all_subtests:
            outcome = "not_compiled"
        if unavailable_groups and group in unavailable_groups:
            outcome = "unavailable"
        rows.append(
            {
                **dict(zip(GROUP, group)),
                "outcome": outcome,
                "n_subtests": statuses["passed"] + statuses["failed"] + statuses["unknown"],
                "n_passed": statuses["passed"],
                "n_failed": statuses["failed"],
                "n_skipped": statuses["skipped"],
                "dominant_failure_category": _mode(c for c in failed if c),
                "n_order_dependent": sum(s.order_dependent for s in subtests.values()),
                "n_not_compiled": len(all_subtests) - len(subtests),
            }
        )
    return _typed(OUTCOMES, rows)


@dataclass(frozen=True)
class SubtestLatency:
    mean: float
    median: float
    spread: float


def _subtest_latency(values: list[float]) -> SubtestLatency:
    array = np.asarray(values, dtype=float)
    median = float(np.median(array))
    q75, q25 = np.percentile(array, [75, 25])
    spread = float((q75 - q25) / median) if median > 0 else 0.0
    return SubtestLatency(float(array.mean()), median, spread)


def _function_latency(latencies: list[SubtestLatency]) -> tuple[float, float, float]:
    return (
        float(np.mean([s.mean for s in latencies])),
        float(np.median([s.median for s in latencies])),
        float(np.median([s.spread for s in latencies])),
    )


def compute_latencies(
    groups: dict[tuple, dict[tuple[str, str], Subtest]], repeats: Mapping[str, int]
) -> pd.DataFrame:
    usable: dict[tuple, dict[tuple[str, str], SubtestLatency]] = {}
    for group, subtests in groups.items():
        kept = {
            key: _subtest_latency(s.pooled())
            for key, s in subtests.items()
            if not s.not_compiled and s.has_passing_result() and s.timed_in_every_run(repeats)
        }
        if kept:
            usable[group] = kept
    rows = []
    scope_index = [GROUP.index(c) for c in PAIR_SCOPE]
    by_scope: dict[tuple, list[tuple]] = defaultdict(list)
    for group in sorted(usable):
        by_scope[tuple(group[i] for i in scope_index)].append(group)
        latency, median, spread = _function_latency(list(usable[group].values()))
        rows.append(_latency_row(group, None, len(usable[group]), latency, median, spread, None))
    for members in by_scope.values():
        for group in members:
            for reference in members:
                if reference == group:
                    continue
                common = sorted(set(usable[group]) & set(usable[reference]))
                if not common:
                    continue
                latency, median, spread = _function_latency([usable[group][k] for k in common])
                ref_latency, _, _ = _function_latency([usable[reference][k] for k in common])
                rows.append(_latency_row(group, reference, len(common), latency, median, spread, ref_latency))
    return _typed(LATENCIES, rows)


def _latency_row(
    group: tuple,
    reference: tuple | None,
    n: int,
    latency: float,
    median: float,
    spread: float,
    reference_latency: float | None,
) -> dict[str, Any]:
    named = dict(zip(GROUP, group))
    ratio = None
    if reference_latency is not None and reference_latency > 0:
        ratio = latency / reference_latency
    return {
        **{
            k: named[k]
            for k in (
                "source",
                "framework",
                "framework_version",
                "function",
                "mode",
                "device",
                "device_model",
            )
        },
        "reference_device": None if reference is None else reference[GROUP.index("device")],
        "reference_device_model": None if reference is None else reference[GROUP.index("device_model")],
        "n_subtests": n,
        "latency_ms": latency,
        "median_ms": median,
        "spread": spread,
        "reference_latency_ms": reference_latency,
        "ratio": ratio,
    }


def _typed(schema: pa.Schema, rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows as a frame with the contract's columns and Arrow types (as tableio reads them back)."""
    table = pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table()
    return table.to_pandas(types_mapper=pd.ArrowDtype)


UNAVAILABLE_ERROR = "FunctionUnavailable"


def _unavailable_from_results(results: pd.DataFrame) -> set[tuple]:
    """Groups whose every row is skipped with error_type FunctionUnavailable."""
    verdict: dict[tuple, bool] = {}
    columns = {name: _values(results[name]) for name in (*GROUP, "outcome", "error_type")}
    for i in range(len(results)):
        group = tuple(columns[name][i] for name in GROUP)
        marked = columns["outcome"][i] == "skipped" and columns["error_type"][i] == UNAVAILABLE_ERROR
        verdict[group] = verdict.get(group, True) and marked
    return {group for group, all_marked in verdict.items() if all_marked}


def _version_at_least(version: str, since: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) >= Version(since)
    except InvalidVersion:
        return False


def _removed_groups(cases: pd.DataFrame, runs: pd.DataFrame) -> set[tuple]:
    """Function groups of every run group in which a removed case's function no longer exists."""
    removed = [
        (framework, function, since)
        for framework, function, status, since in zip(
            _values(cases["framework"]),
            _values(cases["function"]),
            _values(cases["status"]),
            _values(cases["removed_since"]),
        )
        if status == "removed" and since
    ]
    run_columns = ("source", "framework", "framework_version", "device", "device_model", "mode")
    run_groups = set(zip(*(_values(runs[c]) for c in run_columns))) if len(runs) else set()
    found = set()
    for source, framework, version, device, device_model, mode in run_groups:
        for case_framework, function, since in removed:
            if case_framework == framework and _version_at_least(version, since):
                found.add((source, framework, version, function, device, device_model, mode))
    return found


SETTING = ("source", "framework", "framework_version", "device", "device_model", "mode")


def supersede(results: pd.DataFrame, runs: pd.DataFrame | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(results to pool, superseded runs). Per setting and case, the newest run that ran the case
    (runs.started_at) fixes the harness digest and the case's digest; rows of that case from runs
    made with another harness or other case files are superseded, and so are all rows of runs
    without digests (made before runs recorded them) in a setting where a run has them. Settings
    where no run has digests (the study's) are pooled as they are. The superseded table has one
    row per run: run_id, setting, superseded rows, reason, the run that superseded it."""
    columns = ["run_id", *SETTING, "n_rows", "reason", "superseded_by"]
    if runs is None or not len(runs) or "harness_digest" not in runs or not len(results):
        return results, pd.DataFrame(columns=columns)
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
        }
    run_ids, case_ids = _values(results["run_id"]), _values(results["case_id"])
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
    keep, dropped = [], Counter()
    reasons: dict[str, tuple[str, str]] = {}
    for run_id, case_id in zip(run_ids, case_ids):
        fact = facts.get(run_id)
        if fact is None or fact["setting"] not in settings_with_digests:
            keep.append(True)
            continue
        best = newest.get((fact["setting"], case_id))
        if best is None or best[1] == run_id:
            keep.append(True)
            continue
        if fact["harness"] is None:
            reason = "made before runs recorded harness and case digests"
        elif fact["harness"] != best[2]:
            reason = "older harness"
        elif fact["cases"].get(case_id) != best[3]:
            reason = "older case files"
        else:
            keep.append(True)
            continue
        keep.append(False)
        dropped[run_id] += 1
        reasons.setdefault(run_id, (reason, best[1]))
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
    return results[keep].reset_index(drop=True), superseded


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


def aggregate(
    results: pd.DataFrame, runs: pd.DataFrame | None = None, cases: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(outcomes, latencies) from results rows (any number of shards), their runs rows and,
    optionally, the cases table (for functions removed from a framework version). Rows of
    superseded runs are left out first (`supersede`)."""
    results, _ = supersede(results, runs)
    groups = collect_subtests(results)
    unavailable = _unavailable_from_results(results)
    if cases is not None and runs is not None and len(cases):
        for group in _removed_groups(cases, runs):
            statuses = Counter(s.status() for s in groups.get(group, {}).values())
            if function_outcome(statuses) == "unknown":
                groups.setdefault(group, {})
                unavailable.add(group)
    return compute_outcomes(groups, unavailable), compute_latencies(groups, _repeats(runs, results))


def _table_file(path: Path, table: str) -> Path:
    path = Path(path)
    return path if path.suffix == ".parquet" else path / f"{table}.parquet"


def run_aggregate(
    results_dir: Path,
    runs_dir: Path,
    outcomes_out: Path,
    latencies_out: Path,
    *,
    cases_path: Path | None = None,
    quarantine: bool = False,
) -> tuple[Path, Path]:
    """The pipeline stage: read every results shard and runs row (and the cases table where it
    exists), aggregate, write both tables. `quarantine` leaves bad shards out (tableio's rule).
    An output without a .parquet suffix is taken as a folder (<folder>/<table>.parquet)."""
    from portability_data.tables.tableio import read_shards, read_table, write_table

    shards = read_shards("results", [Path(results_dir)], quarantine=quarantine)
    for bad in sorted(shards.bad):
        log.warning("left out bad shard %s", bad)
    results = shards.frame
    runs = read_table("runs", Path(runs_dir))
    cases = read_table("cases", Path(cases_path)) if cases_path and Path(cases_path).exists() else None
    outcomes, latencies = aggregate(results, runs, cases)
    return (
        write_table("outcomes", outcomes, _table_file(outcomes_out, "outcomes")),
        write_table("latencies", latencies, _table_file(latencies_out, "latencies")),
    )


# --------------------------------------------------------------------------- summary tables

KNOWN_OUTCOMES = ("success", "partial_failure", "complete_failure")


def plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Arrow-backed columns as plain numpy/object columns, so summaries work on either kind."""
    out = frame.copy()
    for column in out.columns:
        if isinstance(out[column].dtype, pd.ArrowDtype):
            out[column] = pd.Series(_values(out[column]), index=out.index, dtype=object)
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in out[column].dropna()):
                out[column] = pd.to_numeric(out[column])
    return out


def _shares(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Functions per outcome and the share (%) of each known outcome among known outcomes."""
    if frame.empty:
        return pd.DataFrame(
            columns=[
                *keys,
                "n_functions",
                "n_known",
                *[f"pct_{o}" for o in KNOWN_OUTCOMES],
                "n_unknown",
                "n_unavailable",
                "n_not_compiled",
            ]
        )
    counts = frame.groupby([*keys, "outcome"]).size().unstack("outcome", fill_value=0)
    for outcome in (*KNOWN_OUTCOMES, "unknown", "unavailable", "not_compiled"):
        if outcome not in counts.columns:
            counts[outcome] = 0
    known = counts[list(KNOWN_OUTCOMES)].sum(axis=1)
    table = pd.DataFrame({"n_functions": counts.sum(axis=1), "n_known": known})
    for outcome in KNOWN_OUTCOMES:
        table[f"pct_{outcome}"] = (100.0 * counts[outcome] / known.where(known > 0)).round(1)
    table["n_unknown"] = counts["unknown"]
    table["n_unavailable"] = counts["unavailable"]
    table["n_not_compiled"] = counts["not_compiled"]
    return table.reset_index()


def _oriented_pairs(latencies: pd.DataFrame) -> pd.DataFrame:
    """Paired latency rows across device types, the reference being the earlier of REFERENCE_ORDER."""
    paired = latencies[latencies["reference_device"].notna()]
    rank = {d: i for i, d in enumerate(REFERENCE_ORDER)}
    keep = [
        rank.get(ref, 99) < rank.get(dev, 99)
        for dev, ref in zip(paired["device"], paired["reference_device"])
    ]
    return paired[keep]


def ratio_shares(pairs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys``: how many functions are >10x slower or faster on the device, and the median
    ratio (the study's slowdown summary; the report draws its figures from it)."""
    columns = [
        *keys,
        "n_functions",
        "pct_over_10x_slower",
        "pct_over_10x_faster",
        "pct_faster_on_device",
        "pct_faster_on_reference",
        "median_ratio",
    ]
    pairs = pairs[pairs["ratio"].notna()]
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    grouped = pairs.groupby(keys)["ratio"]
    table = pd.DataFrame(
        {
            "n_functions": grouped.size(),
            "pct_over_10x_slower": grouped.apply(lambda r: 100.0 * (r > SLOWDOWN_FACTOR).mean()).round(1),
            "pct_over_10x_faster": grouped.apply(lambda r: 100.0 * (r < 1 / SLOWDOWN_FACTOR).mean()).round(1),
            "pct_faster_on_device": grouped.apply(lambda r: 100.0 * (r < 1).mean()).round(1),
            "pct_faster_on_reference": grouped.apply(lambda r: 100.0 * (r > 1).mean()).round(1),
            "median_ratio": grouped.median(),
        }
    ).reset_index()
    return table[columns]


# A latency pair's setting: the measured device and the one it is compared with.
PAIR_KEYS = [
    "source",
    "framework",
    "framework_version",
    "mode",
    "device",
    "device_model",
    "reference_device",
    "reference_device_model",
]


def summary_tables(
    outcomes: pd.DataFrame, latencies: pd.DataFrame, samples: pd.DataFrame | None = None
) -> dict[str, pd.DataFrame]:
    """The study's headline tables from any outcomes/latencies:
    - outcome_shares (Table 1): functions per outcome per framework and device (shares among
      functions with a known outcome; unknown and unavailable counted apart);
    - top20_vs_all (Table 4): the same for the top-20 bucket of `samples` vs all (only with samples);
    - hardware_generations (Table 3): outcome shares and latency ratios between models of one
      device type (A100 vs T4, TPU v2-8 vs TPU v3-8, any other such pair);
    - latency_by_function: per function and device pair (reference per REFERENCE_ORDER: TPU / GPU),
      latency, reference latency and ratio, slowest first;
    - slowdown_shares: per framework and device pair, share of functions more than 10x slower on
      the device, more than 10x faster, faster on each device, and the median ratio.
    """
    outcomes, latencies = plain_frame(outcomes), plain_frame(latencies)
    device_keys = ["source", "framework", "framework_version", "device", "device_model", "mode"]
    tables: dict[str, pd.DataFrame] = {"outcome_shares": _shares(outcomes, device_keys)}

    if samples is not None and len(samples):
        samples = plain_frame(samples)
        top20 = set(
            zip(
                samples.loc[samples["bucket"] == "top20", "framework"],
                samples.loc[samples["bucket"] == "top20", "function"],
            )
        )
        sampled = set(zip(samples["framework"], samples["function"]))
        in_sample = outcomes[[pair in sampled for pair in zip(outcomes["framework"], outcomes["function"])]]
        is_top = [pair in top20 for pair in zip(in_sample["framework"], in_sample["function"])]
        both = pd.concat([in_sample[is_top].assign(subset="top20"), in_sample.assign(subset="all")])
        tables["top20_vs_all"] = _shares(both, [*device_keys, "subset"])

    pair_keys = PAIR_KEYS
    paired = latencies[latencies["reference_device"].notna()] if len(latencies) else latencies
    same_type = paired[paired["device"] == paired["reference_device"]] if len(paired) else paired
    generations = ratio_shares(same_type, pair_keys) if len(same_type) else pd.DataFrame()
    models = set(same_type["device_model"]) if len(same_type) else set()
    tables["hardware_generations"] = generations
    tables["hardware_generation_outcomes"] = _shares(
        outcomes[outcomes["device_model"].isin(models)] if len(outcomes) else outcomes, device_keys
    )

    oriented = _oriented_pairs(latencies) if len(latencies) else latencies
    by_function = (
        oriented[
            [
                *pair_keys[:3],
                "function",
                *pair_keys[3:],
                "n_subtests",
                "latency_ms",
                "reference_latency_ms",
                "ratio",
            ]
        ]
        if len(oriented)
        else pd.DataFrame()
    )
    if len(by_function):
        order = ["framework", "device_model", "reference_device_model", "ratio"]
        by_function = by_function.sort_values(order, ascending=[True, True, True, False])
        by_function = by_function.reset_index(drop=True)
    tables["latency_by_function"] = by_function
    tables["slowdown_shares"] = ratio_shares(oriented, pair_keys) if len(oriented) else pd.DataFrame()
    return tables


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|")


def to_markdown(tables: Mapping[str, pd.DataFrame], max_rows: int | None = None) -> str:
    """Every table as a Markdown section (## name, then a pipe table); empty tables say so."""
    parts = []
    for name, frame in tables.items():
        parts.append(f"## {name}\n")
        if frame is None or frame.empty:
            parts.append("(no rows)\n")
            continue
        shown = frame if max_rows is None else frame.head(max_rows)
        header = "| " + " | ".join(str(c) for c in shown.columns) + " |"
        rule = "|" + "|".join("---" for _ in shown.columns) + "|"
        body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in shown.itertuples(index=False)]
        parts.append("\n".join([header, rule, *body]) + "\n")
        if max_rows is not None and len(frame) > max_rows:
            parts.append(f"({len(frame) - max_rows} more rows)\n")
    return "\n".join(parts)
