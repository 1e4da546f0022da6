"""The one table layer: every table is read and written here, as Parquet, validated both ways.

Writes convert each column to its declared Arrow type (never an inferred or null type),
validate against the pandera model, and land atomically (temp file in the same folder, fsync,
rename), so a crash or a full disk never leaves a partial table. Reads check the file's Arrow
schema against the contract before anything else and validate the values after, and every
problem is reported at once, naming the file, column, row and value.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from portability_data.tables.atomic import atomic_write_arrow, atomic_write_bytes
from portability_data.tables.contracts import ADDED_SINCE, SCHEMA_VERSION, arrow_schema

__all__ = ["atomic_write_arrow", "atomic_write_bytes"]

MAX_LISTED_PROBLEMS = 50


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a table: where (column, row), what value, and what is wrong."""

    column: str | None
    row: int | str | None
    value: object
    issue: str

    def render(self) -> str:
        where = []
        if self.column is not None:
            where.append(f"column {self.column!r}")
        if self.row is not None:
            where.append(f"row {self.row}")
        value = "" if self.value is None else f", value {self.value!r}"
        return f"{', '.join(where) or 'table'}{value}: {self.issue}"


class TableValidationError(ValueError):
    """A table broke its contract; the message lists every problem with file, column, row, value."""

    def __init__(self, table: str, source: str, problems: list[Problem], fix: str | None = None) -> None:
        self.table, self.source, self.problems = table, source, problems
        lines = [f"{source}: table {table!r} breaks its contract ({len(problems)} problem(s)):"]
        lines += [f"  - {p.render()}" for p in problems[:MAX_LISTED_PROBLEMS]]
        if len(problems) > MAX_LISTED_PROBLEMS:
            lines.append(f"  ... and {len(problems) - MAX_LISTED_PROBLEMS} more")
        lines.append(
            "  fix: "
            + (fix or f"make the data match schemas/{table}.yaml (see DATASET_CARD.md for each column)")
        )
        super().__init__("\n".join(lines))


# --------------------------------------------------------------------------- conversion


def empty_frame(table: str) -> pd.DataFrame:
    """A frame with the table's columns and declared types and no rows."""
    frame: pd.DataFrame = arrow_schema(table).empty_table().to_pandas(types_mapper=pd.ArrowDtype)
    return frame


def to_arrow(table: str, frame: pd.DataFrame, source: str = "<memory>") -> pa.Table:
    """Convert a frame to the declared Arrow schema, column by column, collecting every problem."""
    schema = arrow_schema(table)
    problems: list[Problem] = []
    declared = schema.names
    for column in frame.columns:
        if column not in declared:
            problems.append(Problem(str(column), None, None, "column is not in the contract; remove it"))
    arrays = []
    optional = set(added_since(table, 0))  # nullable columns added by a later schema: null if absent
    for field in schema:
        if field.name not in frame.columns and field.name in optional:
            arrays.append(pa.nulls(len(frame), field.type))
            continue
        if field.name not in frame.columns:
            problems.append(Problem(field.name, None, None, f"missing column of type {field.type}"))
            continue
        series = frame[field.name]
        try:
            array = pa.array(_plain(series, field.type), type=field.type, from_pandas=True)
        except _NOT_CONVERTIBLE as exc:
            problems.extend(_type_problems(field, series, exc))
            continue
        if not field.nullable and array.null_count:
            rows = [i for i, missing in enumerate(array.is_null().to_pylist()) if missing]
            problems.extend(Problem(field.name, r, None, "null in a non-nullable column") for r in rows)
        arrays.append(array)
    if problems:
        raise TableValidationError(table, source, problems)
    return pa.Table.from_arrays(arrays, schema=schema)


# What pa.array raises for a value that does not convert to the declared type (a list column of
# float NaN: ArrowNotImplementedError), read as a table problem, by column and row.
_NOT_CONVERTIBLE = (
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    pa.ArrowNotImplementedError,
    TypeError,
    ValueError,
    OverflowError,
)


def _plain(series: pd.Series, declared: pa.DataType) -> object:
    """The series as something pa.array takes: Arrow-backed columns pass their Arrow array. A list
    column goes as Python values even when pandas typed it float: all nulls (NaN) read as float64,
    which Arrow's NumPy converter cannot turn into a list."""
    if isinstance(series.dtype, pd.ArrowDtype):
        return series.array._pa_array
    if series.dtype == object or pa.types.is_list(declared):
        return series.astype(object).where(series.notna(), None).tolist()
    return series


def _type_problems(field: pa.Field, series: pd.Series, exc: Exception) -> list[Problem]:
    """Find the rows whose value does not convert to the declared type."""
    bad = []
    for row, value in enumerate(series.tolist()):
        try:
            pa.array([value], type=field.type, from_pandas=True)
        except _NOT_CONVERTIBLE:
            bad.append(Problem(field.name, row, value, f"not convertible to {field.type}"))
    return bad or [Problem(field.name, None, None, f"not convertible to {field.type}: {exc}")]


