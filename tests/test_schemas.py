"""The contracts: pandera models agree with the Arrow schemas; exported files are up to date."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from portability_data.dataset.folder import tables_section
from portability_data.tables import contracts
from portability_data.tables.schemas import MODELS, export_yaml


@pytest.mark.parametrize("table", list(contracts.TABLES))
def test_model_matches_arrow_contract(table: str) -> None:
    schema = MODELS[table].to_schema()
    arrow = contracts.TABLES[table]
    assert list(schema.columns) == arrow.names
    for field in arrow:
        column = schema.columns[field.name]
        assert column.dtype.type == pd.ArrowDtype(field.type), field.name
        assert column.nullable == field.nullable, field.name


@pytest.mark.parametrize("table", list(contracts.TABLES))
def test_exported_schema_is_up_to_date(table: str, repo_root: Path) -> None:
    exported = repo_root / "schemas" / f"{table}.yaml"
    assert exported.exists(), "run `portability schemas export`"
    assert exported.read_text() == export_yaml(table), (
        f"{exported} is out of date with portability_data.tables.schemas; run `portability schemas export`"
    )


def test_card_documents_every_column(repo_root: Path) -> None:
    card = (repo_root / "DATASET_CARD.md").read_text()
    assert tables_section() in card, "DATASET_CARD.md is out of date; run `portability dataset card`"
    for table, schema in contracts.TABLES.items():
        assert f"### `{table}`" in card
        for name in schema.names:
            assert f"| `{name}` |" in card


def test_every_column_has_a_description() -> None:
    for table, schema in contracts.TABLES.items():
        for field in schema:
            assert (field.metadata or {}).get(b"description"), f"{table}.{field.name}"
