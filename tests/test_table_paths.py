"""Each table's repository path is declared once (tables/locations.py): the CLI's defaults are those
paths and exist in the checkout, and dvc.yaml names the same ones. A default written as a second
literal drifted once (`case check` read data/samples/samples.parquet, which no stage writes, so no
row's `samples` was checked: issue 56)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from portability_data.cli import COMMANDS
from portability_data.tables.contracts import TABLES
from portability_data.tables.locations import TABLE_PARTS, TABLE_PATHS, table_path
from tests.conftest import REPO_ROOT

DECLARED = {Path(p) for p in TABLE_PATHS.values()} | {
    Path(p) for parts in TABLE_PARTS.values() for p in parts.values()
}


def cli_data_defaults() -> dict[str, Path]:
    """`<command> <option>` -> each default path under data/ of the CLI."""
    found: dict[str, Path] = {}
    for command in COMMANDS:
        for arg in command.args:
            default = arg.settings.get("default")
            for path in default if isinstance(default, list) else [default]:
                if isinstance(path, Path) and path.parts[:1] == ("data",):
                    found[f"{command.words} {arg.names[0]}"] = path
    return found


def test_every_table_has_a_path() -> None:
    assert set(TABLE_PATHS) == set(TABLES)
    assert set(TABLE_PARTS) <= set(TABLES)


def test_the_cli_defaults_are_the_declared_paths_and_exist() -> None:
    """Every data/ default is a declared table path (or the folder of one, for --out-dir), and the
    checkout holds it: the tables are committed (dvc.yaml: cache: false)."""
    defaults = cli_data_defaults()
    assert len(defaults) > 30  # the walk found the CLI's options at all
    undeclared = {
        option: str(path)
        for option, path in defaults.items()
        if path not in DECLARED
        and path not in {p.parent for p in DECLARED}
        and path != Path("data/run_manifest.json")  # the run stage's manifest, not a table
    }
    assert not undeclared, f"defaults not declared in tables/locations.py: {undeclared}"
    missing = {option: str(path) for option, path in defaults.items() if not (REPO_ROOT / path).exists()}
    assert not missing, f"CLI defaults that name nothing in the checkout: {missing}"


def test_case_check_reads_the_samples_table_dvc_writes() -> None:
    defaults = cli_data_defaults()
    assert defaults["case check --samples"] == table_path("samples")
    assert defaults["sample --out"] == table_path("samples", "fresh")
    assert defaults["sample --reference-samples"] == table_path("samples", "mince2023")


def test_dvc_yaml_names_the_declared_paths() -> None:
    """Each declared path is an out or a dep of some dvc.yaml stage, or inside one (the imports'
    files: the published table, the study's runs), so the pipeline and the CLI's defaults cannot
    part ways silently; and the sample stage writes the samples table's fresh part."""
    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())["stages"]
    named: set[Path] = set()
    for stage in stages.values():
        for entry in [*stage.get("deps", []), *stage.get("outs", [])]:
            named.add(Path(next(iter(entry)) if isinstance(entry, dict) else entry))
    unnamed = sorted(str(p) for p in DECLARED if not named & {p, *p.parents})
    assert not unnamed, f"declared table paths no dvc.yaml stage names: {unnamed}"
    assert [next(iter(o)) for o in stages["sample"]["outs"]] == [str(table_path("samples", "fresh"))]
    assert table_path("samples", "fresh").parent == table_path("samples")


def test_an_unknown_table_or_part_is_named() -> None:
    with pytest.raises(KeyError, match="unknown table 'sample'; known tables: api"):
        table_path("sample")
    with pytest.raises(KeyError, match="table 'samples' has no part 'x'; its parts: fresh, mince2023"):
        table_path("samples", "x")
