"""Every `dvc.yaml` stage depends on all the code its command runs: the entry module and every
module of the package it imports (lazily or not, found by grimp), so that a change to any of them
re-runs the stage and nothing stale survives a `dvc repro`."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest
import yaml

PACKAGE = "portability_data"
REPO_ROOT = Path(__file__).resolve().parents[1]
# The module each stage's `portability` command runs (cli.py only parses and dispatches).
STAGE_ENTRY = {
    "enumerate": "pipeline.enumerate",
    "declared": "pipeline.declared",
    "frequencies": "pipeline.frequencies.build",
    "sample": "pipeline.sample",
    "cases": "pipeline.cases",
    "run": "pipeline.run_stage",
    "census": "pipeline.run_stage",
    "support_matrix": "pipeline.support_matrix",
    "crossframework": "pipeline.crossframework",
    "aggregate": "pipeline.aggregate.build",
    "reproduce": "pipeline.reproduce.build",
    "report": "report.build",
    "explorer": "report.explorer",
    "dataset": "dataset.build",
}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE, cache_dir=None)


@pytest.fixture(scope="module")
def stages() -> dict[str, dict]:
    return yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())["stages"]


def module_file(module: str) -> str:
    """The repository path of a module of the package (a package's own __init__.py)."""
    path = "src/" + module.replace(".", "/")
    return path + ".py" if (REPO_ROOT / (path + ".py")).exists() else path + "/__init__.py"


def test_every_stage_has_a_known_entry(stages: dict[str, dict]) -> None:
    assert set(stages) == set(STAGE_ENTRY), "add the new stage's entry module to STAGE_ENTRY"


@pytest.mark.parametrize("stage", sorted(STAGE_ENTRY))
def test_a_stage_depends_on_all_the_code_its_command_runs(
    stage: str, stages: dict[str, dict], graph: grimp.ImportGraph
) -> None:
    entry = f"{PACKAGE}.{STAGE_ENTRY[stage]}"
    assert stages[stage]["cmd"].startswith("portability "), stages[stage]["cmd"]
    deps = [str(dep).rstrip("/") for dep in stages[stage]["deps"]]
    needed = sorted(graph.find_upstream_modules(entry) | {entry})
    missing = []
    for module in needed:
        path = module_file(module)
        if path.endswith("__init__.py"):
            continue  # a package's docstring-only __init__ runs no stage code
        if not any(path == dep or path.startswith(dep + "/") for dep in deps):
            missing.append(path)
    assert not missing, f"dvc.yaml stage {stage!r} runs these but does not list them as deps: {missing}"
