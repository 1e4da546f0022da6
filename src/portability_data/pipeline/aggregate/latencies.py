"""Latency summaries (aggregate.py's docstring, "Latencies"): per function group the mean of its
usable subtests' pooled timings, and per pair of device groups the same over their common subtests,
with the ratio between them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from portability_data.readings.frames import typed_frame
from portability_data.readings.subtests import GROUP, Subtest
from portability_data.tables.contracts import LATENCIES

PAIR_SCOPE = ("source", "framework", "framework_version", "function", "mode")


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


def _timings_of(subtest: Subtest, left_out: frozenset[str]) -> Subtest:
    """The subtest with the timings of the `left_out` runs taken away (its outcomes kept)."""
    if not left_out:
        return subtest
    return replace(subtest, ops={slot: v for slot, v in subtest.ops.items() if slot[0] not in left_out})


def compute_latencies(
    groups: dict[tuple, dict[tuple[str, str], Subtest]],
    repeats: Mapping[str, int],
    contended: frozenset[str] = frozenset(),
) -> pd.DataFrame:
    """The latencies table of pooled subtests; the timings of `contended` runs (their own measure
    says other work shared the cores: quiet.py) are left out, their outcomes are not."""
    usable: dict[tuple, dict[tuple[str, str], SubtestLatency]] = {}
    for group, subtests in groups.items():
        timed = {key: _timings_of(s, contended) for key, s in subtests.items()}
        kept = {
            key: _subtest_latency(s.pooled())
            for key, s in timed.items()
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
    return typed_frame(LATENCIES, rows)


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
