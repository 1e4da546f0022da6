"""Corpus sources for the usage counts: the files whose calls are counted (docs/METHOD.md section 2).

Four sources, all streamed (a record at a time, never the whole corpus in memory):
- ``pinned`` (params.yaml's default): the Python files of pinned registry archives of packages that
  use the frameworks, listed with their sha256 in ``corpus/packages.yaml``, fetched once into a local
  cache and read from the archives (corpus_pinned.py; offline after the first fetch);
- ``installed`` (offline; the default where params name no source): the Python files of installed
  third-party packages that use the frameworks (keras, optax, chex, einops, torchmetrics,
  opt_einsum), leaving out the frameworks' own source and every test folder or test file;
- ``codeparrot``: the study's corpus, ``codeparrot/codeparrot-clean`` through Hugging Face ``datasets``,
  with the study's per-framework filter, seeded shuffle and limit (a local Parquet file with the same
  columns stands in for the Hub where there is no network);
- ``path``: a user's directory of ``.py`` files or a Parquet file with ``repo_name, path, content``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_SOURCE = "installed"  # when params name none; params.yaml names pinned
DEFAULT_PACKAGES = ("keras", "optax", "chex", "einops", "torchmetrics", "opt_einsum")
# The frameworks' own code is never corpus: it would count the framework calling itself.
FRAMEWORK_PACKAGES = frozenset(
    {"torch", "torchgen", "functorch", "tensorflow", "tensorboard", "jax", "jaxlib", "tf_keras"}
)
TEST_DIRS = frozenset({"tests", "test", "testing", "__pycache__", "integration_tests", "benchmarks"})
CODEPARROT = "codeparrot/codeparrot-clean"
# The study's pattern is ".*Copyright 20.. The TensorFlow Authors"; the leading ".*" changes nothing
# for a search but makes it quadratic in the line length, so it is left out.
TF_AUTHORS = re.compile(r"Copyright 20.. The TensorFlow Authors")


@dataclass(frozen=True, slots=True)
class Record:
    """One corpus file: its text, or a path the worker reads; frameworks fixed by the source or None."""

    key: str
    text: str | None = None
    path: str | None = None
    frameworks: tuple[str, ...] | None = None


def import_regex(framework: str) -> re.Pattern[str]:
    """The study's filter: a line that imports the framework, ``(from.*fw|import.*fw)``."""
    return re.compile(r"(from.*" + re.escape(framework) + r"|import.*" + re.escape(framework) + r")")


def imports_framework(framework: str, content: str) -> bool:
    """Whether ``import_regex(framework)`` matches ``content``, found without the regex.

    The study's pattern holds when some line has "from" or "import" before an occurrence of the
    framework's name. The regex tries ``.*`` from every "f" and "i" of the text (quadratic in the
    line length); here each occurrence of the name, usually few, looks back to its line's start.
    """
    pos = content.find(framework)
    while pos >= 0:
        line_start = content.rfind("\n", 0, pos) + 1  # "." of the regex matches all but "\n"
        if content.find("from", line_start, pos) >= 0 or content.find("import", line_start, pos) >= 0:
            return True
        pos = content.find(framework, pos + 1)
    return False


def contains_framework(framework: str, content: str) -> bool:
    """The study's ``contains_framework``: imports the framework; TensorFlow's own files are dropped."""
    if not imports_framework(framework, content):
        return False
    return not (framework == "tensorflow" and TF_AUTHORS.search(content) is not None)


def is_test_file(name: str) -> bool:
    """A test module by its name (left out of every corpus, as test folders are)."""
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def is_corpus_path(relative: str) -> bool:
    """Whether a file inside a package (``pkg/sub/mod.py``) is corpus: a ``.py`` file, not a test
    file, in no test folder, not in a framework's own package (the pinned archives' rule; the same
    as ``python_files`` and ``installed_records`` on a folder)."""
    parts = relative.split("/")
    if not parts[-1].endswith(".py") or is_test_file(parts[-1]):
        return False
    folders = parts[:-1]
    if folders and folders[0] in FRAMEWORK_PACKAGES:
        return False
    return not any(folder in TEST_DIRS for folder in folders)


