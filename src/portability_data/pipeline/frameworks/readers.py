"""What one framework's readers of its own test databases give the pipeline (`Readers`, one per
framework in the registry, frameworks/__init__.py), and the error of a declared harvest that cannot
be trusted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd


class DeclaredError(ValueError):
    """The harvest cannot be trusted (no api table for the installed torch): says what to run."""


@dataclass(frozen=True)
class Readers:
    """A framework's readers: its census manifests (`portability census-harvest --framework <name>`)
    and its declared support (the `declared` stage)."""

    module: str  # the wheel's top-level module: installed when importlib finds it
    # api table, params.yaml's census section -> origin -> manifest (cases/<framework>/census/<origin>.yaml)
    census_manifests: Callable[[pd.DataFrame, dict[str, Any]], dict[str, dict[str, Any]]]
    summary_lines: Callable[[dict[str, Any]], list[str]]  # a manifest's counts, for the command's output
    declared_rows: Callable[[pd.DataFrame], pd.DataFrame]  # api table -> rows of the declared table
    # whether the declared table needs the wheel (torch) or leaves the framework out where it is absent
    required: bool = False
