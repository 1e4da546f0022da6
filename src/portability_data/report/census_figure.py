"""The census at a glance: a heat map of status shares per framework x setting, for readers who
would rather look than read the per-setting table (issue 49). Kept out of census.py (module limit)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from portability_data.report.figures import png_bytes, pyplot

SETTING = ["framework", "device", "mode"]


def status_shares(summary: pd.DataFrame, statuses: tuple[str, ...]) -> pd.DataFrame:
    """% of each setting's pairs per status (and `faults`: every other status), one row per setting,
    labelled "framework device mode"; the per-setting census table is the input."""
    columns = [*statuses, "faults"]
    counts = summary.set_index(SETTING)[columns].astype(float)
    shares = counts.div(summary.set_index(SETTING)["pairs"].astype(float), axis=0) * 100
    shares.index = [" ".join(map(str, key)) for key in shares.index]
    return shares


def fig_census_status(summary: pd.DataFrame, statuses: tuple[str, ...]) -> bytes | None:
    """Heat map, settings x statuses, each cell the % of that setting's pairs; None without rows."""
    if summary is None or summary.empty:
        return None
    shares = status_shares(summary, statuses)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(1.1 * len(shares.columns) + 3, 0.4 * len(shares) + 1.4))
    ax.grid(False)
    image = ax.imshow(shares.to_numpy(), cmap="viridis", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(np.arange(len(shares.columns)), labels=list(shares.columns), rotation=30, ha="right")
    ax.set_yticks(np.arange(len(shares)), labels=list(shares.index))
    for (row, column), value in np.ndenumerate(shares.to_numpy()):
        ax.text(
            column,
            row,
            f"{value:.0f}",
            ha="center",
            va="center",
            fontsize=7,
            color="white" if value < 60 else "black",
        )
    ax.set_title("Census: % of function x dtype pairs per status, per setting")
    fig.colorbar(image, ax=ax, label="% of the setting's pairs")
    return png_bytes(fig)
