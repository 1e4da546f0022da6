"""Census cases for the runner: the manifests in cases/<framework>/census/ as case rows.

A manifest (`<source>.yaml`, harvested by `portability census-harvest`) lists the entries of one
of the framework's own test databases; its module `test_<source>.py` beside it runs them, one
subtest per entry x dtype. Each entry is a case of the run like a curated one (its case id, the
public function it tests), whose subtests are named node ids: the supervisor sends exactly those
to the worker, and the module parametrises only what it is sent. Light: PyYAML only, so a bare
device machine can run the census.
"""

from __future__ import annotations

import itertools
import re
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

MANIFEST_VERSION = 1
CENSUS_FOLDER = "census"
TEST_NAME = "test_entry"  # the census modules' one test function


class CensusManifestError(RuntimeError):
    """A manifest is missing, unreadable or not of this version: the census cannot run it."""


NOT_IN_WHEEL = "not in this wheel:"  # how the skip of an entry the installed wheel lacks begins


def entry_id(name: str, variant: str | None) -> str:
    """An entry as the census names it: the database's name, then its variant after a dot."""
    return f"{name}.{variant}" if variant else name


def census_case_id(framework: str, origin: str, entry: str) -> str:
    """torch + opinfo + linalg.svd -> torch.census.opinfo.linalg.svd (identifiers only)."""
    parts = [re.sub(r"\W", "_", part) or "_" for part in entry.split(".")]
    parts = [f"_{p}" if p[0].isdigit() else p for p in parts]
    return ".".join([framework, CENSUS_FOLDER, origin, *parts])


def pair_id(entry: str, dtype: str) -> str:
    """A census subtest's parameter id: the entry, then its dtype after the last dash."""
    return f"{entry}-{dtype}"


def requested_pairs(args: list[str]) -> set[str] | None:
    """The pair ids named by node ids on the command line (the runner sends one entry's); None
    when a census module is run whole."""
    marker = f"::{TEST_NAME}["
    found = {arg.split(marker, 1)[1].rstrip("]") for arg in args if marker in arg}
    return found or None


def parametrize_pairs(metafunc: Any, manifest: dict[str, Any]) -> None:
    """A census module's `pytest_generate_tests`: parametrise `census_pair` with the (entry, dtype)
    pairs of the manifest, only those named on the command line when some are (so one entry's
    request does not build thousands of items)."""
    if "census_pair" not in metafunc.fixturenames:
        return
    wanted = requested_pairs(list(metafunc.config.args))
    pairs = [(e["entry"], dtype) for e in manifest["entries"] for dtype in e["dtypes"]]
    pairs = [p for p in pairs if wanted is None or pair_id(*p) in wanted]
    metafunc.parametrize("census_pair", pairs, ids=[pair_id(*p) for p in pairs])


def manifest_paths(cases_dir: Path, framework: str) -> list[Path]:
    folder = cases_dir / framework / CENSUS_FOLDER
    return sorted(folder.glob("*.yaml")) if folder.is_dir() else []


# Manifests already parsed in this process, by path, size and mtime: a worker re-imports a census
# module for every entry it is sent (a fresh module per request), and parsing jax.numpy's manifest
# costs ~0.15 s, as much as many entries take. A manifest that changes on disk is read again.
_PARSED: dict[str, tuple[tuple[int, int], dict[str, Any]]] = {}


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest at `path` (parsed once per process and version of the file on disk; callers
    read it, never change it)."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise CensusManifestError(
            f"{path}: cannot read the census manifest ({exc}); re-run `portability census-harvest`"
        ) from None
    where, version = str(path.resolve()), (stat.st_size, stat.st_mtime_ns)
    known = _PARSED.get(where)
    if known is None or known[0] != version:
        known = _PARSED[where] = (version, _parse_manifest(path))
    return known[1]


