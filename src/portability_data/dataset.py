"""The dataset folder: data/README.md (the card + one config per table + declared features), and the
loader that reads it back with Hugging Face `datasets`, locally or from the Hub.

Features are declared from the Arrow contracts, never inferred, so an empty or all-null column
keeps its type. `datasets` caches a local folder by its README globs, not by the files, so a new
shard would be invisible to a cached load; `load_dataset` here passes the resolved file list
(with sizes and modification times) so that any new or changed file gives a new cache entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from portability_data.contracts import TABLES, arrow_schema

# Config -> the Parquet files of that table, relative to the dataset folder.
CONFIG_FILES: dict[str, str] = {
    "api": "api/*.parquet",
    "frequencies": "frequencies/*.parquet",
    "samples": "samples/*.parquet",
    "cases": "cases/*.parquet",
    "results": "results/**/*.parquet",
    "runs": "runs/**/*.parquet",
    "outcomes": "outcomes/*.parquet",
    "latencies": "latencies/*.parquet",
    "published": "published/*.parquet",
    "reproduction": "reproduction/*.parquet",
    "declared": "declared/*.parquet",
}
DEFAULT_CONFIG = "results"
HUB_REPO_ID = "portability-bench/portability"


def features_of(table: str) -> Any:
    """The table's `datasets.Features`, from its declared Arrow schema."""
    from datasets import Features

    return Features.from_arrow_schema(arrow_schema(table))


def split_sizes(data_dir: Path, table: str) -> dict[str, int]:
    """The rows and bytes of one config's files as they are now: declared in the YAML, they make
    `datasets` check the row count (a shard added since the build fails loudly instead of being
    served from a stale cache) and key its cache on the content (the infos are part of the key)."""
    import pyarrow.parquet as pq

    files = files_of(data_dir, table)
    return {
        "num_examples": sum(pq.read_metadata(path).num_rows for path in files),
        "num_bytes": sum(path.stat().st_size for path in files),
    }


def card_metadata(version: str, data_dir: Path | None = None) -> Any:
    """The card's YAML header: license, tags, every config with its files and features (and, given
    the folder, each config's row count and size)."""
    from datasets import DatasetInfo
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    card = DatasetCardData(
        license="apache-2.0",
        pretty_name="portability: ML framework functions across hardware",
        language=["en"],
        tags=["benchmark", "machine-learning-systems", "portability", "pytorch", "tensorflow", "jax"],
        task_categories=["tabular-classification"],
        size_categories=["10K<n<100K"],
    )
    infos = {
        table: DatasetInfo(features=features_of(table), config_name=table, version=version)
        for table in TABLES
    }
    if data_dir is not None:
        from datasets import SplitDict, SplitInfo

        for table, info in infos.items():
            sizes = split_sizes(Path(data_dir), table)
            splits = SplitDict(dataset_name=table)
            splits.add(SplitInfo(name="train", **sizes))
            info.splits = splits
            info.download_size = info.dataset_size = sizes["num_bytes"]
    DatasetInfosDict(infos).to_dataset_card_data(card)
    configs = {
        table: {
            "data_files": [{"split": "train", "path": CONFIG_FILES[table]}],
            **({"default": True} if table == DEFAULT_CONFIG else {}),
        }
        for table in TABLES
    }
    MetadataConfigs(configs).to_dataset_card_data(card)
    return card


TABLES_START, TABLES_END = "<!-- tables:start -->", "<!-- tables:end -->"
TABLE_PURPOSE = {
    "api": "Every public function, builtin, class and method of a framework at one version.",
    "frequencies": "How often each API function is called in a corpus (resolved and bare-name counts).",
    "samples": "Every draw, overlap and replacement of a stratified sample (incl. the study's, mince2023).",
    "cases": "The curated cases: the function, its test file here, and where upstream tests it.",
    "results": "One row per subtest x repeat of a run: outcome, failure category, every op timing.",
    "runs": "One row per run: machine, versions, parameters, the timer's floor, status.",
    "outcomes": "Per function x device x mode x source: success, partial or complete failure.",
    "latencies": "Per function x device (x reference device): the study's latency, median, spread, ratio.",
    "published": "The 2023 study's numbers as printed (source mince2023-published), one row per value.",
    "reproduction": "Every printed number of the study beside ours from its raw data: equal or not, and why.",
    "declared": "What the framework's own test databases declare per function, device type and dtype: "
    "supported dtypes, expected failures, skips, tolerances (PyTorch: OpInfo, ModuleInfo, OptimizerInfo, "
    "the MPS lists).",
}


def tables_section() -> str:
    """The card's table documentation, generated from the contracts (every column, type, meaning)."""
    lines = [TABLES_START]
    for table, schema in TABLES.items():
        lines += [
            "",
            f"### `{table}`",
            "",
            TABLE_PURPOSE[table],
            "",
            "| column | type | null | meaning |",
            "| --- | --- | --- | --- |",
        ]
        for field in schema:
            meaning = (field.metadata or {}).get(b"description", b"").decode()
            lines.append(
                f"| `{field.name}` | {field.type} | {'yes' if field.nullable else 'no'} | {meaning} |"
            )
    lines.append(TABLES_END)
    return "\n".join(lines)


