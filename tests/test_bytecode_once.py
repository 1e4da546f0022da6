"""The suite's bytecode where no process writes it (issue 57): this project's machines set
PYTHONDONTWRITEBYTECODE, so tests/conftest.py compiles src/ and tests/ once before the workers start."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from tests.conftest import bytecode_once


def test_the_suite_compiles_our_modules_once_where_no_process_writes_bytecode(tmp_path: Path) -> None:
    """tests/conftest.py bytecode_once: with PYTHONDONTWRITEBYTECODE set, src/ and tests/ are compiled
    before the workers start, and a process then reads that bytecode; without it, nothing is done."""
    for root in (tmp_path / "set", tmp_path / "unset"):
        for folder in ("src/pkg", "tests"):
            (root / folder).mkdir(parents=True)
            (root / folder / "mod.py").write_text("VALUE = 1\n")
    bytecode_once(True, tmp_path / "set")
    bytecode_once(False, tmp_path / "unset")
    for folder in ("src/pkg", "tests"):
        assert Path(importlib.util.cache_from_source(str(tmp_path / "set" / folder / "mod.py"))).exists()
        unset = importlib.util.cache_from_source(str(tmp_path / "unset" / folder / "mod.py"))
        assert not Path(unset).exists()
    loaded = subprocess.run(
        [sys.executable, "-B", "-v", "-c", "import pkg.mod"],
        cwd=tmp_path / "set" / "src",
        capture_output=True,
        text=True,
        check=True,
    )
    assert "matches" in loaded.stderr and "pkg/__pycache__/mod." in loaded.stderr  # read, not compiled