def check_arrow_schema(table: str, found: pa.Schema, source: str) -> list[Problem]:
    """Compare a file's schema with the contract: extra, missing, mistyped and null-typed columns."""
    schema = arrow_schema(table)
    problems = []
    for field in found:
        if field.name not in schema.names:
            problems.append(Problem(field.name, None, None, "column is not in the contract"))
    for field in schema:
        index = found.get_field_index(field.name)
        if index < 0:
            problems.append(Problem(field.name, None, None, f"missing column of type {field.type}"))
            continue
        got = found.field(index).type
        if pa.types.is_null(got):
            problems.append(Problem(field.name, None, None, f"null-typed column; declared {field.type}"))
        elif not got.equals(field.type):
            problems.append(Problem(field.name, None, None, f"type {got}, declared {field.type}"))
    return problems


# --------------------------------------------------------------------------- validation


def validate(table: str, frame: pd.DataFrame, source: str = "<memory>") -> pd.DataFrame:
    """Validate values with the pandera model; raise one error listing every failure."""
    import pandera.errors

    from portability_data.tables.schemas import model_for

    try:
        return model_for(table).validate(frame, lazy=True)
    except pandera.errors.SchemaErrors as exc:
        raise TableValidationError(table, source, _pandera_problems(exc)) from None


def _pandera_problems(exc: Exception) -> list[Problem]:
    cases = exc.failure_cases  # type: ignore[attr-defined]
    problems = []
    for record in cases.to_dict("records"):
        index = record.get("index")
        row = None if index is None or pd.isna(index) else int(index)
        value = record.get("failure_case")
        problems.append(Problem(record.get("column"), row, value, f"fails {record.get('check')}"))
    return problems


# --------------------------------------------------------------------------- read and write


def write_table(
    table: str,
    frame: pd.DataFrame,
    path: Path,
    metadata: Mapping[str, str] | None = None,
    *,
    exclusive: bool = False,
) -> Path:
    """Validate `frame` as `table` and write it to `path` atomically (Parquet, declared types)."""
    path = Path(path)
    arrow_table = to_arrow(table, frame.reset_index(drop=True), source=str(path))
    validate(table, arrow_table.to_pandas(types_mapper=pd.ArrowDtype), source=str(path))
    merged = dict(arrow_table.schema.metadata or {})
    merged.update({k.encode(): str(v).encode() for k, v in (metadata or {}).items()})
    return atomic_write_arrow(path, arrow_table.replace_schema_metadata(merged), exclusive=exclusive)


