"""The loader: one table as a Hugging Face `datasets.Dataset`, from a checkout (offline) or the Hub.

`datasets` caches a local folder by its README globs, not by the files, so a new shard would be
invisible to a cached load; `load_dataset` here passes the resolved file list (with sizes and
modification times) so that any new or changed file gives a new cache entry.

By default it reads the data/ of the checkout this package was installed from (`pip install -e`),
wherever it is called from and whatever the clone's folder is named: `datasets.load_dataset(
"portability", ...)` finds a checkout by its folder's name in the current directory, this does not.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from portability_data.dataset.folder import CONFIG_FILES, DEFAULT_CONFIG, HUB_REPO_ID, features_of, files_of


def fingerprint(files: list[Path]) -> str:
    """A digest of the file list with sizes and modification times: what the cache must key on."""
    digest = hashlib.sha256()
    for path in files:
        stat = path.stat()
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


class _InstalledCheckout:
    """The default `data_dir`: the data/ folder of the checkout this package was installed from."""

    def __repr__(self) -> str:
        return "<the data/ of the checkout portability_data was installed from>"


CHECKOUT = _InstalledCheckout()


def installed_checkout() -> Path | None:
    """The checkout this package runs from (src/portability_data/ under it, beside pyproject.toml),
    or None where it was installed as a wheel and carries no checkout."""
    root = Path(__file__).resolve().parents[3]  # <checkout>/src/portability_data/dataset/loader.py
    is_checkout = (root / "pyproject.toml").is_file() and (root / "src" / "portability_data").is_dir()
    return root if is_checkout else None


def dataset_folder(data_dir: str | os.PathLike[str] | _InstalledCheckout) -> Path:
    """The dataset folder to read: `data_dir` as given (relative to the current directory), or the
    installed checkout's data/; a folder that is not there is refused with what to pass instead."""
    if not isinstance(data_dir, _InstalledCheckout):
        folder = Path(data_dir)
        if not folder.is_dir():
            raise FileNotFoundError(
                f"{folder.resolve()}: no such dataset folder; pass the data/ folder of a checkout "
                '(data_dir="<checkout>/data"), or leave data_dir out to read the checkout this package '
                "was installed from"
            )
        return folder
    root = installed_checkout()
    if root is None:
        raise FileNotFoundError(
            f"portability_data is installed at {Path(__file__).resolve().parents[1]}, not from a checkout "
            "(a wheel carries no data): install it from a clone (`pip install -e <clone>`), pass "
            'data_dir="<clone>/data", or read the Hub copy with data_dir=None'
        )
    if not (root / "data").is_dir():
        raise FileNotFoundError(
            f"{root}: the checkout portability_data was installed from has no data/ folder; restore it "
            f'(`git -C {root} checkout -- data`) or pass data_dir="<another checkout>/data"'
        )
    return root / "data"


def load_dataset(
    config: str = DEFAULT_CONFIG,
    revision: str | None = None,
    *,
    data_dir: str | os.PathLike[str] | _InstalledCheckout | None = CHECKOUT,
    repo_id: str = HUB_REPO_ID,
    split: str = "train",
    cache_dir: str | None = None,
) -> Any:
    """One table as a `datasets.Dataset`: from a local dataset folder (by default the data/ of
    the checkout this package was installed from, wherever it is called; offline), or from the
    Hub (`data_dir=None`), pinned to `revision` (a release tag such as v0.1.0).

    Locally the files are resolved here and handed over with the declared features; the cache
    entry is keyed on their fingerprint, so a shard added since the last load is always seen.
    Files are validated against the contract first: a bad shard fails with its name."""
    import datasets

    if config not in CONFIG_FILES:
        raise ValueError(f"unknown config {config!r}; known configs: {', '.join(CONFIG_FILES)}")
    if data_dir is None:
        return datasets.load_dataset(repo_id, config, revision=revision, split=split, cache_dir=cache_dir)
    folder = dataset_folder(data_dir)
    if revision is not None:
        folder = _checkout_revision(folder, revision)
    files = files_of(folder, config)
    if not files:
        raise FileNotFoundError(
            f"{folder.resolve()}: no {config!r} files ({CONFIG_FILES[config]}) in this dataset folder"
            + (f" at {revision}" if revision is not None else "")
            + "; the pipeline makes them (`dvc repro` in the checkout), or pass the data_dir that holds them"
        )
    from portability_data.tables.tableio import read_file

    for file in files:  # a corrupt or drifted shard stops the load, naming the file
        read_file(config, file)
    return datasets.load_dataset(
        "parquet",
        data_files={split: [str(p) for p in files]},
        features=features_of(config),
        split=split,
        cache_dir=cache_dir,
        name=f"{config}-{fingerprint(files)}",
    )


def _checkout_revision(folder: Path, revision: str) -> Path:
    """The dataset folder as it was at a git revision (a release tag), exported to a temp folder."""
    import subprocess
    import tempfile

    repo = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    if repo.returncode != 0:
        raise ValueError(f"{folder} is not in a git checkout; a local revision needs git")
    root = Path(repo.stdout.strip())
    relative = folder.resolve().relative_to(root)
    commit = resolve_revision(root, revision)
    target = Path(tempfile.mkdtemp(prefix=f"portability-{revision}-"))
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", commit, str(relative)], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise ValueError(f"unknown revision {revision!r}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target / relative


def resolve_revision(root: Path, revision: str) -> str:
    """A git revision (tag, branch, commit), or a release the data records: `v0.1.0` / `0.1.0` is
    the last commit whose params.yaml says dataset.version 0.1.0 (the commit before the version
    changed, or HEAD), since a clone has every commit but not always the tags."""
    import re
    import subprocess

    import yaml

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False)

    found = git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if found.returncode == 0:
        return found.stdout.strip()
    release = re.fullmatch(r"v?(\d+\.\d+\.\d+)", revision)
    if release is None:
        raise ValueError(f"unknown revision {revision!r}: not a tag, branch or commit of {root}")
    version = release.group(1)
    newer = None  # the oldest commit seen so far that changed params.yaml to another version
    for commit in git("log", "--format=%H", "--", "params.yaml").stdout.split():
        shown = git("show", f"{commit}:params.yaml")
        try:
            recorded = (yaml.safe_load(shown.stdout) or {}).get("dataset", {}).get("version")
        except (yaml.YAMLError, AttributeError):
            recorded = None
        if shown.returncode == 0 and str(recorded) == version:
            last = git("rev-parse", f"{newer}^" if newer else "HEAD").stdout.strip()
            return last
        newer = commit
    raise ValueError(
        f"unknown revision {revision!r}: no tag, and no commit of {root} records dataset.version {version}"
    )
