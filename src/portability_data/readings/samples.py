"""The study's frequency buckets (docs/METHOD.md section 3): the `sample` stage draws from them and
the report places every measured function in them, by the same cuts.
"""

from __future__ import annotations

import numpy as np


def decile_buckets(frequencies: np.ndarray, buckets: int) -> list[tuple[str, float, float]]:
    """(bucket label, lower cut exclusive, upper cut inclusive) per bucket; shared buckets repeat the
    previous bucket's bounds."""
    cuts = np.percentile(frequencies, [100 * (i + 1) / buckets for i in range(buckets)])
    bounds: list[tuple[str, float, float]] = []
    lower = 0.0
    for i, cut in enumerate(cuts):
        label = str(round(100 * (i + 1) / buckets))
        if i > 0 and cut == cuts[i - 1]:
            bounds.append((label, bounds[-1][1], bounds[-1][2]))  # shares the previous bucket
        else:
            bounds.append((label, lower, float(cut)))
        lower = float(cut)
    return bounds
