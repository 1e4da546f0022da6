"""One printed value beside ours: equality at the printed precision, and for each kind of published
value (latency or ratio, Table 8 count, share, functions timed on both, hardware generations) how
ours is derived and, where it differs, the one reason read from the data with its evidence (the
reasons are listed in build.py's docstring).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any

import pandas as pd

from portability_data.pipeline.reproduce.study import (
    LISTED,
    STUDY,
    Setting,
    Study,
    listed_names,
)
from portability_data.readings.reproduction import CLASSES

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
            + listed_names(others)
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
        notes.append("printed but not timed on both by us: " + listed_names(missing))
    if outside:
        notes.append("also timed on both, outside the sample: " + listed_names(outside))
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
