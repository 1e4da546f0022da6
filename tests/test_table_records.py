"""One record per table (tables/declaration.py): the Arrow schema and the pandera model are both
derived from it, and every kind of check a column or a table declares refuses a bad frame by name."""

from __future__ import annotations

import pandas as pd
import pandera.errors
import pyarrow as pa
import pytest

from portability_data.tables import contracts
from portability_data.tables.declaration import (
    FLOAT64,
    INT64,
    QUALIFIED_NAME,
    SCHEMA_VERSION,
    STRING,
    Column,
    FrameCheck,
    Table,
)
from portability_data.tables.locations import table_path
from portability_data.tables.schemas import MODELS, model_of
from portability_data.tables.tableio import TableValidationError, to_arrow, validate

# A table declaring every kind of check once.
KINDS = Table(
    "kinds",
    "Every kind of check a column or a table declares.",
    (
        Column("choice", STRING, False, "one of a, b", isin=("a", "b")),
        Column("count", INT64, False, "at least 0", ge=0),
        Column("positive", FLOAT64, False, "above 0", gt=0),
        Column("version", INT64, False, "at most 3", le=3),
        Column("text", STRING, False, "not empty", min_length=1),
        Column("name", STRING, False, "a dotted name", matches=QUALIFIED_NAME),
        Column("json", STRING, False, "a JSON object", startswith="{"),
        Column("key", STRING, False, "unique", unique=True),
        Column("maybe", STRING, True, "may be null", since=2),
    ),
    (
        FrameCheck(
            "count_within_version", "count cannot exceed version", lambda f: f["count"] <= f["version"]
        ),
    ),
)


def kinds_frame(**overrides: list[object]) -> pd.DataFrame:
    data: dict[str, list[object]] = {
        "choice": ["a", "b"],
        "count": [0, 3],
        "positive": [0.5, 2.0],
        "version": [1, 3],
        "text": ["x", "y"],
        "name": ["torch.add", "jax.numpy.cos"],
        "json": ["{}", '{"a": 1}'],
        "key": ["k1", "k2"],
        "maybe": [None, "set"],
    }
    data.update(overrides)
    schema = KINDS.arrow_schema()
    return pa.Table.from_pydict(data, schema=schema).to_pandas(types_mapper=pd.ArrowDtype)


def failures(frame: pd.DataFrame) -> set[tuple[str | None, str]]:
    """(column, check) of every failure the derived model finds in the frame."""
    try:
        model_of(KINDS).validate(frame, lazy=True)
    except pandera.errors.SchemaErrors as exc:
        cases = exc.failure_cases
        return {(None if pd.isna(c) else c, str(k)) for c, k in zip(cases["column"], cases["check"])}
    return set()


def test_a_good_frame_passes() -> None:
    assert failures(kinds_frame()) == set()


@pytest.mark.parametrize(
    ("column", "bad", "check"),
    [
        ("choice", "c", "isin(('a', 'b'))"),
        ("count", -1, "greater_than_or_equal_to(0)"),
        ("positive", 0.0, "greater_than(0)"),
        ("version", 4, "less_than_or_equal_to(3)"),
        ("text", "", "str_length(1, None)"),
        ("name", "torch.add()", f"str_matches('{QUALIFIED_NAME}')"),
        ("json", "[]", "str_startswith('{')"),
        ("key", "k1", "field_uniqueness"),
        ("text", None, "not_nullable"),
    ],
)
def test_each_column_check_refuses_a_bad_value_by_column(column: str, bad: object, check: str) -> None:
    values = kinds_frame()[column].tolist()
    values[1] = bad
    found = failures(kinds_frame(**{column: values}))
    assert (column, check) in found, found
    assert {c for c, _ in found} == {column}


def test_a_table_wide_check_refuses_a_frame_by_its_name() -> None:
    found = failures(kinds_frame(count=[2, 3], version=[1, 3]))
    assert {check for _, check in found} == {"count cannot exceed version"}, found  # pandera names the error
    assert {"count", "version"} <= {column for column, _ in found}  # and the columns of the rows it refuses


