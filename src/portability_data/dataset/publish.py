"""Publishing the dataset folder to the Hugging Face Hub, only when it is valid and matches dvc.lock.

Everything up to the upload is checked here and tested offline: every file of every config reads
against its contract, README.md and croissant.json exist and name every config, and each DVC
output in data/ has the hash dvc.lock recorded (so what is published is what the pipeline made).
The folder's croissant.json reads the files beside it (a checkout, offline); the Hub copy gets
the Hub variant instead, whose files are in the Hub repo at the release tag, in the same commit.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from portability_data.tables.contracts import TABLES

# Never uploaded: the runner's journal and hidden files (temp files of atomic writes, .gitignore).
UPLOAD_IGNORE = [".journal/*", ".*", "**/.*"]


class PublishError(RuntimeError):
    """The folder may not be published; the message says what is wrong and what to do."""


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_folder(data_dir: Path, lock_path: Path | None = None) -> list[str]:
    """Every reason the folder cannot be published (empty when it can)."""
    from portability_data.dataset.folder import files_of
    from portability_data.tables.tableio import TableValidationError, read_file

    problems = []
    data_dir = Path(data_dir)
    for name in ("README.md", "croissant.json"):
        if not (data_dir / name).exists():
            problems.append(f"{data_dir / name} is missing; run `portability dataset build`")
    readme = (data_dir / "README.md").read_text(encoding="utf-8") if (data_dir / "README.md").exists() else ""
    for table in TABLES:
        if f"config_name: {table}" not in readme and readme:
            problems.append(
                f"{data_dir / 'README.md'} declares no config {table!r}; run `portability dataset build`"
            )
        for file in files_of(data_dir, table):
            try:
                read_file(table, file)
            except TableValidationError as exc:
                problems.append(str(exc))
    if (data_dir / "croissant.json").exists():
        meta = json.loads((data_dir / "croissant.json").read_text())
        names = {r["name"] for r in meta.get("recordSet", [])}
        if names != set(TABLES):
            problems.append(f"croissant.json record sets {sorted(names)} != configs {sorted(TABLES)}")
        from portability_data.dataset.croissant import is_local

        if not is_local(meta):
            problems.append(
                f"{data_dir / 'croissant.json'} points at files outside the folder (built by older "
                "code); run `portability dataset build`"
            )
    if lock_path is not None:
        problems += _lock_mismatches(data_dir, Path(lock_path))
    return problems


def _lock_mismatches(data_dir: Path, lock_path: Path) -> list[str]:
    """Outputs under data/ whose content differs from the md5 dvc.lock recorded for them."""
    import yaml

    if not lock_path.exists():
        return [f"{lock_path} is missing; run `dvc repro` and commit dvc.lock"]
    lock = yaml.safe_load(lock_path.read_text())
    root = lock_path.parent
    problems = []
    for stage, entry in (lock.get("stages") or {}).items():
        for out in entry.get("outs", []):
            path = root / out["path"]
            if not path.resolve().is_relative_to(Path(data_dir).resolve()) or path.is_dir():
                continue
            if not path.exists():
                problems.append(f"{out['path']} (stage {stage}) is missing; run `dvc repro`")
            elif out.get("md5") and _md5(path) != out["md5"]:
                problems.append(
                    f"{out['path']} differs from dvc.lock (stage {stage}); run `dvc repro` "
                    "and commit, or `dvc checkout`"
                )
    return problems


def hub_croissant(data_dir: Path, repo_id: str, revision: str | None) -> bytes:
    """The Hub variant of the folder's croissant.json: the same document, its files in `repo_id`
    at tag `revision` (so a client given only the Hub URL can fetch them)."""
    from portability_data.dataset.croissant import hub_variant

    local = json.loads((Path(data_dir) / "croissant.json").read_text(encoding="utf-8"))
    return (json.dumps(hub_variant(local, repo_id, revision), indent=2) + "\n").encode()


def upload_operations(data_dir: Path, repo_id: str, revision: str | None) -> list[Any]:
    """One commit's additions: every file of the folder (hidden ones and the journal left out),
    with croissant.json replaced by its Hub variant, so that no revision of the Hub repo holds the
    local variant, which would point a Hub client at files it does not have."""
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.utils import DEFAULT_IGNORE_PATTERNS, filter_repo_objects

    data_dir = Path(data_dir)
    files = {
        path.relative_to(data_dir).as_posix(): path for path in sorted(data_dir.rglob("*")) if path.is_file()
    }
    kept = filter_repo_objects(list(files), ignore_patterns=UPLOAD_IGNORE + DEFAULT_IGNORE_PATTERNS)
    operations = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(files[name]))
        for name in kept
        if name != "croissant.json"
    ]
    operations.append(
        CommitOperationAdd(
            path_in_repo="croissant.json", path_or_fileobj=hub_croissant(data_dir, repo_id, revision)
        )
    )
    return operations


def publish_folder(
    data_dir: Path,
    repo_id: str,
    revision: str | None = None,
    create_pr: bool = False,
    lock_path: Path | None = Path("dvc.lock"),
    api: Any = None,
) -> Any:
    """Upload the folder after checking it, in one commit (tagged `revision`), croissant.json as
    its Hub variant; without network, fail with a clear message."""
    problems = check_folder(data_dir, lock_path)
    if problems:
        raise PublishError("refusing to publish:\n" + "\n".join(f"  - {p}" for p in problems))
    if "/" not in repo_id:
        raise PublishError(f"--repo-id must be <namespace>/<name>, got {repo_id!r}")
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    operations = upload_operations(Path(data_dir), repo_id, revision)
    api = api or HfApi()
    try:
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        result = api.create_commit(
            repo_id=repo_id,
            repo_type="dataset",
            operations=operations,
            commit_message=f"portability dataset {revision or ''}".strip(),
            create_pr=create_pr,
        )
        if revision:
            api.create_tag(repo_id, tag=revision, repo_type="dataset", exist_ok=True)
    except (OfflineModeIsEnabled, OSError, HfHubHTTPError) as exc:
        raise PublishError(
            f"cannot reach the Hugging Face Hub to publish {repo_id} ({type(exc).__name__}: "
            f"{exc}); check the network and `huggingface-cli login`, then retry"
        ) from None
    return result
