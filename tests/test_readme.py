"""The README's analysis example runs, as written, on the repository's dataset folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_readme_analysis_example_runs(repo_root: Path, tmp_path: Path) -> None:
    if not list((repo_root / "data" / "outcomes").glob("*.parquet")):
        pytest.skip("data/outcomes not built (run dvc repro)")
    readme = (repo_root / "README.md").read_text()
    example = next(block.split("```")[0] for block in readme.split("```python\n") if "fails = " in block)
    assert len(example.strip().splitlines()) == 5
    out = subprocess.run(
        [sys.executable, "-c", example],
        cwd=repo_root,
        capture_output=True,
        text=True,
        check=False,
        env={
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_CACHE": str(tmp_path),
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
        },
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "mince2023" in out.stdout and "TPU v3-8" in out.stdout
