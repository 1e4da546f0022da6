"""The study as the reproduction reads it: its inputs (`StudyData`: the printed values and our
tables, only source mince2023 in eager mode), the evidence per function and machine from its results
rows (`FunctionRows`), and our aggregation organised the way its printed numbers are (`Study`,
`Setting`).

What a printed value is compared with (values.py) and the table itself (build.py) are
built on this.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from portability_data.pipeline.subtests import collect_subtests
from portability_data.readings.frames import plain_frame
from portability_data.readings.reproduction import CLASSES
from portability_data.tables.contracts import FAILING_OUTCOMES, canonical_name

STUDY = "mince2023"
MODE = "eager"
RESULT_COLUMNS = (
    "run_id",
    "source",
    "case_id",
    "framework",
    "function",
    "subtest",
    "repeat",
    "outcome",
    "failure_category",
    "error_type",
    "error_message",
    "op_latencies_ms",
    "device",
    "device_model",
    "mode",
    "framework_version",
)
LISTED = 40  # functions named in one evidence text at most


# --------------------------------------------------------------------------- inputs


@dataclass
class StudyData:
    """What the comparison reads: the printed values and our tables of the study (plain frames;
    the results rows stay Arrow-backed, they are many)."""

    published: pd.DataFrame
    outcomes: pd.DataFrame
    latencies: pd.DataFrame
    results: pd.DataFrame
    samples: pd.DataFrame


def study_data(
    published: pd.DataFrame,
    outcomes: pd.DataFrame,
    latencies: pd.DataFrame,
    results: pd.DataFrame,
    samples: pd.DataFrame,
) -> StudyData:
    """The inputs as the comparison needs them: only the study's rows (source mince2023, eager)."""

    def study(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[(frame["source"] == STUDY) & (frame["mode"] == MODE)].reset_index(drop=True)

    samples = plain_frame(samples)
    return StudyData(
        published=plain_frame(published),
        outcomes=plain_frame(study(outcomes)),
        latencies=plain_frame(study(latencies)),
        results=study(results[list(RESULT_COLUMNS)]),
        samples=samples[samples["sample_id"] == STUDY].reset_index(drop=True),
    )


def load_study_data(
    published: Path, outcomes: Path, latencies: Path, results: Path, samples: Path
) -> StudyData:
    """Read and validate the inputs (tableio), then `study_data`."""
    from portability_data.tables.tableio import read_table

    return study_data(
        read_table("published", Path(published)),
        read_table("outcomes", Path(outcomes)),
        read_table("latencies", Path(latencies)),
        read_table("results", Path(results)),
        read_table("samples", Path(samples)),
    )


# --------------------------------------------------------------------------- evidence from results


@dataclass
class FunctionRows:
    """One function on one machine, from its results rows: subtest statuses and failing errors."""

    statuses: dict[str, str] = field(default_factory=dict)  # subtest -> passed/failed/unknown/harness/skipped
    errors: dict[str, str] = field(default_factory=dict)  # failing subtest -> first error type
    timed: set[str] = field(default_factory=set)  # subtests with timings in every repeat
    harness_message: str | None = None

    def count(self, status: str) -> int:
        return sum(s == status for s in self.statuses.values())

    def describe(self, function: str, timed: bool = False) -> str:
        """'torch.addr: 11 of 12 subtests fail (RuntimeError x11), e.g. test_addr_float16'; `timed`
        adds how many have timings in every run (what the latency tables need)."""
        counted = self.count("passed") + self.count("failed") + self.count("unknown")
        harness = self.count("harness")
        if not counted and harness:
            return (
                f"{function}: every row of its {harness} subtest(s) failed with the study's harness error "
                f"({self.harness_message})"
            )
        if not counted:
            return f"{function}: no counted subtest ({self.count('skipped')} skipped)"
        text = f"{function}: {self.count('failed')} of {counted} subtests fail"
        if self.count("unknown"):
            text += f", {self.count('unknown')} unknown"
        failing = sorted(s for s, status in self.statuses.items() if status == "failed")
        if failing:
            types = Counter(self.errors.get(s) or "no error type" for s in failing)
            text += " (" + ", ".join(f"{t} x{n}" for t, n in sorted(types.items())) + f"), e.g. {failing[0]}"
        if harness:
            text += f"; {harness} more fail only with the study's harness error"
        if timed:
            text += f"; {len(self.timed)} timed in every run"
        return text


def function_rows(results: pd.DataFrame) -> dict[tuple[str, str, str], FunctionRows]:
    """(framework, device_model, function) -> FunctionRows, with the aggregate's subtest rule."""
    found: dict[tuple[str, str, str], FunctionRows] = defaultdict(FunctionRows)
    if results.empty:
        return found
    repeats = results.groupby("run_id")["repeat"].max().astype(int) + 1
    for group, subtests in collect_subtests(results).items():
        named = dict(zip(("source", "framework", "version", "function", "device", "model", "mode"), group))
        rows = found[(named["framework"], named["model"], named["function"])]
        for (_case, subtest), item in subtests.items():
            rows.statuses[subtest] = item.status()
            if item.timed_in_every_run(repeats.to_dict()):
                rows.timed.add(subtest)
    failing = results[results["outcome"].isin(FAILING_OUTCOMES)]
    for framework, model, function, subtest, category, error_type, message in zip(
        failing["framework"],
        failing["device_model"],
        failing["function"],
        failing["subtest"],
        failing["failure_category"],
        failing["error_type"],
        failing["error_message"],
    ):
        rows = found[(framework, model, function)]
        if category == "harness":
            rows.harness_message = (
                rows.harness_message or f"{error_type}: {str(message).splitlines()[0][:90]}"
            )
        elif subtest not in rows.errors:
            rows.errors[subtest] = error_type
    return found


def listed_names(functions: Iterable[str], limit: int = LISTED) -> str:
    """The functions sorted and comma-separated, at most `limit` of them (then "and N more")."""
    items = sorted(functions)
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


# --------------------------------------------------------------------------- settings


@dataclass
class Setting:
    """The sample's functions on one machine: our outcome for each, and functions outside the sample."""

    framework: str
    model: str
    outcome: dict[str, str]  # sampled function -> outcome (functions with an outcome row)
    extras: dict[str, str]  # function with an outcome row but not in the sample -> outcome
    runs: dict[str, Counter]  # run_id -> row outcomes (for "no report" evidence)

    def count(self, outcome: str) -> int:
        return sum(o == outcome for o in self.outcome.values())

    @property
    def known(self) -> int:
        return sum(self.count(c) for c in CLASSES)

    @property
    def reported(self) -> bool:
        """Some row of the machine has an outcome from a report (not every one `unknown`)."""
        return any(o != "unknown" for counts in self.runs.values() for o in counts)

    def of(self, outcome: str, extras: bool = False) -> list[str]:
        pool = self.extras if extras else self.outcome
        return sorted(f for f, o in pool.items() if o == outcome)


class Study:
    """Our aggregation of the study, organised the way its printed numbers are."""

    def __init__(self, data: StudyData) -> None:
        self.data = data
        self.sample: dict[str, set[str]] = defaultdict(set)
        self.by_name: dict[tuple[str, str], str] = {}
        for framework, function, study_name in zip(
            data.samples["framework"], data.samples["function"], data.samples["study_name"]
        ):
            self.sample[framework].add(function)
            self.by_name[(framework, canonical_name(function))] = function
            if isinstance(study_name, str):
                self.by_name[(framework, canonical_name(study_name))] = function
        self.rows = function_rows(data.results)
        self._settings: dict[tuple[str, str], Setting] = {}
        paired = data.latencies[data.latencies["reference_device_model"].notna()]
        self.pairs = {
            (r.framework, r.function, r.device_model, r.reference_device_model): r
            for r in paired.itertuples(index=False)
        }
        self.printed = self._printed_latency_functions()

    def function_for(self, framework: str, printed_name: str) -> str | None:
        name = canonical_name(printed_name.removesuffix("()"))
        return self.by_name.get((framework, name)) or self.by_name.get((framework, printed_name))

    def _printed_latency_functions(self) -> dict[str, set[str]]:
        """framework -> functions printed in the latency tables (matched to our names)."""
        printed = self.data.published
        printed = printed[printed["published_table"] == "per_function_latency"]
        found: dict[str, set[str]] = defaultdict(set)
        for framework, name in set(zip(printed["framework"], printed["printed_name"])):
            function = self.function_for(framework, name)
            if function:
                found[framework].add(function)
        return found

    def setting(self, framework: str, model: str) -> Setting:
        key = (framework, model)
        if key not in self._settings:
            out = self.data.outcomes
            out = out[(out["framework"] == framework) & (out["device_model"] == model)]
            sample = self.sample[framework]
            outcome = {f: o for f, o in zip(out["function"], out["outcome"]) if f in sample}
            extras = {f: o for f, o in zip(out["function"], out["outcome"]) if f not in sample}
            res = self.data.results
            res = res[(res["framework"] == framework) & (res["device_model"] == model)]
            runs = {run: Counter(group["outcome"]) for run, group in res.groupby("run_id")}
            self._settings[key] = Setting(framework, model, outcome, extras, runs)
        return self._settings[key]

    def describe(self, framework: str, model: str, function: str, on_model: bool = False) -> str:
        """A function's subtests on a machine; `on_model` names the machine and counts timed subtests."""
        rows = self.rows.get((framework, model, function))
        label = f"{function} on {model}" if on_model else function
        return rows.describe(label, timed=on_model) if rows else f"{label}: no results rows on {model}"

    def no_report(self, setting: Setting) -> str:
        runs = "; ".join(
            f"run {run}: {sum(c.values())} rows, " + ", ".join(f"{n} {o}" for o, n in sorted(c.items()))
            for run, c in sorted(setting.runs.items())
        )
        return (
            f"no {setting.framework} function has a known outcome on {setting.model} "
            f"({len(setting.outcome)} sampled functions, all unknown): {runs or 'no results rows'}"
        )

    def unknown_evidence(self, setting: Setting) -> tuple[str, str]:
        """(reason, evidence) for the sampled functions of unknown outcome on a machine with a report."""
        unknown = setting.of("unknown")
        harness_only = [
            f
            for f in unknown
            if (r := self.rows.get((setting.framework, setting.model, f)))
            and r.count("harness")
            and not (r.count("passed") + r.count("failed") + r.count("unknown"))
        ]
        reason = "harness_failure_only" if len(harness_only) == len(unknown) else "no_failure_report"
        described = "; ".join(self.describe(setting.framework, setting.model, f) for f in unknown[:LISTED])
        return (
            reason,
            f"{len(unknown)} sampled function(s) of unknown outcome on {setting.model}: {described}",
        )
