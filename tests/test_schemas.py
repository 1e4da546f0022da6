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


def test_the_outcome_sets_are_subtest_outcomes_and_defined_once(repo_root: Path) -> None:
    """Which outcomes fail a subtest, which a run limit made and which are confirmed alone are one
    vocabulary (contracts), read by the runner, aggregation, the schemas and the report: a second
    spelling of the failing set somewhere would drift from it the day an outcome is added."""
    import re

    outcomes = set(contracts.SUBTEST_OUTCOMES)
    assert contracts.LIMIT_OUTCOMES < contracts.FAILING_OUTCOMES < outcomes
    assert outcomes >= contracts.CONFIRMED_OUTCOMES
    assert not contracts.CONFIRMED_OUTCOMES & contracts.LIMIT_OUTCOMES
    assert "host_fallback" in contracts.CONFIRMED_OUTCOMES - contracts.FAILING_OUTCOMES
    members = "|".join(sorted(contracts.FAILING_OUTCOMES))
    spelled = re.compile(rf'(?:"(?:{members})",\s*){{4}}"(?:{members})"')
    elsewhere = [
        str(path.relative_to(repo_root))
        for path in sorted((repo_root / "src" / "portability_data").rglob("*.py"))
        if path.name != "contracts.py" and spelled.search(path.read_text())
    ]
    assert elsewhere == [], f"failing outcomes spelled again in {elsewhere}: use contracts.FAILING_OUTCOMES"
