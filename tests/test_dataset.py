"""The dataset folder loads with the real `datasets` offline, for every config, and stays fresh."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import datasets
import pandas as pd
import pytest

import portability_data
from portability_data.dataset.folder import features_of
from portability_data.tables.contracts import TABLES
from portability_data.tables.tableio import TableValidationError, write_table
from tests.conftest import REPO_ROOT, example_rows, write_example_dataset


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    write_example_dataset(folder)
    return folder


@pytest.mark.parametrize("config", list(TABLES))
def test_every_config_loads_by_folder_name_with_declared_features(
    data_dir: Path, config: str, tmp_path: Path
) -> None:
    loaded = datasets.load_dataset(str(data_dir), config, split="train", cache_dir=str(tmp_path / "cache"))
    assert loaded.features == features_of(config)
    assert loaded.num_rows == len(example_rows()[config])


def test_readme_declares_configs_and_features(data_dir: Path) -> None:
    readme = (data_dir / "README.md").read_text()
    assert readme.startswith("---\n")
    for config in TABLES:
        assert f"config_name: {config}" in readme
    assert "dtype: timestamp[us, tz=UTC]" in readme
    assert "# Dataset Card for portability" in readme and "version 0.1.0" in readme


def test_loader_sees_a_new_shard(data_dir: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    before = portability_data.load_dataset("results", data_dir=data_dir, cache_dir=cache)
    assert before.num_rows == 2
    # the plain `datasets` loader, cached on the README's globs, does not notice new files:
    plain_before = datasets.load_dataset(str(data_dir), "results", split="train", cache_dir=cache)
    row = {**example_rows()["results"][0], "run_id": "torch-cpu-eager-2"}
    write_table(
        "results", pd.DataFrame([row]), data_dir / "results" / "portability" / "torch-cpu-eager-2.parquet"
    )
    after = portability_data.load_dataset("results", data_dir=data_dir, cache_dir=cache)
    assert after.num_rows == 3
    assert sorted(set(after["run_id"])) == ["torch-cpu-eager-1", "torch-cpu-eager-2"]
    plain_after = datasets.load_dataset(str(data_dir), "results", split="train", cache_dir=cache)
    # why the guard exists: at the pinned `datasets`, the folder loader serves its stale cache
    assert (plain_before.num_rows, plain_after.num_rows) == (2, 2)


def test_loader_names_a_corrupt_shard(data_dir: Path, tmp_path: Path) -> None:
    bad = data_dir / "results" / "portability" / "broken.parquet"
    bad.write_bytes(b"")
    with pytest.raises(TableValidationError, match=r"broken\.parquet"):
        portability_data.load_dataset("results", data_dir=data_dir, cache_dir=str(tmp_path / "cache"))


def test_unknown_config_is_refused(data_dir: Path) -> None:
    with pytest.raises(ValueError, match="unknown config 'resultz'; known configs: api, frequencies"):
        portability_data.load_dataset("resultz", data_dir=data_dir)


def test_repository_dataset_folder_loads(repo_root: Path, tmp_path: Path) -> None:
    data = repo_root / "data"
    if not (data / "README.md").exists():
        pytest.skip("data/README.md not built yet (dvc repro)")
    copy = tmp_path / "data"
    shutil.copytree(data, copy, ignore=shutil.ignore_patterns(".journal"))
    for config in TABLES:
        if list(copy.glob(f"{config}/**/*.parquet")):
            loaded = datasets.load_dataset(
                str(copy), config, split="train", cache_dir=str(tmp_path / "cache")
            )
            assert loaded.features == features_of(config)


def test_local_revision_loads_the_tagged_release(data_dir: Path, tmp_path: Path) -> None:
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=data_dir.parent,
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "release")
    git("tag", "v0.0.1")
    row = {**example_rows()["results"][0], "run_id": "torch-cpu-eager-3"}
    write_table(
        "results", pd.DataFrame([row]), data_dir / "results" / "portability" / "torch-cpu-eager-3.parquet"
    )
    cache = str(tmp_path / "cache")
    assert portability_data.load_dataset("results", data_dir=data_dir, cache_dir=cache).num_rows == 3
    tagged = portability_data.load_dataset("results", revision="v0.0.1", data_dir=data_dir, cache_dir=cache)
    assert tagged.num_rows == 2
    with pytest.raises(ValueError, match="unknown revision 'v9'"):
        portability_data.load_dataset("results", revision="v9", data_dir=data_dir, cache_dir=cache)


def test_a_rebuilt_card_is_seen_by_the_plain_loader(data_dir: Path, tmp_path: Path) -> None:
    """The card declares each config's rows, which `datasets` checks and keys its cache on: after
    the dataset stage rebuilds it, the plain loader serves the new shard, not its stale cache."""
    from portability_data.dataset.build import build_dataset

    cache = str(tmp_path / "cache")
    assert datasets.load_dataset(str(data_dir), "results", split="train", cache_dir=cache).num_rows == 2
    row = {**example_rows()["results"][0], "run_id": "torch-cpu-eager-2"}
    write_table(
        "results", pd.DataFrame([row]), data_dir / "results" / "portability" / "torch-cpu-eager-2.parquet"
    )
    # A fresh cache and a card that was not rebuilt: the declared row count is checked, loudly.
    with pytest.raises(datasets.exceptions.NonMatchingSplitsSizesError):
        datasets.load_dataset(str(data_dir), "results", split="train", cache_dir=str(tmp_path / "fresh"))
    build_dataset(data_dir, REPO_ROOT / "DATASET_CARD.md", {"version": "0.1.0", "namespace": "n"})
    assert datasets.load_dataset(str(data_dir), "results", split="train", cache_dir=cache).num_rows == 3


def test_the_checkout_loads_by_name_from_its_parent_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`load_dataset("portability", config)` from the parent of a checkout named portability: the
    checkout's .huggingface.yaml declares the configs under data/, so nothing scans the tree."""
    checkout = tmp_path / "parent" / "portability"
    write_example_dataset(checkout / "data")  # writes checkout/.huggingface.yaml beside data/
    assert (checkout / ".huggingface.yaml").is_file()
    (checkout / "scripts").mkdir()
    (checkout / "scripts" / "not_a_table.csv").write_text("a,b\n1,2\n")  # a scan would trip on this
    monkeypatch.chdir(checkout.parent)
    for config in TABLES:
        loaded = datasets.load_dataset("portability", config, split="train", cache_dir=str(tmp_path / "c"))
        assert loaded.features == features_of(config) and loaded.num_rows == len(example_rows()[config])


