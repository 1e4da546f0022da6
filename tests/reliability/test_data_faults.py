"""Reliability: aggregation stops on a bad shard naming it, or leaves it out with --quarantine."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from portability_data.cli import main
from portability_data.tables import contracts
from portability_data.tables.tableio import read_table, write_table
from tests.conftest import example_rows


def _aggregate(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    """`portability aggregate` on root's data/ (the CLI's own main, in this process: a fresh
    interpreter per call cost ~3 s of imports, ten calls here): its exit status and stderr."""
    capsys.readouterr()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        code = main(
            [
                "aggregate",
                "--results",
                "data/results",
                "--runs",
                "data/runs",
                "--cases",
                "none",
                "--outcomes",
                "out/outcomes.parquet",
                "--latencies",
                "out/latencies.parquet",
                *extra,
            ]
        )
    return code, capsys.readouterr().err


@pytest.mark.parametrize("fault", ["zero-byte", "truncated", "not-parquet", "extra-column", "null-typed"])
def test_bad_shard_stops_aggregation_or_is_quarantined(
    tmp_path: Path, fault: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = example_rows()
    write_table("results", pd.DataFrame(rows["results"]), tmp_path / "data/results/portability/good.parquet")
    write_table("runs", pd.DataFrame(rows["runs"]), tmp_path / "data/runs/portability/good.parquet")
    bad = tmp_path / "data/results/portability/bad.parquet"
    table = pa.Table.from_pylist([{**rows["results"][0], "run_id": "other"}], schema=contracts.RESULTS)
    if fault == "zero-byte":
        bad.write_bytes(b"")
    elif fault == "truncated":
        pq.write_table(table, bad)
        bad.write_bytes(bad.read_bytes()[:-40])
    elif fault == "not-parquet":
        bad.write_text("<html>404</html>")
    elif fault == "extra-column":
        pq.write_table(table.append_column("x", pa.array([1])), bad)
    else:
        pq.write_table(table.set_column(9, "failure_category", pa.nulls(1)), bad)
    before = bad.read_bytes()
    code, said = _aggregate(tmp_path, capsys)
    assert code == 2
    assert "bad.parquet" in said and "--quarantine" in said
    assert not (tmp_path / "out").exists()  # nothing half-written
    code, said = _aggregate(tmp_path, capsys, "--quarantine")
    assert code == 0, said
    outcomes = read_table("outcomes", tmp_path / "out/outcomes.parquet")
    assert outcomes["function"].tolist() == ["torch.argsort"]
    assert bad.read_bytes() == before  # the bad file is left for a person to look at
