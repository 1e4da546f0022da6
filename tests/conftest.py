"""Shared fixtures: an offline Hub, the repository root, and throwaway case repositories."""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE_DIR = REPO_ROOT.parent / "shared" / "reference" / "mince2023"


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


class CaseRepo:
    """A minimal repository with cases/ (and the real harness conftest) for runner tests."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "cases").mkdir(parents=True)
        shutil.copy(REPO_ROOT / "cases" / "conftest.py", root / "cases" / "conftest.py")

    def add(self, framework: str, slug: str, test_source: str, function: str | None = None) -> str:
        folder = self.root / "cases" / framework
        folder.mkdir(exist_ok=True)
        function = function or f"{framework}.{slug}"
        (folder / f"test_{slug}.py").write_text(textwrap.dedent(test_source))
        (folder / f"{slug}.yaml").write_text(textwrap.dedent(f"""\
            schema_version: 1
            case_id: {function}
            framework: {framework}
            function: {function}
            test_file: cases/{framework}/test_{slug}.py
            upstream_test: null
            samples: []
            status: active
            notes: made by a test
            """))
        return function


@pytest.fixture
def case_repo(tmp_path: Path) -> CaseRepo:
    return CaseRepo(tmp_path / "repo")