def test_the_repository_checkout_itself_is_a_dataset_repo(repo_root: Path, tmp_path: Path) -> None:
    from portability_data.dataset.folder import checkout_yaml

    declared = repo_root / ".huggingface.yaml"
    if not declared.exists():
        pytest.skip(".huggingface.yaml not built yet (dvc repro)")
    import yaml

    version = str(yaml.safe_load((repo_root / "params.yaml").read_text())["dataset"]["version"])
    assert declared.read_text() == checkout_yaml(version, repo_root / "data"), "run dvc repro"
    (tmp_path / "parent").mkdir()
    (tmp_path / "parent" / "portability").symlink_to(repo_root)
    loaded = datasets.load_dataset(
        str(tmp_path / "parent" / "portability"), "outcomes", split="train", cache_dir=str(tmp_path / "c")
    )
    assert loaded.num_rows == pd.read_parquet(repo_root / "data" / "outcomes").shape[0]


def test_a_release_is_found_by_the_version_the_data_records(tmp_path: Path) -> None:
    """No tag in a clone: `revision="v0.1.0"` is the last commit whose params.yaml says 0.1.0."""
    import subprocess

    from portability_data.dataset.loader import resolve_revision

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path, check=True, capture_output=True, text=True,
        )  # fmt: skip
        return done.stdout.strip()

    def commit(params_version: str, note: str) -> str:
        (tmp_path / "params.yaml").write_text(f'dataset:\n  version: "{params_version}"\n')
        (tmp_path / "note.txt").write_text(note)
        git("add", "-A")
        git("commit", "-qm", note)
        return git("rev-parse", "HEAD")

    git("init", "-q")
    commit("0.1.0", "first")
    last_of_010 = commit("0.1.0", "more data in 0.1.0")
    commit("0.2.0", "release 0.2.0")
    head = commit("0.2.0", "more data in 0.2.0")
    assert resolve_revision(tmp_path, "v0.1.0") == last_of_010
    assert resolve_revision(tmp_path, "0.2.0") == head == resolve_revision(tmp_path, "HEAD")
    with pytest.raises(ValueError, match=r"no commit of .* records dataset.version 0.3.0"):
        resolve_revision(tmp_path, "v0.3.0")


def test_the_card_shows_the_dataset_version_it_was_synced_to(tmp_path: Path) -> None:
    """DATASET_CARD.md renders the version (no `{{version}}` placeholder): `portability dataset card`
    writes params.yaml's dataset.version into it, and data/README.md carries the bare version."""
    import subprocess
    import sys

    import yaml

    from portability_data.dataset.folder import card_version, render_readme

    card = (REPO_ROOT / "DATASET_CARD.md").read_text()
    version = str(yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["dataset"]["version"])
    assert "{{" not in card
    assert card_version(card) == version, "run `portability dataset card` after changing dataset.version"
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "DATASET_CARD.md").write_text(card)
    params = (REPO_ROOT / "params.yaml").read_text()
    (checkout / "params.yaml").write_text(params.replace(f'version: "{version}"', 'version: "9.9.9"'))
    done = subprocess.run(
        [sys.executable, "-m", "portability_data.cli", "dataset", "card"],
        cwd=checkout, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "DATASET_CARD.md updated (version 9.9.9)" in done.stdout
    synced = (checkout / "DATASET_CARD.md").read_text()
    assert "This is version <!-- version -->9.9.9<!-- /version --> of the dataset." in synced
    rendered = render_readme(checkout / "DATASET_CARD.md", "9.9.9")
    assert "This is version 9.9.9 of the dataset." in rendered and "<!-- version -->" not in rendered
