"""The ``pinned`` corpus source (corpus_pinned.py): archives fetched into a content-addressed cache,
verified by sha256 and read without extracting; and ``corpus/packages.yaml`` itself. No network: the
archives are built here and the ``download`` callable copies them from a local folder."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import tarfile
import zipfile
from collections import Counter
from pathlib import Path

import pytest
import yaml

from portability_data.pipeline import corpus as corpus_mod
from portability_data.pipeline import corpus_pinned as pinned

REPO_ROOT = Path(__file__).resolve().parents[1]
TORCH = "import torch\nx = torch.zeros(3)\n"
JAX = "import jax.numpy as jnp\ny = jnp.ones(2)\n"

WHEEL_FILES = {
    "toypkg/__init__.py": "",
    "toypkg/model.py": TORCH,
    "toypkg/sub/layers.py": JAX,
    "toypkg/tests/test_model.py": TORCH,  # a test folder: left out
    "toypkg/model_test.py": TORCH,  # a test file: left out
    "toypkg/data.json": "{}",  # not .py: left out
    "torch/fake.py": TORCH,  # a framework's own package: left out
    "toypkg-1.0.dist-info/METADATA": "Name: toypkg\n",
}
SDIST_FILES = {
    "toysd-2.0/setup.py": "from setuptools import setup\n",
    "toysd-2.0/toysd/train.py": TORCH + JAX,
    "toysd-2.0/examples/demo.py": JAX,
    "toysd-2.0/benchmarks/speed.py": JAX,  # an excluded folder
    "toysd-2.0/toysd/conftest.py": TORCH,
    "toysd-2.0/README.md": "import torch\n",
}


def make_wheel(path: Path, files: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def make_sdist(path: Path, files: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """A local folder standing in for the package index, with one wheel and one sdist."""
    folder = tmp_path / "index"
    folder.mkdir()
    make_wheel(folder / "toypkg-1.0-py3-none-any.whl", WHEEL_FILES)
    make_sdist(folder / "toysd-2.0.tar.gz", SDIST_FILES)
    return folder


def entry(folder: Path, name: str, version: str, filename: str, frameworks: list[str]) -> dict:
    return {
        "name": name,
        "version": version,
        "filename": filename,
        "sha256": sha256(folder / filename),
        "frameworks": frameworks,
        "why": "a test archive",
        "files_importing": {fw: 1 for fw in frameworks},
    }


@pytest.fixture
def manifest(tmp_path: Path, index: Path) -> Path:
    data = {
        "packages": [
            entry(index, "toypkg", "1.0", "toypkg-1.0-py3-none-any.whl", ["torch", "jax"]),
            entry(index, "toysd", "2.0", "toysd-2.0.tar.gz", ["torch"]),
        ]
    }
    path = tmp_path / "packages.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


class LocalIndex:
    """A ``download`` callable that copies the pinned file from a folder, counting its calls."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls: Counter[str] = Counter()

    def __call__(self, package: pinned.PinnedPackage, dest: Path) -> None:
        self.calls[package.name] += 1
        shutil.copy(self.folder / package.filename, dest / package.filename)


def records(manifest: Path, cache: Path, download) -> dict[str, str]:
    files = pinned.pinned_files(manifest, cache, corpus_mod.is_corpus_path, download=download)
    return {f"{f.repo_name}|{f.path}": f.content for f in files}


