"""`portability dataset build`: write the dataset folder's metadata for the folder as it is now:
data/README.md (card + configs), the checkout's .huggingface.yaml and the local croissant.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from portability_data.dataset.croissant import croissant_metadata
from portability_data.dataset.folder import checkout_yaml, render_readme
from portability_data.tables.atomic import atomic_write_bytes


def build_dataset(data_dir: Path, card_source: Path, dataset_params: dict[str, Any]) -> Path:
    """Write data/README.md (and croissant.json, and the checkout's .huggingface.yaml beside data/)
    for the folder as it is now."""
    version = str(dataset_params["version"])
    readme = atomic_write_bytes(
        Path(data_dir) / "README.md", render_readme(card_source, version, Path(data_dir)).encode()
    )
    checkout = Path(data_dir).resolve().parent
    atomic_write_bytes(checkout / ".huggingface.yaml", checkout_yaml(version, Path(data_dir)).encode())
    # The local variant: a Croissant client reads the checkout offline; publish writes the Hub one.
    meta = croissant_metadata(Path(data_dir), version, dataset_params, variant="local")
    atomic_write_bytes(Path(data_dir) / "croissant.json", (json.dumps(meta, indent=2) + "\n").encode())
    return readme