def sync_card(card_source: Path) -> bool:
    """Rewrite the card's generated table section; True when the file changed."""
    from portability_data.atomic import atomic_write_bytes

    text = Path(card_source).read_text(encoding="utf-8")
    start, end = text.index(TABLES_START), text.index(TABLES_END) + len(TABLES_END)
    updated = text[:start] + tables_section() + text[end:]
    if updated != text:
        atomic_write_bytes(Path(card_source), updated.encode())
    return updated != text


def render_readme(card_source: Path, version: str, data_dir: Path | None = None) -> str:
    """data/README.md: the YAML header, then DATASET_CARD.md with the version filled in."""
    body = Path(card_source).read_text(encoding="utf-8").replace("{{version}}", version)
    return f"---\n{card_metadata(version, data_dir).to_yaml()}\n---\n\n{body}"


def checkout_yaml(version: str, data_dir: Path) -> str:
    """The checkout's `.huggingface.yaml`: the card's configs and features with paths under
    data_dir, so that the checkout itself is a dataset repo: `load_dataset("portability", config)`
    from its parent reads the declared files (no scan of the tree), offline."""
    import yaml

    meta = card_metadata(version, data_dir).to_dict()
    keep = {key: meta[key] for key in ("configs", "dataset_info") if key in meta}
    for entry in keep["configs"]:
        for files in entry["data_files"]:
            files["path"] = f"{Path(data_dir).name}/{files['path']}"
    header = (
        "# Generated by `portability dataset build` (the dataset stage); do not edit.\n"
        "# Makes this checkout a Hugging Face dataset repo: datasets.load_dataset(<checkout>, <config>).\n"
    )
    return header + yaml.safe_dump(keep, sort_keys=False, width=110)


def build_dataset(data_dir: Path, card_source: Path, dataset_params: dict[str, Any]) -> Path:
    """Write data/README.md (and croissant.json, and the checkout's .huggingface.yaml beside data/)
    for the folder as it is now."""
    from portability_data.atomic import atomic_write_bytes

    version = str(dataset_params["version"])
    readme = atomic_write_bytes(
        Path(data_dir) / "README.md", render_readme(card_source, version, Path(data_dir)).encode()
    )
    checkout = Path(data_dir).resolve().parent
    atomic_write_bytes(checkout / ".huggingface.yaml", checkout_yaml(version, Path(data_dir)).encode())
    from portability_data.croissant import croissant_metadata

    # The local variant: a Croissant client reads the checkout offline; publish writes the Hub one.
    meta = croissant_metadata(Path(data_dir), version, dataset_params, variant="local")
    atomic_write_bytes(Path(data_dir) / "croissant.json", (json.dumps(meta, indent=2) + "\n").encode())
    return readme


def files_of(data_dir: Path, config: str) -> list[Path]:
    """The files of one config, as the README's glob resolves them (hidden and temp files left out)."""
    if config not in CONFIG_FILES:
        raise ValueError(f"unknown config {config!r}; known configs: {', '.join(CONFIG_FILES)}")
    found = sorted(Path(data_dir).glob(CONFIG_FILES[config]))
    return [p for p in found if not p.name.startswith(".")]


def fingerprint(files: list[Path]) -> str:
    """A digest of the file list with sizes and modification times: what the cache must key on."""
    digest = hashlib.sha256()
    for path in files:
        stat = path.stat()
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def load_dataset(
    config: str = DEFAULT_CONFIG,
    revision: str | None = None,
    *,
    data_dir: str | os.PathLike[str] | None = "data",
    repo_id: str = HUB_REPO_ID,
    split: str = "train",
    cache_dir: str | None = None,
) -> Any:
    """One table as a `datasets.Dataset`: from a local dataset folder (default `data`, offline),
    or from the Hub (`data_dir=None`), pinned to `revision` (a release tag such as v0.1.0).

    Locally the files are resolved here and handed over with the declared features; the cache
    entry is keyed on their fingerprint, so a shard added since the last load is always seen.
    Files are validated against the contract first: a bad shard fails with its name."""
    import datasets

    if config not in CONFIG_FILES:
        raise ValueError(f"unknown config {config!r}; known configs: {', '.join(CONFIG_FILES)}")
    if data_dir is None:
        return datasets.load_dataset(repo_id, config, revision=revision, split=split, cache_dir=cache_dir)
    folder = Path(data_dir)
    if revision is not None:
        folder = _checkout_revision(folder, revision)
    files = files_of(folder, config)
    if not files:
        raise FileNotFoundError(
            f"{folder}: no files for config {config!r} ({CONFIG_FILES[config]}); "
            "run `dvc repro` or `portability dataset build` first"
        )
    from portability_data.tableio import read_file

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
