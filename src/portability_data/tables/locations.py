"""Where each table lives in the repository, declared once.

The CLI's default paths are read from here, never written a second time: a second literal drifts
(`case check` once defaulted to data/samples/samples.parquet, which no stage writes, and so checked
no row's `samples`). dvc.yaml names the same paths; tests/test_table_paths.py keeps the two equal.
Paths are relative to the repository root (the CLI runs there, as `dvc repro` does).
"""

from __future__ import annotations

from pathlib import Path

# Table -> what its readers read: one file, or a folder whose *.parquet files (recursively) are the
# table (a sample, a run, a source per file).
TABLE_PATHS: dict[str, str] = {
    "api": "data/api/api.parquet",
    "declared": "data/declared/declared.parquet",
    "frequencies": "data/frequencies/frequencies.parquet",
    "samples": "data/samples",
    "cases": "data/cases/cases.parquet",
    "results": "data/results",
    "runs": "data/runs",
    "outcomes": "data/outcomes/outcomes.parquet",
    "latencies": "data/latencies/latencies.parquet",
    "pooled": "data/pooled/pooled.parquet",
    "published": "data/published",
    "reproduction": "data/reproduction/reproduction.parquet",
    "reproduction_functions": "data/reproduction/functions.parquet",
    "support_matrix": "data/census/support_matrix.parquet",
    "crossframework": "data/census/crossframework.parquet",
}

# The named parts of tables kept in several files: which file (or folder) holds each.
TABLE_PARTS: dict[str, dict[str, str]] = {
    # `portability sample` (dvc.yaml's sample stage) writes fresh; the study's own sample is committed.
    "samples": {"fresh": "data/samples/fresh.parquet", "mince2023": "data/samples/mince2023.parquet"},
    "results": {"mince2023": "data/results/mince2023"},
    "runs": {"mince2023": "data/runs/mince2023"},
    "published": {"mince2023": "data/published/published.parquet"},
    # torch_xla 2.9.0's own test lists (`portability torch-xla import`), beside the wheel's table.
    "declared": {"torch_xla": "data/declared/torch_xla-v2.9.0.parquet"},
}


def table_path(table: str, part: str | None = None) -> Path:
    """The repository path of a table (or of one named part of it); an unknown name is an error
    that lists the known ones."""
    if table not in TABLE_PATHS:
        raise KeyError(f"unknown table {table!r}; known tables: {', '.join(TABLE_PATHS)}")
    if part is None:
        return Path(TABLE_PATHS[table])
    parts = TABLE_PARTS.get(table, {})
    if part not in parts:
        raise KeyError(f"table {table!r} has no part {part!r}; its parts: {', '.join(parts) or 'none'}")
    return Path(parts[part])
