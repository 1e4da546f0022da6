"""The table layer: declared types, one error listing every problem, atomic and immutable writes."""

from __future__ import annotations

import errno
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from portability_data.tables import atomic, contracts
from portability_data.tables.tableio import (
    TableValidationError,
    empty_frame,
    read_shards,
    read_table,
    write_table,
)


def api_frame(**overrides: list) -> pd.DataFrame:
    data = {
        "framework": ["torch", "jax"],
        "framework_version": ["2.13.0", "0.10.2"],
        "qualified_name": ["torch.add", "jax.numpy.cos"],
        "module": ["torch", "jax.numpy"],
        "name": ["add", "cos"],
        "kind": ["function", "function"],
    }
    data.update(overrides)
    return pd.DataFrame(data)


def result_row(**overrides: object) -> dict:
    row = {
        "run_id": "r1",
        "source": "portability",
        "case_id": "torch.add",
        "framework": "torch",
        "function": "torch.add",
        "test_id": "cases/torch/test_add.py::test_a",
        "subtest": "test_a",
        "repeat": 0,
        "outcome": "passed",
        "failure_category": None,
        "failure_rule": None,
        "error_type": None,
        "error_message": None,
        "op_latencies_ms": [0.5, 0.25],
        "test_time_ms": 1.0,
        "device": "cpu",
        "device_model": "x86",
        "mode": "eager",
        "framework_version": "2.13.0",
    }
    row.update(overrides)
    return row


def test_round_trip_keeps_declared_types(tmp_path: Path) -> None:
    path = write_table("api", api_frame(), tmp_path / "api.parquet")
    schema = pq.read_schema(path)
    assert schema.remove_metadata().equals(contracts.API.remove_metadata())
    assert schema.metadata[b"table"] == b"api"
    back = read_table("api", path)
    assert back["qualified_name"].tolist() == ["torch.add", "jax.numpy.cos"]


def test_all_null_column_keeps_its_declared_type(tmp_path: Path) -> None:
    frame = pd.DataFrame([result_row(), result_row(test_id="t2", subtest="t2")])
    path = write_table("results", frame, tmp_path / "r.parquet")
    schema = pq.read_schema(path)
    assert schema.field("error_message").type == pa.string()  # not null-typed, though all null
    assert schema.field("op_latencies_ms").type == pa.list_(pa.float64())


def test_one_error_lists_every_problem_with_column_row_and_value(tmp_path: Path) -> None:
    frame = api_frame(
        framework=["torch", "mxnet"],
        qualified_name=["torch.add", "os.system('x')"],
        kind=["function", "lambda"],
    )
    with pytest.raises(TableValidationError) as caught:
        write_table("api", frame, tmp_path / "api.parquet")
    message = str(caught.value)
    assert str(tmp_path / "api.parquet") in message
    assert "column 'framework', row 1, value 'mxnet'" in message
    assert "column 'qualified_name', row 1, value \"os.system('x')\"" in message
    assert "column 'kind', row 1, value 'lambda'" in message
    assert len(caught.value.problems) == 3
    assert not (tmp_path / "api.parquet").exists()


def test_wrong_type_names_the_row(tmp_path: Path) -> None:
    frame = pd.DataFrame([result_row(), result_row(test_id="t2", repeat="two")])
    with pytest.raises(TableValidationError) as caught:
        write_table("results", frame, tmp_path / "r.parquet")
    assert "column 'repeat', row 1, value 'two': not convertible to int64" in str(caught.value)


def test_missing_and_extra_columns(tmp_path: Path) -> None:
    frame = api_frame().drop(columns=["kind"]).assign(extra=1)
    with pytest.raises(TableValidationError) as caught:
        write_table("api", frame, tmp_path / "api.parquet")
    text = str(caught.value)
    assert "column 'extra': column is not in the contract" in text
    assert "column 'kind': missing column of type string" in text


def test_table_wide_rules(tmp_path: Path) -> None:
    frame = pd.DataFrame([result_row(), result_row(outcome="failed")])
    with pytest.raises(TableValidationError) as caught:
        write_table("results", frame, tmp_path / "r.parquet")
    text = str(caught.value)
    assert "a failed subtest needs a failure category" in text
    assert "(run_id, test_id, repeat) is duplicated" in text


@pytest.mark.parametrize(
    "damage, expected",
    [
        (lambda p: p.write_bytes(b""), "not a readable Parquet file"),
        (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "not a readable Parquet file"),
        (lambda p: p.write_text("run_id,source\nr1,x\n"), "not a readable Parquet file"),
    ],
    ids=["zero-byte", "truncated", "not-parquet"],
)
def test_corrupt_files_are_named(tmp_path: Path, damage, expected: str) -> None:
    path = write_table("results", pd.DataFrame([result_row()]), tmp_path / "shard.parquet")
    damage(path)
    with pytest.raises(TableValidationError) as caught:
        read_table("results", path)
    assert str(path) in str(caught.value) and expected in str(caught.value)