def parquet_files(path: Path) -> list[Path]:
    """A file, or every Parquet file under a folder (sorted; temp and hidden files left out)."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.exists():
        return []
    return sorted(p for p in path.rglob("*.parquet") if not any(part.startswith(".") for part in p.parts))


def read_file(table: str, path: Path) -> pa.Table:
    """Read one Parquet file, check its schema against the contract and cast to the declared types."""
    source = str(path)
    try:
        found = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise TableValidationError(
            table,
            source,
            [Problem(None, None, None, f"not a readable Parquet file ({exc})")],
            fix="restore the file from git (`git checkout -- <file>`) or delete it and re-run its step",
        ) from None
    holds = (found.schema.metadata or {}).get(b"table", table.encode()).decode()
    if holds != table:
        raise TableValidationError(
            table,
            source,
            [Problem(None, None, holds, f"the file holds table {holds!r}, not {table!r}")],
            fix=f"move the file out of the {table} folder",
        )
    version = (found.schema.metadata or {}).get(b"schema_version")
    found = with_added_columns(table, found, int(version) if version is not None else SCHEMA_VERSION)
    problems = check_arrow_schema(table, found.schema, source)
    if version is not None and int(version) > SCHEMA_VERSION:
        problems.append(
            Problem(
                None, None, int(version), f"written by a newer schema (this package reads {SCHEMA_VERSION})"
            )
        )
    if problems:
        raise TableValidationError(table, source, problems)
    return found.select(arrow_schema(table).names).cast(arrow_schema(table))


def added_since(table: str, version: int) -> list[str]:
    """Columns of `table` added (nullable) after schema `version`, oldest first."""
    return [name for v in sorted(ADDED_SINCE) if v > version for name in ADDED_SINCE[v].get(table, ())]


def with_added_columns(table: str, found: pa.Table, version: int) -> pa.Table:
    """A file written at an older schema version, with the columns added since as nulls (only
    those: any other missing or extra column is still drift and reported)."""
    schema = arrow_schema(table)
    for name in added_since(table, version):
        if name not in found.column_names:
            found = found.append_column(schema.field(name), pa.nulls(found.num_rows, schema.field(name).type))
    return found


# (table, files with their inode, mtime and size) -> the validated frame, while `reads_shared` is open
_SHARED_READS: dict[tuple[str, tuple[tuple[str, int, int, int], ...]], pd.DataFrame] | None = None


@contextmanager
def reads_shared() -> Iterator[None]:
    """Within this block a table read twice from unchanged files is parsed and validated once and
    handed out as a copy (the report's sections each read results and runs: 238 shard files that
    are read, checked and validated again otherwise). A file rewritten in between (new mtime or
    size, or a new inode: tables land by rename) is read again."""
    global _SHARED_READS
    outer, _SHARED_READS = _SHARED_READS, {} if _SHARED_READS is None else _SHARED_READS
    try:
        yield
    finally:
        _SHARED_READS = outer


def read_table(table: str, path: Path) -> pd.DataFrame:
    """Read a table from a file or a folder of Parquet files; validated; typed as ArrowDtype."""
    files = parquet_files(path)
    if not files:
        return empty_frame(table)
    key = None
    if _SHARED_READS is not None:
        stats = [(str(file.resolve()), file.stat()) for file in files]
        key = (table, tuple((name, st.st_ino, st.st_mtime_ns, st.st_size) for name, st in stats))
        if key in _SHARED_READS:
            return _SHARED_READS[key].copy()
    arrow_tables = [read_file(table, file) for file in files]
    combined = pa.concat_tables(arrow_tables).replace_schema_metadata(arrow_schema(table).metadata)
    frame = validate(table, combined.to_pandas(types_mapper=pd.ArrowDtype), source=str(path))
    if key is not None and _SHARED_READS is not None:
        _SHARED_READS[key] = frame.copy()
    return frame


@dataclass
class ShardReport:
    """What a tolerant read of many shards kept and what it set aside, with the reason."""

    frame: pd.DataFrame
    bad: dict[Path, str]


def read_shards(table: str, paths: Iterable[Path], *, quarantine: bool = False) -> ShardReport:
    """Read many shards of one table. The documented rule: a bad shard stops the read with every
    bad file named, unless `quarantine` is set, in which case bad files are left out and reported.

    Each file's schema is checked alone (`read_file`); their values are validated together, in one
    pandera pass, and file by file only where that pass finds a problem, so that every problem is
    still named by its file (a pass per file was 39 of the 48 s of reading the 186 committed result
    shards: benchmarks/bench_read_shards.py)."""
    read: dict[Path, pa.Table] = {}
    bad: dict[Path, str] = {}
    for file in sorted({p for path in paths for p in parquet_files(path)}):
        try:
            read[file] = read_file(table, file)
        except TableValidationError as exc:
            bad[file] = str(exc)
    frame = _validated_together(table, read, bad)
    if bad and not quarantine:
        raise TableValidationError(
            table,
            ", ".join(str(p) for p in bad),
            [Problem(None, None, None, message) for message in bad.values()],
            fix="fix or remove the named shard(s), or pass --quarantine to leave them out of this run",
        )
    return ShardReport(frame=frame, bad=bad)


def _validated_together(table: str, read: dict[Path, pa.Table], bad: dict[Path, str]) -> pd.DataFrame:
    """The files' rows validated in one pass; where it fails, each file alone (its problems go to
    `bad`, the valid files are kept). Problems no file has alone (a row repeated in two shards) are
    raised, each row named by its file."""
    if not read:
        return empty_frame(table)
    combined = pa.concat_tables(list(read.values())).replace_schema_metadata(arrow_schema(table).metadata)
    try:
        return validate(table, combined.to_pandas(types_mapper=pd.ArrowDtype), source="<shards>")
    except TableValidationError as together:
        frames, failed_alone = [], False
        for file, arrow_table in read.items():
            alone = arrow_table.to_pandas(types_mapper=pd.ArrowDtype)
            try:
                frames.append(validate(table, alone, source=str(file)))
            except TableValidationError as exc:
                bad[file], failed_alone = str(exc), True
        if not failed_alone:
            raise TableValidationError(
                table,
                ", ".join(sorted({str(file) for file in read})),
                [_located(problem, read) for problem in together.problems],
                fix="each run's rows belong to one shard: remove the shard that repeats another's rows",
            ) from None
        return pd.concat(frames, ignore_index=True) if frames else empty_frame(table)


def _located(problem: Problem, read: dict[Path, pa.Table]) -> Problem:
    """A problem of the files' rows together, its row named as the file's own row."""
    if not isinstance(problem.row, int):
        return problem
    start = 0
    for file, arrow_table in read.items():
        if problem.row < start + arrow_table.num_rows:
            return Problem(problem.column, f"{problem.row - start} of {file}", problem.value, problem.issue)
        start += arrow_table.num_rows
    return problem
