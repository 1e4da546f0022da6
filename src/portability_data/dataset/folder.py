"""The dataset folder's layout: one config per table (its files), the declared features, and the
card data/README.md carries (DATASET_CARD.md + the configs + row counts).

Features are declared from the Arrow contracts, never inferred, so an empty or all-null column
keeps its type. `build` writes the folder's metadata, `loader` reads tables back.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from portability_data.tables.contracts import RECORDS, TABLES, arrow_schema

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
    "pooled": "pooled/*.parquet",
    "published": "published/*.parquet",
    "reproduction": "reproduction/reproduction.parquet",
    "reproduction_functions": "reproduction/functions.parquet",
    "declared": "declared/*.parquet",
    "support_matrix": "census/support_matrix.parquet",
    "crossframework": "census/crossframework.parquet",
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
# What a row of each table is: its record's summary (tables/), the one place it is written.
TABLE_PURPOSE = {name: record.summary for name, record in RECORDS.items()}


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


# The card's dataset version, between markers a Markdown viewer hides: DATASET_CARD.md shows the
# version it was last synced to (`portability dataset card`), data/README.md the bare version.
VERSION_MARK = re.compile(r"<!-- version -->(.*?)<!-- /version -->")


def card_version(text: str) -> str | None:
    """The dataset version the card shows (None where it has no version marker)."""
    found = VERSION_MARK.search(text)
    return found.group(1) if found else None


def sync_card(card_source: Path, version: str) -> bool:
    """Rewrite the card's generated parts, its table section and the version it shows (params.yaml's
    dataset.version); True when the file changed."""
    from portability_data.tables.atomic import atomic_write_bytes

    text = Path(card_source).read_text(encoding="utf-8")
    if VERSION_MARK.search(text) is None:
        raise ValueError(
            f"{card_source}: no version marker; write `<!-- version -->{version}<!-- /version -->` where "
            "the card names the dataset's version"
        )
    start, end = text.index(TABLES_START), text.index(TABLES_END) + len(TABLES_END)
    updated = text[:start] + tables_section() + text[end:]
    updated = VERSION_MARK.sub(f"<!-- version -->{version}<!-- /version -->", updated)
    if updated != text:
        atomic_write_bytes(Path(card_source), updated.encode())
    return updated != text


def render_readme(card_source: Path, version: str, data_dir: Path | None = None) -> str:
    """data/README.md: the YAML header, then DATASET_CARD.md with the version filled in."""
    body = VERSION_MARK.sub(version, Path(card_source).read_text(encoding="utf-8"))
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
    return header + str(yaml.safe_dump(keep, sort_keys=False, width=110))


def files_of(data_dir: Path, config: str) -> list[Path]:
    """The files of one config, as the README's glob resolves them (hidden and temp files left out)."""
    if config not in CONFIG_FILES:
        raise ValueError(f"unknown config {config!r}; known configs: {', '.join(CONFIG_FILES)}")
    found = sorted(Path(data_dir).glob(CONFIG_FILES[config]))
    return [p for p in found if not p.name.startswith(".")]
