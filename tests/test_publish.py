"""Publishing: everything up to the upload is checked offline; bad folders are refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from portability_data.dataset.croissant import hub_variant
from portability_data.dataset.publish import PublishError, check_folder, publish_folder
from portability_data.tables.tableio import write_table
from tests.conftest import example_rows, write_example_dataset


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    write_example_dataset(folder)
    return folder


def _lock_for(data_dir: Path) -> Path:
    outs = [
        {"path": f"data/{p.relative_to(data_dir)}", "md5": hashlib.md5(p.read_bytes()).hexdigest()}
        for p in sorted(data_dir.rglob("*.parquet"))
    ]
    lock = data_dir.parent / "dvc.lock"
    lock.write_text(yaml.safe_dump({"schema": "2.0", "stages": {"all": {"cmd": "x", "outs": outs}}}))
    return lock


def test_valid_folder_passes(data_dir: Path) -> None:
    assert check_folder(data_dir, _lock_for(data_dir)) == []


def test_corrupt_shard_is_refused(data_dir: Path) -> None:
    (data_dir / "results" / "portability" / "bad.parquet").write_bytes(b"nope")
    with pytest.raises(PublishError, match=r"refusing to publish:[\s\S]*bad\.parquet"):
        publish_folder(data_dir, "ns/portability", lock_path=None)


def test_table_that_disagrees_with_dvc_lock_is_refused(data_dir: Path) -> None:
    lock = _lock_for(data_dir)
    rows = [{**example_rows()["api"][0], "name": "argsort", "framework_version": "9.9.9"}]
    write_table("api", pd.DataFrame(rows), data_dir / "api" / "api.parquet")
    problems = check_folder(data_dir, lock)
    assert problems == [
        "data/api/api.parquet differs from dvc.lock (stage all); run `dvc repro` and commit, "
        "or `dvc checkout`"
    ]


def test_missing_card_is_refused(data_dir: Path) -> None:
    (data_dir / "README.md").unlink()
    assert any("README.md is missing" in p for p in check_folder(data_dir, None))


def test_offline_publish_fails_with_a_clear_message(data_dir: Path) -> None:
    with pytest.raises(PublishError, match="cannot reach the Hugging Face Hub to publish ns/portability"):
        publish_folder(data_dir, "ns/portability", revision="v0.1.0", lock_path=_lock_for(data_dir))


def test_upload_is_one_commit_with_the_hub_croissant(data_dir: Path) -> None:
    calls: list[tuple[str, dict]] = []
    (data_dir / ".journal").mkdir()
    (data_dir / ".journal" / "run.json").write_text("{}")

    class RecordingApi:
        def create_repo(self, repo_id: str, **kwargs: object) -> None:
            calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))

        def create_commit(self, **kwargs: object) -> str:
            calls.append(("create_commit", kwargs))
            return "commit"

        def create_tag(self, repo_id: str, **kwargs: object) -> None:
            calls.append(("create_tag", {"repo_id": repo_id, **kwargs}))

    assert (
        publish_folder(data_dir, "ns/portability", revision="v0.1.0", lock_path=None, api=RecordingApi())
        == "commit"
    )
    assert [name for name, _ in calls] == ["create_repo", "create_commit", "create_tag"]
    commit = calls[1][1]
    assert commit["repo_id"] == "ns/portability" and commit["repo_type"] == "dataset"
    uploaded = {op.path_in_repo: op.path_or_fileobj for op in commit["operations"]}
    expected = {
        p.relative_to(data_dir).as_posix()
        for p in data_dir.rglob("*")
        if p.is_file() and ".journal" not in p.parts
    }
    assert set(uploaded) == expected and len(commit["operations"]) == len(expected)  # each once, no journal
    assert uploaded["README.md"] == str(data_dir / "README.md")
    hub = json.loads(uploaded["croissant.json"])
    assert hub["distribution"][0]["contentUrl"] == (
        "https://huggingface.co/datasets/ns/portability/tree/refs%2Ftags%2Fv0.1.0"
    )
    assert all(entry["containedIn"] == {"@id": "hub-repo"} for entry in hub["distribution"][1:])
    local = json.loads((data_dir / "croissant.json").read_text())
    assert "containedIn" not in json.dumps(local["distribution"])  # the folder keeps the local one
    assert hub["recordSet"] == local["recordSet"]
    assert calls[2][1]["tag"] == "v0.1.0"


def test_croissant_from_older_code_is_refused(data_dir: Path) -> None:
    meta = json.loads((data_dir / "croissant.json").read_text())
    (data_dir / "croissant.json").write_text(json.dumps(hub_variant(meta, "ns/portability")))
    assert check_folder(data_dir, None) == [
        f"{data_dir / 'croissant.json'} points at files outside the folder (built by older code); "
        "run `portability dataset build`"
    ]
