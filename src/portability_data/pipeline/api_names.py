"""The installed framework's public names, from the api table: every harvest (declared, the census
manifests) maps a database entry to a public function only through these, and only when the table
was made from the version installed (else a name could be public in one and not the other)."""

from __future__ import annotations

import pandas as pd


def public_names(
    api: pd.DataFrame, framework: str, version: str, error: type[Exception] = ValueError
) -> frozenset[str]:
    """The qualified names of `framework` in the api table; raises `error` (the caller's own, so
    its command reports it) when the table has none or lists another version."""
    rows = api[api["framework"] == framework]
    if rows.empty:
        raise error(f"the api table has no {framework} rows; run `portability enumerate` first")
    versions = set(rows["framework_version"].astype(str))
    if versions != {version}:
        raise error(
            f"the api table lists {framework} {', '.join(sorted(versions))} but {framework} {version} "
            "is installed; re-run `portability enumerate` so that names are checked against the installed "
            "version"
        )
    return frozenset(rows["qualified_name"].astype(str))