def _drifted(tmp_path: Path, change) -> Path:
    table = pa.Table.from_pylist([result_row()], schema=contracts.RESULTS)
    table = change(table)
    path = tmp_path / "drift.parquet"
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            lambda t: t.append_column("gpu_temp", pa.array([71.0])),
            "column 'gpu_temp': column is not in the contract",
        ),
        (lambda t: t.drop(["mode"]), "column 'mode': missing column of type string"),
        (
            lambda t: t.set_column(t.schema.get_field_index("repeat"), "repeat", pa.array(["0"])),
            "column 'repeat': type string, declared int64",
        ),
        (
            lambda t: t.set_column(t.schema.get_field_index("error_type"), "error_type", pa.nulls(1)),
            "column 'error_type': null-typed column; declared string",
        ),
    ],
    ids=["extra-column", "missing-column", "wrong-type", "null-typed"],
)
def test_schema_drift_is_refused_with_the_file_and_column(tmp_path: Path, change, expected: str) -> None:
    path = _drifted(tmp_path, change)
    with pytest.raises(TableValidationError) as caught:
        read_table("results", path)
    assert str(path) in str(caught.value) and expected in str(caught.value)


def test_newer_schema_version_is_refused(tmp_path: Path) -> None:
    table = pa.Table.from_pylist([result_row()], schema=contracts.RESULTS)
    table = table.replace_schema_metadata({b"table": b"results", b"schema_version": b"99"})
    pq.write_table(table, tmp_path / "new.parquet")
    with pytest.raises(TableValidationError, match="written by a newer schema"):
        read_table("results", tmp_path / "new.parquet")


def test_shards_stop_or_quarantine_by_rule(tmp_path: Path) -> None:
    good = write_table("results", pd.DataFrame([result_row()]), tmp_path / "a" / "good.parquet")
    bad = tmp_path / "a" / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(TableValidationError) as caught:
        read_shards("results", [tmp_path / "a"])
    assert str(bad) in str(caught.value) and "--quarantine" in str(caught.value)
    report = read_shards("results", [tmp_path / "a"], quarantine=True)
    assert len(report.frame) == 1 and list(report.bad) == [bad]
    assert good.exists() and bad.exists()  # nothing is deleted


def _unvalidated_shard(path: Path, rows: list[dict]) -> Path:
    """A shard of the right schema written without the value checks (as a hand-edited file would be)."""
    table = pa.Table.from_pylist(rows, schema=contracts.RESULTS)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata({b"table": b"results"}), path)
    return path


def test_a_shard_whose_values_break_the_contract_is_named_among_shards_read_together(tmp_path: Path) -> None:
    """The shards' values are validated in one pass; a value one shard breaks still names that shard
    and its row, and quarantine keeps the others' rows."""
    good = [
        write_table("results", pd.DataFrame([result_row(run_id=f"r{i}")]), tmp_path / f"{i}.parquet")
        for i in (1, 2)
    ]
    bad = _unvalidated_shard(
        tmp_path / "3.parquet",
        [result_row(run_id="r3"), result_row(run_id="r3", repeat=1, outcome="exploded")],
    )
    with pytest.raises(TableValidationError) as caught:
        read_shards("results", [tmp_path])
    said = str(caught.value)
    assert said.startswith(f"{bad}: ") and "row 1, value 'exploded'" in said
    assert not any(str(file) in said for file in good)
    report = read_shards("results", [tmp_path], quarantine=True)
    assert list(report.bad) == [bad] and report.frame["run_id"].tolist() == ["r1", "r2"]


def test_rows_repeated_in_two_shards_are_refused_with_each_row_named_by_its_file(tmp_path: Path) -> None:
    """Each shard alone keeps the contract; together they repeat (run_id, test_id, repeat): the read
    stops, naming the rows in each file, even with quarantine (no one file is the bad one)."""
    first = write_table("results", pd.DataFrame([result_row(), result_row(repeat=1)]), tmp_path / "a.parquet")
    copy = write_table("results", pd.DataFrame([result_row(repeat=1)]), tmp_path / "b.parquet")
    for quarantine in (False, True):
        with pytest.raises(TableValidationError) as caught:
            read_shards("results", [tmp_path], quarantine=quarantine)
        said = str(caught.value)
        assert f"row 1 of {first}" in said and f"row 0 of {copy}" in said and f"row 0 of {first}" not in said
        assert "remove the shard that repeats" in said