def _parse_manifest(path: Path) -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        manifest = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except (OSError, yaml.YAMLError) as exc:
        raise CensusManifestError(
            f"{path}: cannot read the census manifest ({exc}); re-run `portability census-harvest`"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("manifest_version") != MANIFEST_VERSION:
        raise CensusManifestError(
            f"{path}: not a census manifest of version {MANIFEST_VERSION}; "
            "re-run `portability census-harvest`"
        )
    return manifest


def census_rows(
    cases_dir: Path, repo_root: Path, framework: str, mode: str = "eager"
) -> list[dict[str, Any]]:
    """Every census entry of the framework as a case row the runner can run: in eager mode every
    dtype the entry knows of; in compiled mode those of the manifest's `compiled.dtypes` (an entry
    with none of them is left out of the compiled census)."""
    rows = []
    for path in manifest_paths(cases_dir, framework):
        manifest = read_manifest(path)
        test_file = path.with_name(f"test_{path.stem}.py")
        if not test_file.exists():
            raise CensusManifestError(f"{path}: its module {test_file.name} is missing beside it")
        relative_test = test_file.relative_to(repo_root).as_posix()
        only = set(manifest["compiled"]["dtypes"]) if mode == "compiled" else None
        for entry in manifest["entries"]:
            dtypes = [d for d in entry["dtypes"] if only is None or d in only]
            if not dtypes:
                continue
            node = f"{relative_test}::{TEST_NAME}["
            rows.append(
                {
                    "case_id": entry["case_id"],
                    "framework": framework,
                    "function": entry["function"],
                    "test_file": relative_test,
                    "status": "active",
                    "origin": manifest["origin"],
                    "select": [f"{node}{pair_id(entry['entry'], dtype)}]" for dtype in dtypes],
                    "_row_file": path.relative_to(repo_root).as_posix(),
                }
            )
    return rows


def loosened(
    tolerances: dict[str, dict[str, float]], override: dict[str, float] | None
) -> dict[str, dict[str, float]]:
    """The policy with an override as a floor under every dtype's atol and rtol, as PyTorch's
    toleranceOverride / precisionOverride loosen its assertEqual: never tighter than the policy."""
    if not override:
        return tolerances
    return {
        name: {"atol": max(limit["atol"], override["atol"]), "rtol": max(limit["rtol"], override["rtol"])}
        for name, limit in tolerances.items()
    }


class CensusModule:
    """What every census module (cases/<framework>/census/test_<source>.py) shares: its manifest
    beside it, read once per worker process; the parametrisation over its (entry, dtype) pairs; the
    cap compiled mode puts on the samples (census.compiled.max_samples: each compile costs ~0.5 s).
    A module holds one (`CENSUS = CensusModule(__file__)`) and writes only what is its own: how an
    entry's samples are made and called, and what judges them."""

    def __init__(self, module_file: str | Path) -> None:
        module = Path(module_file)
        self.path = module.with_name(module.stem.removeprefix("test_") + ".yaml")

    @cached_property
    def manifest(self) -> dict[str, Any]:
        return read_manifest(self.path)

    @cached_property
    def entries(self) -> dict[str, dict[str, Any]]:
        """entry name -> its manifest record."""
        return {entry["entry"]: entry for entry in self.manifest["entries"]}

    @property
    def tolerances(self) -> dict[str, dict[str, float]]:
        tolerances: dict[str, dict[str, float]] = self.manifest["tolerances"]
        return tolerances

    def tolerances_for(self, entry: str, mode: str, dtype: str) -> dict[str, dict[str, float]]:
        """The policy one subtest is judged by: params.yaml's, loosened by the framework's own
        override for the entry, mode and dtype (the manifest's `oracle_declared.tolerance`,
        harvested from the wheel) where it declares one."""
        declared = self.entries[entry].get("oracle_declared", {})
        return loosened(self.tolerances, declared.get("tolerance", {}).get(mode, {}).get(dtype))

    def installed(self, database: dict[str, Any], entry: str, version: str) -> Any:
        """The entry's record in the installed wheel's database. The manifest was harvested from one
        wheel (its `framework_version`); another version (torch_xla's pinned torch) may lack an entry
        that was added since: that subtest is skipped with the reason, not failed (not measured is
        not broken), so an entry the wheel lacks is listed, never counted against the device."""
        record = database.get(entry)
        if record is None:
            import pytest

            pytest.skip(
                f"{NOT_IN_WHEEL} {entry} is absent from the installed {self.manifest['framework']} "
                f"{version}'s {self.manifest['source']} (the manifest was harvested from "
                f"{self.manifest['framework_version']})"
            )
        return record

    def not_comparable(self, entry: str) -> str | None:
        """Why the framework itself compares no two executions of the entry (its output is
        random or undefined: `oracle_declared.not_comparable`), or None."""
        why: str | None = self.entries[entry].get("oracle_declared", {}).get("not_comparable")
        return why

    def generate_tests(self, metafunc: Any) -> None:
        """The module's `pytest_generate_tests`."""
        parametrize_pairs(metafunc, self.manifest)

    def samples(self, items: Any, mode: str) -> list[Any]:
        """The samples a subtest runs, in the generator's order: the first few compiled; in eager
        mode all of them, or the first `eager.max_samples` where the manifest caps them (torch's
        generators yield up to 1,440 per entry and dtype). Taken lazily: samples past the cap are
        never made."""
        cap = self.manifest["compiled"]["max_samples"] if mode == "compiled" else self.eager_cap
        return list(itertools.islice(items, cap))

    @property
    def eager_cap(self) -> int | None:
        """The manifest's eager cap on samples per subtest (census.eager.max_samples), or None."""
        cap: int | None = self.manifest.get("eager", {}).get("max_samples")
        return cap
