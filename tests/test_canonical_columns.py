"""cases and support_matrix carry each function's canonical name from the api table (issue 60,
schema 12): readers join on the column instead of mapping names themselves."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from portability_data.pipeline.support_matrix import support_matrix
from portability_data.tables.tableio import read_table, write_table
from tests.test_census_torch_numpy import census_row


def api_rows() -> pd.DataFrame:
    """torch.absolute is torch.abs under another name (the same object)."""
    return pd.DataFrame(
        [
            {
                "framework": "torch",
                "qualified_name": "torch.abs",
                "canonical_name": "torch.abs",
                "alias": None,
            },
            {
                "framework": "torch",
                "qualified_name": "torch.absolute",
                "canonical_name": "torch.abs",
                "alias": "same_object",
            },
        ]
    )


def test_the_support_matrix_names_each_function_canonically(tmp_path: Path) -> None:
    aliased = {
        **census_row("torch.census.opinfo.absolute", "absolute", "float32", "passed"),
        "function": "torch.absolute",
    }
    unknown = {
        **census_row("torch.census.opinfo.made_up", "made_up", "float32", "passed"),
        "function": "torch.made_up",
    }
    results = pd.DataFrame(
        [census_row("torch.census.opinfo.abs", "abs", "float32", "passed"), aliased, unknown]
    )
    matrix = support_matrix(results, None, None, api=api_rows()).set_index("entry")
    assert matrix.loc["abs", "canonical_name"] == "torch.abs"
    assert matrix.loc["absolute", "canonical_name"] == "torch.abs"  # the alias, under its function
    assert matrix.loc["made_up", "canonical_name"] == "torch.made_up"  # not listed: its own name
    without = support_matrix(results, None, None).set_index("entry")  # no api table: each name its own
    assert without.loc["absolute", "canonical_name"] == "torch.absolute"
    write_table("support_matrix", matrix.reset_index(), tmp_path / "matrix.parquet")
    assert list(read_table("support_matrix", tmp_path / "matrix.parquet")["canonical_name"]) == [
        "torch.abs",
        "torch.abs",
        "torch.made_up",
    ]
