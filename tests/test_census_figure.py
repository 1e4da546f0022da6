"""The census heat map: one row per framework x setting, each cell the % of that setting's pairs in
a status, so the shares read off it are the per-setting table's counts (issue 49)."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from portability_data.report.census import KINDS
from portability_data.report.census_figure import fig_census_status, status_shares


def summary_rows() -> pd.DataFrame:
    """The per-setting table (census.status_summary's columns) for two settings: torch cpu eager
    (3 works, 1 fails) and jax cpu eager (1 works, 1 worker fault)."""
    zero = dict.fromkeys(KINDS, 0)
    return pd.DataFrame(
        [
            {
                "framework": "torch",
                "device": "cpu",
                "mode": "eager",
                "pairs": 4,
                **zero,
                "works": 3,
                "fails": 1,
                "faults": 0,
            },
            {
                "framework": "jax",
                "device": "cpu",
                "mode": "eager",
                "pairs": 2,
                **zero,
                "works": 1,
                "faults": 1,
            },
        ]
    )


def test_shares_are_each_settings_pairs_per_status() -> None:
    summary = summary_rows()
    shares = status_shares(summary, KINDS)
    assert shares.loc["torch cpu eager", "works"] == pytest.approx(75.0)
    assert shares.loc["torch cpu eager", "fails"] == pytest.approx(25.0)
    assert shares.loc["jax cpu eager", "faults"] == pytest.approx(50.0)
    assert shares.sum(axis=1).tolist() == pytest.approx([100.0, 100.0])


def test_the_heat_map_is_a_png_with_a_row_per_setting_and_none_without_rows() -> None:
    from PIL import Image

    summary = summary_rows()
    png = fig_census_status(summary, KINDS)
    assert png is not None
    with Image.open(io.BytesIO(png)) as image:
        assert image.format == "PNG" and image.size[0] > image.size[1]
    assert fig_census_status(summary.iloc[0:0], KINDS) is None
