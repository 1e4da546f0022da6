"""docs/ARCHITECTURE.md says what the repository does (issue 56): one line per dvc.yaml stage, in its
order, with the stage's command, an existing module and every output; the import-linter contracts it
lists are .importlinter's; the sections the docstrings point to exist, and no docstring points to a
DESIGN.md any more, except in a frozen harness file (its bytes are in committed runs' digests)."""

from __future__ import annotations

import configparser
import re

import yaml

from tests.conftest import REPO_ROOT

DOC = (REPO_ROOT / "docs" / "ARCHITECTURE.md").read_text()
FROZEN = {"src/portability_data/runner/harness.py"}


def stage_lines() -> list[str]:
    block = DOC.split("<!-- stages:")[1].split("<!-- /stages -->")[0]
    return [line for line in block.splitlines()[1:] if line.startswith("- ")]


def test_one_line_per_stage_with_its_command_module_and_outputs() -> None:
    stages = yaml.safe_load((REPO_ROOT / "dvc.yaml").read_text())["stages"]
    lines = stage_lines()
    assert [re.match(r"- `(\w+)`:", line).group(1) for line in lines] == list(stages)
    for line, (name, stage) in zip(lines, stages.items()):
        command, module, outputs = line.split(": ", 1)[1].split("; ", 2)
        words = re.match(r"`(portability [^`]*)`", command).group(1)
        assert " ".join(stage["cmd"].split()).startswith(words), (name, words)
        path = REPO_ROOT / "src" / "portability_data" / re.match(r"`([^`]*)`", module).group(1)
        assert path.exists(), (name, path)
        for out in [*stage.get("outs", []), *stage.get("metrics", [])]:
            assert f"`{next(iter(out))}`" in outputs, (name, out)


def test_the_contracts_listed_are_import_linters() -> None:
    config = configparser.ConfigParser()
    config.read(REPO_ROOT / ".importlinter")
    contracts = {s.split(":")[-1] for s in config.sections() if s.startswith("importlinter:contract:")}
    listed = set(re.findall(r"^- \*\*([\w-]+)\*\*", DOC, flags=re.MULTILINE))
    assert listed == contracts


def test_docstrings_point_to_sections_that_exist() -> None:
    sections = set(re.findall(r"^## (.+)$", DOC, flags=re.MULTILINE))
    pointers = 0
    for file in sorted((REPO_ROOT / "src").rglob("*.py")):
        text = file.read_text()
        relative = str(file.relative_to(REPO_ROOT))
        if relative not in FROZEN:
            assert "DESIGN.md" not in text, f"{relative} points to DESIGN.md, which is not in the repository"
        for section in re.findall(r'docs/ARCHITECTURE\.md,\s+"([^"]+)"', text):
            assert section in sections, (relative, section)
            pointers += 1
    assert pointers >= 4
