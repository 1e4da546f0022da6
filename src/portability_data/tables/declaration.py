"""One record per table: its columns (Arrow type, nullability, meaning, the values they may hold),
its table-wide checks and where it lives, declared once.

Everything generic is derived from the record, as PyTorch's OpInfo drives its tests: the Arrow
schema with its metadata (`Table.arrow_schema`), the pandera model (`schemas.model_for`), the
exported schemas/*.yaml and the card's column tables, the columns added since a schema version
(`contracts.ADDED_SINCE`) and the table's path (`locations`, which the CLI defaults read). pyarrow
only: the runner imports the contracts on a bare device machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from portability_data.tables.locations import table_path

SCHEMA_VERSION = 12
STRING = pa.string()
INT64 = pa.int64()
FLOAT64 = pa.float64()
BOOL = pa.bool_()
STRINGS = pa.list_(STRING)
FLOATS = pa.list_(FLOAT64)
TIMESTAMP = pa.timestamp("us", tz="UTC")

# A number as a table of the paper prints it (no unit, no thousands separator).
PRINTED_NUMBER = r"^-?[0-9]+(\.[0-9]+)?$"
# A qualified name: dotted identifiers only (no calls, spaces or code).
QUALIFIED_NAME = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$"
IDENTIFIER = r"^[A-Za-z0-9_.:\-]+$"
# A dtype or device type as the frameworks name it: float32, cuda.
LOWER_NAME = r"^[a-z0-9_]+$"


@dataclass(frozen=True)
class Column:
    """A column: its Arrow type, whether it may be null, what it means (the card's text), the values
    it may hold (pandera's built-in checks, by their Field keywords) and the schema version that
    added it (None: there from the start; an added column is nullable, older files read it as null)."""

    name: str
    type: pa.DataType
    nullable: bool
    doc: str
    isin: tuple[str, ...] | None = None
    gt: int | None = None
    ge: int | None = None
    le: int | None = None
    min_length: int | None = None
    matches: str | None = None
    startswith: str | None = None
    unique: bool = False
    since: int | None = None

    def __post_init__(self) -> None:
        if self.since is not None and not self.nullable:
            raise ValueError(f"column {self.name!r} is added since {self.since}, so it must be nullable")

    def field(self) -> pa.Field:
        """The Arrow field, its meaning as metadata (the card's column tables are generated from it)."""
        return pa.field(self.name, self.type, nullable=self.nullable, metadata={"description": self.doc})

    def value_checks(self) -> dict[str, Any]:
        """The value checks as pandera.Field keywords (set ones only: pandera orders them itself)."""
        checks: dict[str, Any] = {
            "gt": self.gt,
            "ge": self.ge,
            "le": self.le,
            "isin": self.isin,
            "str_length": None if self.min_length is None else {"min_value": self.min_length},
            "str_matches": self.matches,
            "str_startswith": self.startswith,
        }
        return {keyword: value for keyword, value in checks.items() if value is not None}


@dataclass(frozen=True)
class FrameCheck:
    """A check across columns or rows (a key's uniqueness, one column requiring another). `test`
    takes the pandas frame and returns a boolean Series, or True where it has nothing to check;
    typed loosely so that this layer's light core never imports pandas."""

    name: str
    error: str
    test: Callable[[Any], Any]


@dataclass(frozen=True)
class Table:
    """A table: its name, what a row is (the pandera model's description), its columns in order and
    its table-wide checks. Its path is the one `locations` declares (`location`)."""

    name: str
    summary: str
    columns: tuple[Column, ...]
    checks: tuple[FrameCheck, ...] = ()

    def __post_init__(self) -> None:
        names = [column.name for column in self.columns]
        if len(set(names)) != len(names):
            raise ValueError(f"table {self.name!r} declares a column twice: {names}")

    @property
    def model_name(self) -> str:
        """The pandera model's class name: support_matrix -> SupportMatrixTable."""
        return "".join(part.capitalize() for part in self.name.split("_")) + "Table"

    @property
    def location(self) -> Path:
        """Where the table lives in the repository (tables/locations.py declares it)."""
        return table_path(self.name)

    def arrow_schema(self) -> pa.Schema:
        """The Arrow schema, stamped with the table's name and the schema version it is written at."""
        return pa.schema(
            [column.field() for column in self.columns],
            metadata={"table": self.name, "schema_version": str(SCHEMA_VERSION)},
        )

    def added_since(self) -> dict[int, tuple[str, ...]]:
        """Schema version -> the columns it added to this table, in column order."""
        added: dict[int, tuple[str, ...]] = {}
        for column in self.columns:
            if column.since is not None:
                added[column.since] = (*added.get(column.since, ()), column.name)
        return added