def test_failed_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def disk_full(table, where, **kwargs):
        Path(where).write_bytes(b"PAR1 half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.pq, "write_table", disk_full)
    with pytest.raises(OSError, match="No space left"):
        write_table("api", api_frame(), tmp_path / "api.parquet")
    assert list(tmp_path.iterdir()) == []


def test_failed_write_keeps_the_previous_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_table("api", api_frame(), tmp_path / "api.parquet")
    before = path.read_bytes()
    monkeypatch.setattr(atomic.pq, "write_table", lambda *a, **k: (_ for _ in ()).throw(OSError("disk")))
    with pytest.raises(OSError):
        write_table("api", api_frame(framework=["jax", "jax"]), path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["api.parquet"]


def test_immutable_shards_are_never_replaced(tmp_path: Path) -> None:
    frame = pd.DataFrame([result_row()])
    path = write_table("results", frame, tmp_path / "r1.parquet", exclusive=True)
    with pytest.raises(FileExistsError):
        write_table("results", frame.assign(outcome="skipped"), path, exclusive=True)
    assert read_table("results", path)["outcome"].tolist() == ["passed"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r1.parquet"]


def test_empty_folder_reads_as_typed_empty_table(tmp_path: Path) -> None:
    frame = read_table("latencies", tmp_path / "nothing")
    assert list(frame.columns) == contracts.LATENCIES.names and frame.empty
    assert empty_frame("latencies").dtypes.equals(frame.dtypes)


def test_a_file_of_another_table_is_refused(tmp_path: Path) -> None:
    path = write_table("api", api_frame(), tmp_path / "x.parquet")
    with pytest.raises(TableValidationError, match="holds table 'api', not 'results'"):
        read_table("results", path)


def test_a_shard_of_an_older_schema_reads_with_the_added_columns_as_nulls(tmp_path: Path) -> None:
    """Additive evolution: a v1 shard (before execution, confirmation, ...) is kept as it is and
    read with the new nullable columns empty; the same columns missing from a v2 file is drift."""
    v1_fields = [f for f in contracts.RESULTS if f.name not in contracts.ADDED_SINCE[2]["results"]]
    v1_schema = pa.schema(v1_fields, metadata={"table": "results", "schema_version": "1"})
    v1 = pa.Table.from_pylist([result_row()], schema=v1_schema)
    pq.write_table(v1, tmp_path / "old.parquet")
    frame = read_table("results", tmp_path / "old.parquet")
    assert list(frame.columns) == contracts.RESULTS.names
    assert frame["execution"].isna().all() and frame["confirmation"].isna().all()
    assert frame["test_id"].tolist() == ["cases/torch/test_add.py::test_a"]

    v2_missing = pa.Table.from_pylist(
        [result_row()], schema=v1_schema.with_metadata({"table": "results", "schema_version": "2"})
    )
    pq.write_table(v2_missing, tmp_path / "drift.parquet")
    with pytest.raises(TableValidationError, match="'execution': missing column"):
        read_table("results", tmp_path / "drift.parquet")


def test_shared_reads_parse_a_table_once_and_see_a_rewritten_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within reads_shared a second read of unchanged files parses nothing again and hands out a copy
    (a caller's change stays its own); a file rewritten in between is read again; outside the block
    every read parses (issue 57: the report's sections read results and runs twice)."""
    from portability_data.tables import tableio

    folder = tmp_path / "api"
    write_table("api", api_frame(), folder / "a.parquet")
    parsed: list[Path] = []
    real = tableio.read_file
    monkeypatch.setattr(tableio, "read_file", lambda table, path: parsed.append(path) or real(table, path))
    with tableio.reads_shared():
        first = read_table("api", folder)
        first.loc[0, "name"] = "changed by the caller"
        second = read_table("api", folder)
        assert len(parsed) == 1 and second["name"].tolist() == ["add", "cos"]
        write_table("api", api_frame(name=["sub", "sin"]), folder / "a.parquet")
        assert read_table("api", folder)["name"].tolist() == ["sub", "sin"] and len(parsed) == 2
    read_table("api", folder)
    assert len(parsed) == 3


def test_a_process_that_validates_a_table_does_not_import_dask(tmp_path: Path) -> None:
    """pandera imports dask.dataframe for its annotation types when a model is first built, where
    dask is installed (it is, with the `distributed` extra): about a second of every stage and CLI
    call (benchmarks/bench_table_start.py). tables.schemas keeps it out; a process that writes and
    reads a table back must end with dask unimported, and one that asked for pandera's dask types
    itself keeps the real ones."""
    import subprocess
    import sys

    child = (
        "import sys\n"
        "if sys.argv[2] == 'real': import pandera.typing.dask\n"
        "from pathlib import Path\n"
        "import pandas as pd\n"
        "from portability_data.tables.tableio import read_table, write_table\n"
        "from tests.test_tableio import api_frame\n"
        "write_table('api', api_frame(), Path(sys.argv[1]))\n"
        "assert len(read_table('api', Path(sys.argv[1]))) == len(api_frame())\n"
        "print('dask' in sys.modules, sys.modules['pandera.typing.dask'].DASK_INSTALLED)\n"
    )
    seen = {}
    for arm in ("ours", "real"):
        done = subprocess.run(
            [sys.executable, "-c", child, str(tmp_path / f"{arm}.parquet"), arm],
            capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        seen[arm] = done.stdout.split()
    assert seen == {"ours": ["False", "False"], "real": ["True", "True"]}
