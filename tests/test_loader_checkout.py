"""`portability_data.load_dataset` reads the checkout it was installed from, whatever the current
directory and whatever the clone's folder is named; the plain `datasets` loader reads any clone by
its path (only a clone named `portability` by name); a load that cannot work says why (issue 59)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import datasets
import pandas as pd
import pytest

import portability_data
from portability_data.dataset.folder import features_of
from tests.conftest import REPO_ROOT, example_rows, write_example_dataset


def clone_named(tmp_path: Path, name: str) -> Path:
    """A copy of the checkout's code under `name` (not `portability`) with an example data/ folder
    of known row counts (write_example_dataset also writes the clone's .huggingface.yaml)."""
    clone = tmp_path / name
    shutil.copytree(REPO_ROOT / "src", clone / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / "pyproject.toml", clone / "pyproject.toml")
    write_example_dataset(clone / "data")
    return clone


def python_in(cwd: Path, code: str, src: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter whose portability_data is the one under `src`, run from `cwd`."""
    env = {
        **os.environ,
        "PYTHONPATH": str(src),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(tmp_path / "hf-cache"),
    }
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_the_installed_checkout_loads_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not list((REPO_ROOT / "data" / "outcomes").glob("*.parquet")):
        pytest.skip("data/outcomes not built (run dvc repro)")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no data/ here: the checkout is found from the package
    loaded = portability_data.load_dataset("outcomes", cache_dir=str(tmp_path / "cache"))
    assert loaded.num_rows == len(pd.read_parquet(REPO_ROOT / "data" / "outcomes"))
    assert loaded.features == features_of("outcomes")


def test_a_clone_not_named_portability_loads_from_anywhere(tmp_path: Path) -> None:
    clone = clone_named(tmp_path, "my-fork-of-the-benchmark")
    elsewhere = tmp_path / "somewhere" / "else"
    elsewhere.mkdir(parents=True)
    code = (
        "import portability_data\n"
        "from portability_data.dataset.loader import installed_checkout\n"
        "print(installed_checkout())\n"
        "load = portability_data.load_dataset\n"
        "print(load('results').num_rows, load('cases').num_rows)\n"
    )
    done = python_in(elsewhere, code, clone / "src", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    where, counts = done.stdout.strip().splitlines()[-2:]
    assert Path(where) == clone.resolve()  # this clone's data, not the checkout running the tests
    assert counts.split() == [str(len(example_rows()["results"])), str(len(example_rows()["cases"]))]
    # the plain `datasets` loader, as the README says: the clone's path works from anywhere ...
    by_path = datasets.load_dataset(str(clone), "results", split="train", cache_dir=str(tmp_path / "c"))
    assert by_path.num_rows == len(example_rows()["results"])
    # ... while the bare name `portability` means a folder of that name in the current directory
    by_name = python_in(
        clone.parent, "import datasets; datasets.load_dataset('portability', 'results', split='train')",
        clone / "src", tmp_path,
    )  # fmt: skip
    assert by_name.returncode != 0 and "portability" in by_name.stderr


def test_a_package_installed_without_a_checkout_says_so(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    shutil.copytree(
        REPO_ROOT / "src" / "portability_data",
        site / "portability_data",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    done = python_in(
        tmp_path, "import portability_data; portability_data.load_dataset('results')", site, tmp_path
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert f"portability_data is installed at {site / 'portability_data'}, not from a checkout" in last
    assert 'data_dir="<clone>/data"' in last and "dvc repro" not in last


def test_a_missing_folder_or_table_names_the_cause(tmp_path: Path) -> None:
    with pytest.raises(
        FileNotFoundError, match=r"nowhere/data: no such dataset folder; pass the data/ folder"
    ):
        portability_data.load_dataset("results", data_dir=tmp_path / "nowhere" / "data")
    empty = tmp_path / "data"
    (empty / "outcomes").mkdir(parents=True)
    with pytest.raises(
        FileNotFoundError, match=r"no 'outcomes' files \(outcomes/\*\.parquet\) in this dataset"
    ):
        portability_data.load_dataset("outcomes", data_dir=empty)
