"""The study's published numbers beside ours from its raw data (table `reproduction`).

For every printed value (table `published`) ours comes from our aggregation of the study's raw data
(source mince2023: outcomes, latencies, and the results rows for evidence), over the study's
sample (samples mince2023, which also maps the printed names to qualified names). Equal means
equal at the printed precision; every difference gets one reason, read from the data:

- rounded_before_dividing: a printed ratio is the ratio of the printed (rounded) latencies: ours
  rounded to the printed decimals before dividing gives the printed ratio;
- no_failure_report: no report covers the machine, so every row of that device is `unknown`;
- harness_failure_only: functions whose every counted subtest failed with the study's own harness
  error (counted neither way by our rules) make up the difference;
- undetermined_test_file: the study counted functions our sample table does not hold: test files
  timed in the raw data whose place in the sample is undetermined can make up the difference;
- hand_curated_outcome: the same functions, classified differently: the study annotated outcomes by
  hand, our rules read the reports; the evidence lists our classification with its subtests;
- not_printed / not_timed_on_both: the printed latency tables leave out a function we time on both
  devices, or print one we cannot pair;
- name_not_matched: no sampled function has the printed name or spelling;
- unexplained: none of the above fits (the evidence shows both sides).

Comparisons key on the study's keying (qualified function, `subtest`), never on results.test_id.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.pipeline.aggregate import collect_subtests, plain_frame
from portability_data.tables.contracts import canonical_name

STUDY = "mince2023"
MODE = "eager"
CLASSES = ("success", "partial_failure", "complete_failure")
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


# --------------------------------------------------------------------------- printed precision


def _decimal(value: float) -> Decimal:
    """The float as the decimal it prints as (shortest repr): 2.675 is 2.675, not 2.67499..."""
    return Decimal(repr(float(value)))


def equal_at_precision(
    ours: float | None, printed_text: str, decimals: int, relation: str = "equals"
) -> bool:
    """Ours equals the printed value at its precision: within half a unit of the last printed digit.
    At an exact tie both roundings are accepted (1.25 may print as 1.3 half-up or 1.2 half-even, as
    Python's round and format do); a bound ('at most') holds when ours rounds to at most it."""
    if ours is None or not math.isfinite(ours):
        return False
    mine, printed = _decimal(ours), Decimal(printed_text)
    half = Decimal(5).scaleb(-(decimals + 1))
    if relation == "at_most":
        return mine <= printed + half
    return abs(mine - printed) <= half


def round_printed(ours: float | None, decimals: int, printed_text: str | None = None) -> str | None:
    """Ours at the printed precision (half-up; at a tie, the rounding that gives the printed text)."""
    if ours is None or not math.isfinite(ours):
        return None
    unit = Decimal(1).scaleb(-decimals)
    up = _decimal(ours).quantize(unit, rounding=ROUND_HALF_UP)
    even = _decimal(ours).quantize(unit, rounding=ROUND_HALF_EVEN)
    if printed_text is not None and even != up and even == Decimal(printed_text).quantize(unit):
        return format(even, "f")
    return format(up, "f")


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
    failing = results[results["outcome"].isin(["failed", "error", "timeout", "crashed", "memory"])]
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


def _names(functions: Iterable[str], limit: int = LISTED) -> str:
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


# --------------------------------------------------------------------------- one value


@dataclass
class Ours:
    value: float | None
    derivation: str
    function: str | None = None
    reason: str | None = None  # why, if it differs
    evidence: str | None = None


def _printed_n(published: pd.DataFrame, framework: str, model: str) -> int | None:
    rows = published[
        (published["published_table"] == "outcome_counts")
        & (published["quantity"] == "n_functions")
        & (published["framework"] == framework)
        & (published["device_model"] == model)
    ]
    return int(rows["value"].iloc[0]) if len(rows) else None


def _printed_row_sum(published: pd.DataFrame, framework: str, model: str) -> tuple[int, int] | None:
    rows = published[
        (published["published_table"] == "outcome_counts")
        & (published["framework"] == framework)
        & (published["device_model"] == model)
    ]
    values = dict(zip(rows["quantity"], rows["value"]))
    if "n_functions" not in values or not all(c in values for c in CLASSES):
        return None
    return int(sum(values[c] for c in CLASSES)), int(values["n_functions"])


def latency_value(study: Study, row: Any) -> Ours:
    """A printed latency or ratio: the paired latencies row of the function (same subtests)."""
    framework, model, reference = row.framework, row.device_model, row.reference_device_model
    function = study.function_for(framework, row.printed_name)
    if function is None:
        return Ours(
            None,
            "latencies: no function matched",
            None,
            "name_not_matched",
            f"no sampled {framework} function of sample {STUDY} is named or spelled {row.printed_name!r}",
        )
    pair = study.pairs.get((framework, function, model, reference))
    if pair is None:
        sides = "; ".join(study.describe(framework, m, function, True) for m in (model, reference))
        timed = {
            m: len(study.rows[(framework, m, function)].timed)
            for m in (model, reference)
            if (framework, m, function) in study.rows
        }
        return Ours(
            None,
            f"latencies: no {model} vs {reference} row for {function}",
            function,
            "not_timed_on_both",
            f"no subtest of {function} passed with timings on both {model} and {reference} "
            f"(subtests timed: {timed}); {sides}",
        )
    derivation = f"latencies: {model} vs {reference}, {pair.n_subtests} common subtest(s)"
    if row.quantity == "ratio":
        ours = Ours(pair.ratio, derivation + ", ratio", function)
        if not equal_at_precision(pair.ratio, row.value_text, row.decimals):
            rounded = [
                float(round_printed(v, row.decimals) or "nan")
                for v in (pair.latency_ms, pair.reference_latency_ms)
            ]
            again = rounded[0] / rounded[1] if rounded[1] else math.nan
            if equal_at_precision(again, row.value_text, row.decimals):
                ours.reason = "rounded_before_dividing"
                ours.evidence = (
                    f"ours {pair.ratio:.6g} from unrounded latencies; {rounded[0]:g} / {rounded[1]:g} "
                    f"(ours at the printed {row.decimals} decimals) = {again:.6g}, "
                    f"printed as {row.value_text}"
                )
            else:
                ours.reason, ours.evidence = (
                    "unexplained",
                    (
                        f"ours {pair.ratio:.6g}; from our latencies rounded first {again:.6g}; "
                        f"printed {row.value_text}"
                    ),
                )
        return ours
    ours = Ours(pair.latency_ms, derivation, function)
    if not equal_at_precision(pair.latency_ms, row.value_text, row.decimals):
        ours.reason, ours.evidence = (
            "unexplained",
            (
                f"ours {pair.latency_ms:.6g} ms over {pair.n_subtests} subtest(s); printed {row.value_text}; "
                + study.describe(framework, model, function, True)
            ),
        )
    return ours


def count_value(study: Study, row: Any) -> Ours:
    """A Table 8 count: sampled functions per outcome on the machine (n: with an outcome row)."""
    setting = study.setting(row.framework, row.device_model)
    quantity = row.quantity
    derivation = f"outcomes: sampled {row.framework} functions on {row.device_model}" + (
        "" if quantity == "n_functions" else f" with outcome {quantity}"
    )
    if quantity == "n_functions":
        ours = Ours(float(len(setting.outcome)), derivation)
    elif not setting.reported:
        return Ours(None, derivation, None, "no_failure_report", study.no_report(setting))
    else:
        ours = Ours(float(setting.count(quantity)), derivation)
    if equal_at_precision(ours.value, row.value_text, row.decimals):
        return ours
    gap = int(row.value) - int(ours.value or 0)
    printed_n = _printed_n(study.data.published, row.framework, row.device_model) or 0
    missing = printed_n - len(setting.outcome)
    unknown = setting.of("unknown")
    if quantity == "n_functions":
        ours.reason, ours.evidence = _extras_or_unexplained(setting, gap, gap)
        return ours
    extras_here = setting.of(quantity, extras=True)
    if unknown and 0 < gap <= len(unknown):
        ours.reason, ours.evidence = study.unknown_evidence(setting)
    elif 0 < gap <= min(missing, len(extras_here)):
        ours.reason, ours.evidence = _extras_or_unexplained(setting, gap, missing)
    else:
        ours.reason, ours.evidence = "hand_curated_outcome", _curated(study, setting, quantity)
    return ours


def _extras_or_unexplained(setting: Setting, gap: int, missing: int) -> tuple[str, str]:
    """undetermined_test_file where functions outside the sample can make up the gap, with them listed."""
    if setting.extras and 0 < gap <= len(setting.extras) and missing > 0:
        extras = "; ".join(f"{f} ({o})" for f, o in sorted(setting.extras.items()))
        return "undetermined_test_file", (
            f"the study counted {missing} more {setting.framework} function(s) than sample {STUDY} holds "
            f"({len(setting.outcome)}); {len(setting.extras)} test file(s) timed in the raw data are not in "
            f"the sample, ours on {setting.model}: {extras}"
        )
    return (
        "unexplained",
        f"ours {len(setting.outcome)} sampled functions with an outcome; printed differs by {gap}",
    )


def _curated(study: Study, setting: Setting, quantity: str) -> str:
    """Our classification of the functions in question, with the subtests behind it."""
    ours = setting.of(quantity)
    if quantity == "success":
        others = [f for f in setting.outcome if setting.outcome[f] in ("partial_failure", "complete_failure")]
        text = (
            f"ours {len(ours)} success on {setting.model}; the {len(others)} that fail partly or completely: "
            + _names(others)
        )
    else:
        text = f"ours {len(ours)} {quantity} on {setting.model}: " + "; ".join(
            study.describe(setting.framework, setting.model, f) for f in ours[:LISTED]
        )
    total = _printed_row_sum(study.data.published, setting.framework, setting.model)
    if total and total[0] != total[1]:
        text += f" (the printed row sums to {total[0]}, not its n = {total[1]})"
    return text


def share_value(study: Study, row: Any) -> Ours:
    """A printed share of failing (or completely failing) functions among those of known outcome."""
    setting = study.setting(row.framework, row.device_model)
    classes = ("complete_failure",) if row.quantity == "pct_complete_failure" else CLASSES[1:]
    derivation = (
        f"outcomes: sampled {row.framework} functions on {row.device_model}, "
        f"{' + '.join(classes)} / functions of known outcome x 100"
    )
    if not setting.reported:
        return Ours(None, derivation, None, "no_failure_report", study.no_report(setting))
    if setting.known == 0:
        return Ours(None, derivation, None, *study.unknown_evidence(setting))
    failing = sum(setting.count(c) for c in classes)
    ours = Ours(100.0 * failing / setting.known, derivation)
    if equal_at_precision(ours.value, row.value_text, row.decimals):
        return ours
    printed_n = _printed_n(study.data.published, row.framework, row.device_model) or setting.known
    implied = round(row.value * printed_n / 100)
    said = (
        f"ours {failing} of {setting.known} = {ours.value:.2f}%; printed {row.value_text}% = "
        f"{implied} of {printed_n} (Table 8 n)"
    )
    if setting.of("unknown"):
        reason, evidence = study.unknown_evidence(setting)
        ours.reason, ours.evidence = reason, f"{said}; {evidence}"
    elif printed_n != setting.known and implied == failing and setting.extras:
        _, evidence = _extras_or_unexplained(setting, printed_n - setting.known, printed_n - setting.known)
        ours.reason, ours.evidence = "undetermined_test_file", f"{said}; {evidence}"
    else:
        listed = "; ".join(
            study.describe(setting.framework, setting.model, f)
            for c in classes
            for f in setting.of(c)[:LISTED]
        )
        ours.reason, ours.evidence = "hand_curated_outcome", f"{said}; ours failing: {listed}"
    return ours


def timed_value(study: Study, row: Any) -> Ours:
    """Functions timed on both devices (Figure 1), or the share of them slower on the device."""
    framework, model, reference = row.framework, row.device_model, row.reference_device_model
    sample = study.sample[framework]
    pairs = {f: p for (fw, f, m, r), p in study.pairs.items() if (fw, m, r) == (framework, model, reference)}
    ours_set = {f for f in pairs if f in sample}
    outside = sorted(set(pairs) - sample)
    printed = study.printed.get(framework, set())
    if row.quantity == "n_timed_on_both":
        ours = Ours(
            float(len(ours_set)),
            f"latencies: sampled {framework} functions with a {model} vs {reference} row",
        )
    else:
        slower = sum(pairs[f].ratio > 1 for f in ours_set)
        value = 100.0 * slower / len(ours_set) if ours_set else None
        ours = Ours(
            value,
            f"latencies: sampled {framework} functions with ratio {model} / {reference} > 1, "
            f"of those timed on both x 100",
        )
    if equal_at_precision(ours.value, row.value_text, row.decimals):
        return ours
    extra, missing = sorted(ours_set - printed), sorted(printed - ours_set)
    notes = []
    if extra:
        notes.append(
            "timed on both by us but not printed: "
            + "; ".join(study.describe(framework, m, f, True) for f in extra for m in (model, reference))
        )
    if missing:
        notes.append("printed but not timed on both by us: " + _names(missing))
    if outside:
        notes.append("also timed on both, outside the sample: " + _names(outside))
    if row.quantity == "pct_slower_on_device" and ours_set:
        kept = [f for f in ours_set if f in printed]
        share = 100.0 * sum(pairs[f].ratio > 1 for f in kept) / len(kept) if kept else math.nan
        notes.append(f"over the printed functions only: {share:.2f}%")
    ours.reason = (
        "not_printed"
        if len(extra) >= len(missing) and extra
        else ("not_timed_on_both" if missing else "unexplained")
    )
    ours.evidence = f"ours {round_printed(ours.value, row.decimals)}; printed {row.value_text}; " + "; ".join(
        notes
    )
    return ours


def generation_value(study: Study, row: Any) -> Ours:
    """The largest difference in outcome shares between two models of one device type (Table 3)."""
    one = study.setting(row.framework, row.device_model)
    other = study.setting(row.framework, row.reference_device_model)
    derivation = (
        f"outcomes: largest |share({row.device_model}) - share({row.reference_device_model})| over success, "
        "partial and complete failure, sampled functions of known outcome"
    )
    for setting in (one, other):
        if not setting.reported:
            return Ours(None, derivation, None, "no_failure_report", study.no_report(setting))
        if setting.known == 0:
            return Ours(None, derivation, None, *study.unknown_evidence(setting))
    shares = [abs(100.0 * one.count(c) / one.known - 100.0 * other.count(c) / other.known) for c in CLASSES]
    ours = Ours(max(shares), derivation)
    if not equal_at_precision(ours.value, row.value_text, row.decimals, row.relation):
        ours.reason, ours.evidence = (
            "unexplained",
            f"ours {max(shares):.2f}; printed at most {row.value_text}",
        )
    return ours


def value_for(study: Study, row: Any) -> Ours:
    if row.published_table == "per_function_latency":
        return latency_value(study, row)
    if row.published_table == "outcome_counts":
        return count_value(study, row)
    if row.quantity in ("pct_failing", "pct_complete_failure"):
        return share_value(study, row)
    if row.quantity in ("n_timed_on_both", "pct_slower_on_device"):
        return timed_value(study, row)
    if row.quantity == "max_outcome_share_difference_pct":
        return generation_value(study, row)
    return Ours(None, "no derivation for this quantity", None, "unexplained", f"quantity {row.quantity}")


# --------------------------------------------------------------------------- the table


def reproduce(data: StudyData) -> pd.DataFrame:
    """One row per published value: printed, ours, equal at the printed precision, and why not."""
    study = Study(data)
    rows = []
    for row in data.published.itertuples(index=False):
        ours = value_for(study, row)
        equal = equal_at_precision(ours.value, row.value_text, int(row.decimals), row.relation)
        value = None if ours.value is None or not math.isfinite(ours.value) else float(ours.value)
        rows.append(
            {
                "value_id": row.value_id,
                "source": STUDY,
                **{
                    k: _none(getattr(row, k))
                    for k in (
                        "published_table",
                        "location",
                        "framework",
                        "device",
                        "device_model",
                        "reference_device",
                        "reference_device_model",
                        "printed_name",
                    )
                },
                "function": ours.function,
                "quantity": row.quantity,
                "relation": row.relation,
                "unit": row.unit,
                "printed_text": row.value_text,
                "printed_value": float(row.value),
                "decimals": int(row.decimals),
                "ours": value,
                "ours_text": round_printed(value, int(row.decimals), row.value_text),
                "equal": bool(equal),
                "reason": None if equal else (ours.reason or "unexplained"),
                "derivation": ours.derivation,
                "evidence": None if equal else (ours.evidence or f"ours {value}; printed {row.value_text}"),
            }
        )
    return pd.DataFrame(rows)


def _none(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def run_reproduce(
    published: Path, outcomes: Path, latencies: Path, results: Path, samples: Path, out: Path
) -> Path:
    """The `reproduce` stage: write data/reproduction/reproduction.parquet."""
    from portability_data.tables.tableio import write_table

    frame = reproduce(load_study_data(published, outcomes, latencies, results, samples))
    return write_table("reproduction", frame, Path(out))


# --------------------------------------------------------------------------- summaries (report, tests)


def equal_counts(reproduction: pd.DataFrame, by: tuple[str, ...] = ("published_table",)) -> pd.DataFrame:
    """Equal / total per published table (or finer): what the floor test guards."""
    frame = plain_frame(reproduction)
    if frame.empty:
        return pd.DataFrame(columns=[*by, "equal", "total"])
    grouped = frame.groupby(list(by))["equal"]
    return pd.DataFrame({"equal": grouped.sum().astype(int), "total": grouped.size()}).reset_index()


def table8(reproduction: pd.DataFrame) -> pd.DataFrame:
    """Appendix Table 8 beside ours, per framework and device."""
    frame = plain_frame(reproduction)
    frame = frame[frame["published_table"] == "outcome_counts"]
    rows = []
    for (framework, device, model), group in frame.groupby(
        ["framework", "device", "device_model"], sort=False
    ):
        by = group.set_index("quantity")
        row: dict[str, Any] = {"framework": framework, "device": device, "device_model": model}
        for quantity in (*CLASSES, "n_functions"):
            short = quantity.replace("_failure", "").replace("n_functions", "n")
            printed, ours = by.loc[quantity, "printed_value"], by.loc[quantity, "ours"]
            row[f"printed_{short}"] = int(printed)
            row[f"ours_{short}"] = None if pd.isna(ours) else int(ours)
        row["equal"] = f"{int(group['equal'].sum())}/{len(group)}"
        row["reasons"] = ", ".join(sorted(set(group["reason"].dropna())))
        rows.append(row)
    return pd.DataFrame(rows)


def table8_functions(data: StudyData, reproduction: pd.DataFrame) -> pd.DataFrame:
    """Per framework and device where Table 8 differs, the functions our rules do not call a success
    (and those outside the sample), with the subtests behind our outcome."""
    study = Study(data)
    frame = plain_frame(reproduction)
    frame = frame[(frame["published_table"] == "outcome_counts") & ~frame["equal"].astype(bool)]
    rows = []
    for framework, model in dict.fromkeys(zip(frame["framework"], frame["device_model"])):
        setting = study.setting(framework, model)
        if not setting.reported:
            continue  # no report: every function unknown (the reason row says so)
        listed = [(f, o, True) for f, o in setting.outcome.items() if o != "success"]
        listed += [(f, o, False) for f, o in setting.extras.items()]
        for function, outcome, in_sample in sorted(listed, key=lambda t: (not t[2], t[1], t[0])):
            rows_ = study.rows.get((framework, model, function), FunctionRows())
            rows.append(
                {
                    "framework": framework,
                    "device_model": model,
                    "function": function,
                    "in_sample": in_sample,
                    "ours": outcome,
                    "passed": rows_.count("passed"),
                    "failed": rows_.count("failed"),
                    "unknown": rows_.count("unknown"),
                    "harness_only": rows_.count("harness"),
                    "printed_in_latency_tables": function in study.printed.get(framework, set()),
                    "evidence": rows_.describe(function),
                }
            )
    return pd.DataFrame(rows)


@dataclass
class ReportParts:
    """What the report shows: the text above the tables, the tables, and metrics."""

    text: str
    tables: list[tuple[str, pd.DataFrame]]
    metrics: dict[str, Any]


def report_parts(data_dir: Path) -> ReportParts | None:
    """The reproduction section's content from data_dir (None when the table is not built)."""
    from portability_data.tables.tableio import read_table

    data_dir = Path(data_dir)
    path = data_dir / "reproduction" / "reproduction.parquet"
    if not path.exists():
        return None
    reproduction = plain_frame(read_table("reproduction", path))
    counts = equal_counts(reproduction)
    finer = equal_counts(reproduction, ("published_table", "quantity"))
    reasons = (
        reproduction[~reproduction["equal"].astype(bool)]
        .groupby(["published_table", "reason"])
        .size()
        .rename("values")
        .reset_index()
    )
    tables: list[tuple[str, pd.DataFrame]] = [
        ("Equal at the printed precision, per published table", counts),
        ("Equal at the printed precision, per quantity", finer),
        ("Differences per reason", reasons),
        ("Appendix Table 8: printed vs ours (sampled functions)", table8(reproduction)),
    ]
    try:
        data = load_study_data(
            data_dir / "published",
            data_dir / "outcomes",
            data_dir / "latencies",
            data_dir / "results" / STUDY,
            data_dir / "samples" / f"{STUDY}.parquet",
        )
        tables.append(("Table 8: the functions behind the differences", table8_functions(data, reproduction)))
    except (FileNotFoundError, KeyError):
        pass
    shown = [
        "value_id",
        "framework",
        "device_model",
        "reference_device_model",
        "printed_name",
        "quantity",
        "printed_text",
        "ours_text",
        "equal",
        "reason",
        "evidence",
    ]
    differences = reproduction[~reproduction["equal"].astype(bool)]
    tables.append(
        ("Every difference, with its reason and evidence", differences[shown].reset_index(drop=True))
    )
    tables.append(("Every published value beside ours", reproduction[shown[:-2]].reset_index(drop=True)))
    summary = "; ".join(f"{r.published_table} {r.equal}/{r.total}" for r in counts.itertuples(index=False))
    text = (
        f"The study's numbers as printed (table published, source mince2023-published) beside ours from "
        f"its raw data (source mince2023, aggregated by the study's procedure, over its sample). Equal at "
        f"the printed precision: {summary}. Equal means within half a unit of the last printed digit "
        "(at an exact tie either rounding counts). Each difference has one reason read from the data: "
        "rounded_before_dividing (the printed ratio divides the printed, rounded latencies), "
        "no_failure_report (no report covers the machine: all its rows are unknown), harness_failure_only "
        "(functions whose subtests failed only with the study's own harness error), undetermined_test_file "
        "(test files timed in the raw data whose place in the sample is undetermined), hand_curated_outcome "
        "(the study classified outcomes by hand; ours reads the reports: the evidence lists our "
        "classification with its subtests), not_printed / not_timed_on_both, name_not_matched. Table 8 "
        "cannot all be re-derived: the study curated outcomes by hand, and its JAX TPU run has no report of "
        "its own (the JAX reports are one GPU file)."
    )
    metrics = {
        str(r.published_table): {"equal": int(r.equal), "total": int(r.total)}
        for r in counts.itertuples(index=False)
    }
    return ReportParts(text, tables, metrics)