def test_the_arrow_schema_carries_the_meanings_the_table_and_the_version() -> None:
    schema = KINDS.arrow_schema()
    assert schema.names == [c.name for c in KINDS.columns]
    assert schema.metadata == {b"table": b"kinds", b"schema_version": str(SCHEMA_VERSION).encode()}
    assert schema.field("maybe").nullable and not schema.field("text").nullable
    assert schema.field("choice").metadata == {b"description": b"one of a, b"}
    assert KINDS.added_since() == {2: ("maybe",)}


def test_a_record_refuses_an_added_column_that_cannot_be_null_and_a_column_twice() -> None:
    with pytest.raises(ValueError, match="added since 3, so it must be nullable"):
        Column("late", STRING, False, "added late", since=3)
    with pytest.raises(ValueError, match="declares a column twice"):
        Table("twice", "twice", (Column("a", STRING, False, "a"), Column("a", STRING, False, "a")))


@pytest.mark.parametrize("table", list(contracts.RECORDS))
def test_every_table_is_derived_from_its_record(table: str) -> None:
    """The contracts' Arrow schema, the pandera model and the path are the record's."""
    record = contracts.RECORDS[table]
    assert contracts.TABLES[table].equals(record.arrow_schema(), check_metadata=True)
    model = MODELS[table].to_schema()
    assert list(model.columns) == [c.name for c in record.columns]
    assert [check.name for check in model.checks] == [check.name for check in record.checks]
    assert model.name == record.model_name and model.description == record.summary
    assert record.location == table_path(table)
    for version, names in record.added_since().items():
        assert contracts.ADDED_SINCE[version][table] == names


@pytest.mark.parametrize(
    ("column", "bad", "check"),
    [
        ("framework", "mxnet", "isin"),
        ("calls", -1, "greater_than_or_equal_to"),
        ("corpus", "", "str_length"),
        ("qualified_name", "torch add", "str_matches"),
    ],
)
def test_a_real_table_names_the_column_and_check_in_its_error(column: str, bad: object, check: str) -> None:
    frame = pd.DataFrame(
        {
            "framework": ["torch", "jax"],
            "corpus": ["c", "c"],
            "qualified_name": ["torch.add", "jax.numpy.cos"],
            "calls": [3, 0],
            "bare_calls": [4, 1],
            "files": [1, 0],
            "resolution": ["resolved", "resolved"],
            "canonical_name": ["torch.add", None],
        }
    )
    frame.loc[1, column] = bad
    typed = to_arrow("frequencies", frame).to_pandas(types_mapper=pd.ArrowDtype)  # as write_table has it
    with pytest.raises(TableValidationError) as caught:
        validate("frequencies", typed, source="f.parquet")
    text = str(caught.value)
    assert f"column {column!r}, row 1, value {bad!r}: fails {check}" in text, text
    assert text.startswith("f.parquet: table 'frequencies' breaks its contract (1 problem(s)):")


def test_a_list_column_of_nulls_typed_float_by_pandas_converts_and_a_wrong_list_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """pandas types a column of NaN float64: a list column of nulls so typed converts (Arrow's NumPy
    converter refused it with an error outside the table's), and a list column holding numbers is a
    TableValidationError naming the column and row."""
    from portability_data.tables import tableio

    table = Table("lists", "A list column.", (Column("ops", pa.list_(pa.string()), True, "op names"),))
    monkeypatch.setattr(tableio, "arrow_schema", lambda name: table.arrow_schema())
    nulls = pd.DataFrame({"ops": [float("nan"), float("nan")]})
    assert nulls["ops"].dtype == "float64"
    assert to_arrow("lists", nulls).column("ops").to_pylist() == [None, None]
    mixed = pd.DataFrame({"ops": [["aten::add"], float("nan")]})
    assert to_arrow("lists", mixed).column("ops").to_pylist() == [["aten::add"], None]
    with pytest.raises(TableValidationError) as caught:
        to_arrow("lists", pd.DataFrame({"ops": [1.5, float("nan")]}))
    assert "column 'ops', row 0" in str(caught.value), str(caught.value)