def test_records_come_from_the_archives_with_corpus_rules(
    manifest: Path, index: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    got = records(manifest, cache, LocalIndex(index))
    assert got == {
        "toypkg==1.0|toypkg/__init__.py": "",
        "toypkg==1.0|toypkg/model.py": TORCH,
        "toypkg==1.0|toypkg/sub/layers.py": JAX,
        "toysd==2.0|toysd-2.0/setup.py": "from setuptools import setup\n",
        "toysd==2.0|toysd-2.0/toysd/train.py": TORCH + JAX,
        "toysd==2.0|toysd-2.0/examples/demo.py": JAX,
    }
    wheel = manifest_packages(manifest)[0]
    assert (cache / wheel.sha256 / wheel.filename).is_file()  # content-addressed


def manifest_packages(manifest: Path) -> list[pinned.PinnedPackage]:
    return pinned.load_manifest(manifest)


def test_second_run_reads_the_cache_without_fetching(manifest: Path, index: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = LocalIndex(index)
    expected = records(manifest, cache, first)
    assert first.calls == Counter({"toypkg": 1, "toysd": 1})
    assert records(manifest, cache, None) == expected  # offline: no download at all
    again = LocalIndex(index)
    assert records(manifest, cache, again) == expected
    assert not again.calls


def test_the_source_dispatch_yields_records(manifest: Path, index: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    records(manifest, cache, LocalIndex(index))  # fill the cache as a first run would
    params = {"source": "pinned", "manifest": str(manifest), "cache_dir": str(cache), "offline": True}
    got = list(corpus_mod.records_for(params, ["torch", "jax"]))
    assert {r.key for r in got} >= {"toypkg==1.0/toypkg/model.py", "toysd==2.0/toysd-2.0/examples/demo.py"}
    assert all(r.text is not None and r.frameworks is None for r in got)
    assert re.fullmatch(r"pinned:packages\.yaml@[0-9a-f]{12}", corpus_mod.corpus_id(params))


def test_a_sha256_mismatch_is_refused_naming_the_package(manifest: Path, index: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    records(manifest, cache, LocalIndex(index))
    wheel = manifest_packages(manifest)[0]
    cached = cache / wheel.sha256 / wheel.filename
    make_wheel(cached, {"toypkg/evil.py": TORCH})
    with pytest.raises(pinned.CorpusArchiveError, match=r"toypkg==1\.0.*delete"):
        records(manifest, cache, None)


def test_a_download_with_other_content_is_refused(manifest: Path, index: Path, tmp_path: Path) -> None:
    make_wheel(index / "toypkg-1.0-py3-none-any.whl", {"toypkg/other.py": TORCH})  # replaced upstream
    cache = tmp_path / "cache"
    with pytest.raises(
        pinned.CorpusArchiveError, match=r"toypkg==1\.0: the index served .*nothing was cached"
    ):
        records(manifest, cache, LocalIndex(index))
    wheel = manifest_packages(manifest)[0]
    assert not (cache / wheel.sha256 / wheel.filename).exists()  # nothing unverified is kept


def test_a_missing_archive_without_fetching_is_a_clear_error(manifest: Path, tmp_path: Path) -> None:
    with pytest.raises(pinned.CorpusArchiveError, match=r"toypkg==1\.0: .*not in the corpus cache.*network"):
        records(manifest, tmp_path / "empty", None)


def test_a_download_that_gives_another_file_is_a_clear_error(manifest: Path, tmp_path: Path) -> None:
    def wrong(package: pinned.PinnedPackage, dest: Path) -> None:
        (dest / "toypkg-1.0-py2-none-any.whl").write_bytes(b"")

    with pytest.raises(pinned.CorpusArchiveError, match=r"not the pinned toypkg-1\.0-py3-none-any\.whl"):
        records(manifest, tmp_path / "cache", wrong)


def test_a_bad_manifest_lists_every_problem(tmp_path: Path) -> None:
    data = {
        "packages": [
            {"name": "a", "version": "1", "filename": "a-1.whl", "sha256": "XYZ", "frameworks": ["mxnet"],
             "why": "x"},
            {"name": "b", "version": "1"},
        ]
    }  # fmt: skip
    with pytest.raises(ValueError) as err:
        pinned.parse_manifest(data)
    message = str(err.value)
    assert "entry 0 (a): sha256" in message and "entry 0 (a): frameworks" in message
    assert "entry 1 (b): missing filename, sha256, frameworks, why" in message


def test_undecodable_files_reach_the_counter_as_encoding_skips(tmp_path: Path) -> None:
    wheel = tmp_path / "w-1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("w/latin.py", "import torch # caf\xe9\n".encode("latin-1"))
    (file,) = pinned.archive_files(wheel, "w==1", corpus_mod.is_corpus_path)
    from portability_data.pipeline.frequencies.counting import decode_source

    assert decode_source(file.content) == (None, "encoding")


# --- corpus/packages.yaml, the committed pin list ---------------------------------------------------

STUDY_FILES_PER_FRAMEWORK = 3001


@pytest.fixture(scope="module")
def committed() -> list[pinned.PinnedPackage]:
    return pinned.load_manifest(REPO_ROOT / "corpus" / "packages.yaml")


def test_packages_yaml_is_well_formed(committed: list[pinned.PinnedPackage]) -> None:
    for package in committed:
        assert re.fullmatch(r"[0-9a-f]{64}", package.sha256), package.name
        assert set(package.frameworks) <= pinned.KNOWN_FRAMEWORKS, package.name
        assert package.files_importing, f"{package.name}: no files_importing counts"
        for fw in package.frameworks:
            assert package.files_importing.get(fw, 0) > 0, (
                f"{package.name} is listed for {fw} but counts none"
            )
        # Portable archives only: every machine's pip must pick this very file.
        assert package.filename.endswith(("-none-any.whl", ".tar.gz")), package.filename
        assert package.name not in {"torch", "tensorflow", "jax", "jaxlib", "tf-keras"}, package.name
    assert len({p.sha256 for p in committed}) == len(committed)


def test_packages_yaml_claims_the_study_corpus_size(committed: list[pinned.PinnedPackage]) -> None:
    totals = Counter()
    for package in committed:
        totals.update(package.files_importing)
    for fw in sorted(pinned.KNOWN_FRAMEWORKS):
        assert totals[fw] >= STUDY_FILES_PER_FRAMEWORK, (fw, totals[fw])


def test_params_default_to_the_pinned_corpus() -> None:
    params = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["frequencies"]
    assert params["source"] == "pinned"
    assert (REPO_ROOT / params["manifest"]).is_file()


def test_a_failed_download_says_what_to_do(manifest: Path, tmp_path: Path) -> None:
    def offline(package: pinned.PinnedPackage, dest: Path) -> None:
        raise pinned.CorpusArchiveError(f"pip download of {package.repo_name} failed (1): no index")

    with pytest.raises(pinned.CorpusArchiveError, match=r"toypkg==1\.0 failed.*needs the package index once"):
        records(manifest, tmp_path / "cache", offline)
