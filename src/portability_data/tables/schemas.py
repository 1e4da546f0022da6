"""The table contracts as pandera models, derived from the table records (`contracts.RECORDS`).

Every table is validated against its model on every write and read (`tableio`). A model is built
from its record, as a pandera DataFrameModel would be written by hand: a field per column, typed
as the column's Arrow type, with the column's value checks, and a dataframe check per table-wide
check. The models are exported to `schemas/<table>.yaml` (`portability schemas export`); a test
fails when an exported file is out of date.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Annotated, Any, cast

import pandas as pd
import pandera.pandas as pa

from portability_data.tables.contracts import RECORDS
from portability_data.tables.declaration import Column, FrameCheck, Table


def _without_dask_annotations() -> None:
    """Tell pandera, and only pandera, that dask's frame types are absent. Building a model's
    schema asks `pandera.typing.get_index_types`, which imports `dask.dataframe` wherever dask is
    installed (the `distributed` extra is): about a second of every process that validates a table
    (benchmarks/bench_table_start.py), for annotation types no model here uses. Where something
    imported pandera's dask types first, they stay."""
    stub = types.ModuleType("pandera.typing.dask", "dask annotation types: not used by these models")
    stub.DASK_INSTALLED = False  # type: ignore[attr-defined]
    sys.modules.setdefault("pandera.typing.dask", stub)


_without_dask_annotations()


class _Table(pa.DataFrameModel):
    class Config:
        strict = True
        ordered = True
        coerce = False


def _dataframe_check(check: FrameCheck) -> Any:
    """The table-wide check as a model's dataframe check method, named as the check."""

    def method(cls: type, frame: pd.DataFrame) -> Any:
        return check.test(frame)

    method.__name__ = method.__qualname__ = check.name
    return pa.dataframe_check(error=check.error)(method)


def _field(column: Column) -> Any:
    """The column's pandera Field: its value checks, and nullable and unique where they are set."""
    keywords = column.value_checks()  # nullable and unique only where set, as a hand-written model has them
    keywords.update({"nullable": True} if column.nullable else {})
    keywords.update({"unique": True} if column.unique else {})
    return pa.Field(**keywords)


def model_of(record: Table) -> type[_Table]:
    """The record's DataFrameModel: a field per column in order, then the table-wide checks."""
    namespace: dict[str, Any] = {
        "__doc__": record.summary,
        "__module__": __name__,
        "__qualname__": record.model_name,
        "__annotations__": {c.name: Annotated[pd.ArrowDtype, c.type] for c in record.columns},
    }
    for column in record.columns:  # a column with no check, null or uniqueness has no Field
        if column.value_checks() or column.nullable or column.unique:
            namespace[column.name] = _field(column)
    for check in record.checks:
        namespace[check.name] = _dataframe_check(check)
    return cast(type[_Table], type(record.model_name, (_Table,), namespace))


MODELS: dict[str, type[_Table]] = {name: model_of(record) for name, record in RECORDS.items()}


def model_for(table: str) -> type[_Table]:
    try:
        return MODELS[table]
    except KeyError:
        raise KeyError(f"unknown table {table!r}; known tables: {', '.join(MODELS)}") from None


def export_yaml(table: str) -> str:
    """The model as pandera YAML, with a header naming its source (the file is generated)."""
    import warnings

    model = model_for(table)
    header = (
        f"# Generated from portability_data.tables.schemas.{model.__name__} by `portability schemas export`;"
        " do not edit.\n"
    )
    schema = model.to_schema()
    for check in schema.checks:  # table-wide checks are code, which pandera's YAML leaves out
        header += f"# table-wide check {check.name}: {check.error}\n"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return header + str(model.to_yaml())


def export_all(folder: Path) -> list[Path]:
    """Write schemas/<table>.yaml for every table; returns the files written."""
    from portability_data.tables.atomic import atomic_write_bytes

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for table in MODELS:
        path = folder / f"{table}.yaml"
        atomic_write_bytes(path, export_yaml(table).encode())
        written.append(path)
    return written
