"""The package layout is the architecture: the layer contracts of `.importlinter` hold, and break
when a module crosses a layer; no module grows past a screenful of screens; no private name leaks."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "portability_data"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
MAX_LINES = 600
# No exceptions: the harness was split (harness, backends, timing) with the re-run that followed.
OVERSIZE_ALLOWED: set[str] = set()
# The openvino path subclasses torch.compile's call (its graph breaks and retry) to unwrap its own
# stage errors; making the class public renames it in backends.py, a byte of the shared core that
# re-measures every setting, so it waits for the next harness change (issue 51).
PRIVATE_IMPORTS_ALLOWED: set[tuple[str, str]] = {("portability_data.runner.backends", "_TorchCompiled")}


def lint_imports(root: Path, src: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / ".importlinter"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_layer_contracts_hold(repo_root: Path) -> None:
    found = lint_imports(repo_root, repo_root / "src")
    assert found.returncode == 0, found.stdout + found.stderr
    assert "Contracts: 6 kept, 0 broken." in found.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("runner/failures.py", "import pandas", "Runner: light core"),
        ("runner/supervisor.py", "from portability_data.pipeline import aggregate", "Runner: light core"),
        ("tables/contracts.py", "from portability_data.runner import case_rows", "Tables import no"),
        ("pipeline/aggregate/build.py", "from portability_data.report import build", "Layers"),
        ("dataset/folder.py", "from portability_data.dataset import build", "No import cycles at any depth"),
        ("pipeline/bench_estimate.py", "import pandas", "Bench estimate: light core"),
        (
            "report/census.py",
            "from portability_data.pipeline import crossframework",
            "The report and the dataset",
        ),
        (
            "dataset/croissant.py",
            "from portability_data.pipeline.aggregate import build",
            "The report and the",
        ),
        ("readings/quiet.py", "from portability_data.pipeline import params", "Layers"),
    ],
)
def test_a_module_that_crosses_a_layer_breaks_its_contract(
    repo_root: Path, tmp_path: Path, module: str, line: str, contract: str
) -> None:
    """The check can fail: a copy of the package with one forbidden import is refused, by name."""
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "portability_data", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(repo_root / ".importlinter", tmp_path / ".importlinter")
    target = src / "portability_data" / module
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    found = lint_imports(tmp_path, src)
    assert found.returncode == 1, found.stdout
    broken = [text for text in found.stdout.splitlines() if text.endswith("BROKEN")]
    assert any(text.startswith(contract) for text in broken), found.stdout


def test_no_module_is_longer_than_a_reader_can_hold() -> None:
    lengths = {
        str(path.relative_to(PACKAGE)): len(path.read_text().splitlines()) for path in PACKAGE.rglob("*.py")
    }
    too_long = {name: n for name, n in lengths.items() if n > MAX_LINES and name not in OVERSIZE_ALLOWED}
    assert not too_long, f"split these modules (over {MAX_LINES} lines): {too_long}"


def test_no_private_name_is_imported_from_another_module() -> None:
    """A name used across modules is public: `_name` imported elsewhere says it should not be."""
    leaks = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("portability_data"):
                for alias in node.names:
                    private = alias.name.startswith("_") and not alias.name.startswith("__")
                    if private and (node.module, alias.name) not in PRIVATE_IMPORTS_ALLOWED:
                        leaks.append(f"{path.relative_to(PACKAGE)}: {node.module}.{alias.name}")
    assert not leaks, leaks