def python_files(root: Path) -> Iterator[Path]:
    """Every ``.py`` file under a folder in sorted order, test folders and test files left out."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in TEST_DIRS)
        for name in sorted(filenames):
            if name.endswith(".py") and not is_test_file(name):
                yield Path(dirpath) / name


def package_root(package: str) -> Path | None:
    """Where an installed package lives, without importing it (None: not installed)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin) if spec.origin else None


def installed_records(packages: Sequence[str] = DEFAULT_PACKAGES) -> Iterator[Record]:
    """The embedded offline corpus: the files of installed packages that use the frameworks."""
    for package in packages:
        if package in FRAMEWORK_PACKAGES:
            log.warning("package %s is a framework's own code; left out of the corpus", package)
            continue
        root = package_root(package)
        if root is None:
            log.warning("package %s is not installed; left out of the corpus", package)
            continue
        files = [root] if root.is_file() else python_files(root)
        for file in files:
            yield Record(key=f"{package}/{file.relative_to(root.parent)}", path=str(file))


def path_records(path: Path) -> Iterator[Record]:
    """A user's corpus: a folder of ``.py`` files or a Parquet file with repo_name, path, content."""
    path = Path(path)
    if path.is_dir():
        for file in python_files(path):
            yield Record(key=str(file.relative_to(path)), path=str(file))
        return
    yield from parquet_records(path)


def parquet_records(path: Path, batch_size: int = 1024) -> Iterator[Record]:
    """Stream a Parquet corpus batch by batch (memory stays bounded by one batch)."""
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(path)
    columns = [c for c in ("repo_name", "path", "content") if c in parquet.schema_arrow.names]
    if "content" not in columns:
        raise ValueError(
            f"{path}: a Parquet corpus needs a 'content' column (found {parquet.schema_arrow.names})"
        )
    row = 0
    for batch in parquet.iter_batches(batch_size=batch_size, columns=columns):
        data = batch.to_pydict()
        for i, content in enumerate(data["content"]):
            repo = data.get("repo_name", [None] * len(data["content"]))[i]
            file = data.get("path", [None] * len(data["content"]))[i]
            key = f"{repo}/{file}" if repo or file else f"row{row}"
            row += 1
            yield Record(key=key, text=content)


def pinned_records(
    manifest: Path | str | None = None,
    cache_dir: Path | str | None = None,
    *,
    offline: bool = False,
) -> Iterator[Record]:
    """The pinned corpus (corpus_pinned.py): key ``name==version/member``, the member's text.

    ``offline`` fetches nothing: an archive missing from the cache is an error. Each file counts for
    every framework it imports, as with the other sources.
    """
    from portability_data.pipeline import corpus_pinned as pinned

    files = pinned.pinned_files(
        Path(manifest) if manifest else pinned.DEFAULT_MANIFEST,
        Path(cache_dir) if cache_dir else pinned.DEFAULT_CACHE_DIR,
        is_corpus_path,
        download=None if offline else pinned.pip_download,
    )
    for file in files:
        yield Record(key=f"{file.repo_name}/{file.path}", text=file.content)


