"""`portability census-harvest`: write a framework's census manifests (cases/<framework>/census/),
made by its readers in the registry (pipeline/frameworks), or the NN-op manifest (nn.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.pipeline.census import nn
from portability_data.pipeline.frameworks import FRAMEWORKS
from portability_data.pipeline.frameworks.manifest import HarvestError, write_manifests


def harvest(
    framework: str, api: pd.DataFrame, census_params: dict[str, Any], folder: Path, nn_only: bool
) -> list[str]:
    """Write the framework's manifests (with `nn_only`, only its NN-op manifest) into `folder`;
    returns the lines the command prints."""
    if nn_only:
        manifests = {nn.ORIGIN: nn.nn_manifest(framework, api, census_params, folder=folder)}
        return write_manifests(manifests, folder, nn.summary_lines)
    if framework not in FRAMEWORKS:
        raise HarvestError(f"no readers for {framework!r}: pipeline/frameworks has {', '.join(FRAMEWORKS)}")
    readers = FRAMEWORKS[framework]
    return write_manifests(readers.census_manifests(api, census_params), folder, readers.summary_lines)
