"""Every Python example of the README and the dataset card runs, as written, from the checkout."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCUMENTS = ("README.md", "DATASET_CARD.md")


def python_blocks(text: str) -> list[str]:
    return [block.split("```")[0] for block in text.split("```python\n")[1:]]


def run_example(code: str, repo_root: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=repo_root,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "HF_DATASETS_CACHE": str(tmp_path),
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
        },
    )


EXAMPLES = [
    (document, index)
    for document in DOCUMENTS
    for index, _ in enumerate(python_blocks((Path(__file__).parent.parent / document).read_text()))
]


@pytest.mark.parametrize(("document", "index"), EXAMPLES, ids=[f"{d}-{i}" for d, i in EXAMPLES])
def test_every_python_example_runs(document: str, index: int, repo_root: Path, tmp_path: Path) -> None:
    if not list((repo_root / "data" / "outcomes").glob("*.parquet")):
        pytest.skip("data/outcomes not built (run dvc repro)")
    code = python_blocks((repo_root / document).read_text())[index]
    out = run_example(code, repo_root, tmp_path)
    assert out.returncode == 0, f"{document} example {index} failed:\n{code}\n{out.stderr[-3000:]}"


def test_readme_has_the_loading_and_analysis_examples(repo_root: Path, tmp_path: Path) -> None:
    blocks = python_blocks((repo_root / "README.md").read_text())
    loading = next(b for b in blocks if 'revision="v0.1.0"' in b)
    assert 'load_dataset(checkout, "outcomes"' in loading
    analysis = next(b for b in blocks if "fails = " in b)
    assert len(analysis.strip().splitlines()) == 5
    out = run_example(analysis, repo_root, tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "mince2023" in out.stdout and "TPU v3-8" in out.stdout
    # modes apart (issue 59): TensorFlow's eager and compiled shares are not pooled into one number
    assert '"mode"' in analysis and "compiled" in out.stdout and "eager" in out.stdout


def test_the_readme_lists_every_table_once_in_the_records_order(repo_root: Path) -> None:
    """The README's table of tables is the records' list (a table added without its line, as `pooled`
    once was, fails here)."""
    from portability_data.tables.contracts import RECORDS

    readme = (repo_root / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("| `api` |") : readme.index("Every column is documented")]
    listed = re.findall(r"^\| `(\w+)` \|", block, flags=re.MULTILINE)
    assert listed == list(RECORDS)