def codeparrot_records(
    frameworks: Sequence[str],
    *,
    dataset: str = CODEPARROT,
    data_files: str | Sequence[str] | None = None,
    split: str = "train",
    seed: int = 42,
    files_per_framework: int | None = 3001,
    streaming: bool = False,
    num_proc: int | None = None,
    shuffle_buffer: int = 10_000,
    cache_dir: str | None = None,
) -> Iterator[Record]:
    """The study's corpus selection, per framework: filter, ``shuffle(seed)``, first N files.

    Non-streaming is the study's exact procedure (``Dataset.filter`` then ``Dataset.shuffle(seed=42)``
    then ``select(range(3001))``; it downloads the whole dataset once). Streaming uses a shuffle
    buffer, so its selection differs from the study's; it is for a quick look only. ``data_files``
    (a local Parquet file with the same columns) replaces the Hub dataset: that is how it is tested.
    """
    from datasets import load_dataset

    if data_files is not None:
        ds = load_dataset(
            "parquet", data_files=data_files, split=split, streaming=streaming, cache_dir=cache_dir
        )
    else:
        ds = load_dataset(dataset, split=split, streaming=streaming, cache_dir=cache_dir)
    for framework in frameworks:
        keep = _Keep(framework)
        if streaming:
            selected = ds.filter(keep).shuffle(seed=seed, buffer_size=shuffle_buffer)
            if files_per_framework is not None:
                selected = selected.take(files_per_framework)
        else:
            selected = ds.filter(keep, num_proc=num_proc).shuffle(seed=seed)
            if files_per_framework is not None:
                selected = selected.select(range(min(files_per_framework, len(selected))))
        log.info(
            "codeparrot: %s files selected for %s", "streamed" if streaming else len(selected), framework
        )
        for item in selected:
            key = f"{item.get('repo_name')}/{item.get('path')}"
            yield Record(key=key, text=item["content"], frameworks=(framework,))


class _Keep:
    """Picklable filter for ``Dataset.filter`` (a lambda would defeat the cache and ``num_proc``)."""

    def __init__(self, framework: str) -> None:
        self.framework = framework

    def __call__(self, item: dict) -> bool:
        content = item.get("content")
        return isinstance(content, str) and contains_framework(self.framework, content)


def corpus_id(params: dict) -> str:
    """A short, stable identifier of the corpus a parameter set selects (the table's ``corpus``)."""
    source = params.get("source", DEFAULT_SOURCE)
    if source == "pinned":
        return "pinned:" + _manifest_digest(params.get("manifest"))
    if source == "installed":
        return "installed:" + ",".join(params.get("packages") or DEFAULT_PACKAGES)
    if source == "codeparrot":
        name = (
            Path(params["data_files"]).name if params.get("data_files") else params.get("dataset", CODEPARROT)
        )
        limit = params.get("files_per_framework", 3001)
        mode = ":streaming" if params.get("streaming") else ""
        return f"codeparrot:{name}:seed={params.get('seed', 42)}:n={limit}{mode}"
    if source == "path":
        return f"path:{Path(params['path']).name}"
    raise ValueError(f"unknown corpus source {source!r}; use pinned, installed, codeparrot or path")


def records_for(params: dict, frameworks: Sequence[str]) -> Iterator[Record]:
    """The records a ``frequencies`` parameter set selects (see ``run_frequencies`` for the keys)."""
    source = params.get("source", DEFAULT_SOURCE)
    if source == "pinned":
        return pinned_records(
            params.get("manifest"), params.get("cache_dir"), offline=bool(params.get("offline", False))
        )
    if source == "installed":
        return installed_records(params.get("packages") or DEFAULT_PACKAGES)
    if source == "codeparrot":
        return codeparrot_records(
            frameworks,
            dataset=params.get("dataset", CODEPARROT),
            data_files=params.get("data_files"),
            split=params.get("split", "train"),
            seed=int(params.get("seed", 42)),
            files_per_framework=params.get("files_per_framework", 3001),
            streaming=bool(params.get("streaming", False)),
            num_proc=params.get("num_proc"),
            cache_dir=params.get("cache_dir"),
        )
    if source == "path":
        return path_records(Path(params["path"]))
    raise ValueError(f"unknown corpus source {source!r}; use pinned, installed, codeparrot or path")


def _manifest_digest(manifest: str | None) -> str:
    """The pinned corpus's identity: the manifest's name and the first 12 hex of its sha256."""
    import hashlib

    path = Path(manifest) if manifest else Path("corpus/packages.yaml")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12] if path.exists() else "missing"
    return f"{path.name}@{digest}"
