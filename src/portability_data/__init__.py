"""portability: how portable ML framework functions are across hardware, as validated tables.

Kept light: the case harness and the runner import this package on bare accelerator machines,
so nothing heavy (pandas, datasets, DVC) is imported here.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def load_dataset(config: str = "results", revision: str | None = None, **kwargs: Any) -> Any:
    """One table of the dataset as a `datasets.Dataset`, by default from the data/ of the checkout
    this package was installed from, wherever it is called (see portability_data.dataset.loader)."""
    from portability_data.dataset.loader import load_dataset as load

    return load(config, revision, **kwargs)
