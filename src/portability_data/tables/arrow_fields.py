"""Arrow fields and schemas as the table contracts declare them: every column carries its meaning,
every schema its table name and the schema version. Shared by the contract modules (pyarrow only,
like them: the runner writes shards on a bare device machine)."""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 12
STRING = pa.string()
INT64 = pa.int64()
FLOAT64 = pa.float64()


def described_field(name: str, type_: pa.DataType, nullable: bool, doc: str) -> pa.Field:
    """A column with its meaning as metadata (the card's column tables are generated from it)."""
    return pa.field(name, type_, nullable=nullable, metadata={"description": doc})


def table_schema(table: str, fields: list[pa.Field]) -> pa.Schema:
    """A table's schema, stamped with its name and the schema version it was written at."""
    return pa.schema(fields, metadata={"table": table, "schema_version": str(SCHEMA_VERSION)})
