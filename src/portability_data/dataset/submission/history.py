"""The harness and case digests of this repository's commits, read from git objects.

A submission's runs row names the digests of the harness and cases that ran it; the check accepts
them only if a commit of this repository has them. `CommitDigests` computes them per commit the way
`runner.provenance` computes them on disk, from one `git cat-file --batch` process.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from portability_data.dataset.submission.files import SubmissionError
from portability_data.runner.census_rows import CENSUS_FOLDER
from portability_data.runner.provenance import (
    CENSUS_INPUT_FILES,
    CORE_FILES,
    DEVICES_FOLDER,
    LEGACY_HARNESS_FILE_SETS,
    census_inputs_of,
    harness_digest_of,
    path_harness_digest,
    sha256_of_parts,
)
from portability_data.tables.contracts import FRAMEWORKS

# Where the harness files live in the repository: runner/ since the layered layout, the package
# root before it (a submission may match a commit of either). Since the device paths (issue 50) a
# commit has one harness digest per path (CORE_FILES and runner/devices/<path>.py); before, one.
HARNESS_DIRS = ("src/portability_data/runner", "src/portability_data")
CASES_DIR = "cases"
ORACLE_NAME = "oracle.py"  # the census's judge, in every census case's digest (runner.provenance)
# what a census module's inputs are made with (runner.provenance), in the digest of the modules
# that import them
INPUT_NAMES = tuple(path.name for path in CENSUS_INPUT_FILES)
MAX_COMMITS = 500  # newest commits of `git rev-list --all` whose digests a submission may match


def git_output(repo_root: Path, *args: str) -> str:
    """stdout of a read-only git command in the repository (raises SubmissionError on failure)."""
    done = subprocess.run(
        ["git", "-C", str(repo_root), *args], capture_output=True, text=True, check=False, timeout=120
    )
    if done.returncode != 0:
        raise SubmissionError(f"`git {' '.join(args)}` failed in {repo_root}: {done.stderr.strip()}")
    return done.stdout


def parse_tree(data: bytes) -> dict[str, tuple[str, str]]:
    """name -> (mode, object id) of a raw git tree object (`<mode> <name>\\0<20-byte id>` entries)."""
    entries, at = {}, 0
    while at < len(data):
        space = data.index(b" ", at)
        nul = data.index(b"\0", space)
        name = data[space + 1 : nul].decode("utf-8", "surrogateescape")
        entries[name] = (data[at:space].decode(), data[nul + 1 : nul + 21].hex())
        at = nul + 21
    return entries


class CommitDigests:
    """The harness and per-case digests of this repository's newest commits, computed the way
    `runner.provenance.harness_digest` and `case_digests` compute them, from git objects read by one
    `git cat-file --batch` process. Objects are cached by id (commits sharing a cases/ tree are read
    once) and commits are scanned newest first only as far as a lookup needs."""

    def __init__(self, repo_root: Path, max_commits: int = MAX_COMMITS, base: str | None = None) -> None:
        self.repo_root = repo_root
        # With a base (a pull request's target), only the base's history counts: a pull request
        # must not be able to vouch for runs made with a harness or cases it brings itself.
        scope = [base] if base else ["--all"]
        self.commits = git_output(repo_root, "rev-list", *scope, f"--max-count={max_commits}").split()
        self.harness: dict[str, str] = {}  # digest -> newest commit it is the harness of
        self.cases: dict[tuple[str, str], str] = {}  # (case_id, digest) -> newest commit
        self._scanned = 0
        self._objects: dict[str, bytes] = {}
        # (cases/ tree id, runner/oracle.py id, input file ids) -> the case digests of that tree
        self._case_sets: dict[tuple[str, str | None, tuple[str | None, ...]], list[tuple[str, str]]] = {}
        self._harness_of: dict[tuple[str, ...], list[str]] = {}
        self._case_of: dict[tuple[str, str | None], tuple[str, str] | None] = {}
        self._census_of: dict[tuple[str, str, str | None, tuple[str | None, ...]], list[tuple[str, str]]] = {}
        self._oracle_id: str | None = None  # the scanned commit's runner/oracle.py
        self._input_ids: tuple[str | None, ...] = ()  # its INPUT_NAMES (None: absent)
        self._batch: subprocess.Popen[bytes] | None = None

    def unknown(
        self, harness: set[str], cases: set[tuple[str, str]]
    ) -> tuple[set[str], set[tuple[str, str]]]:
        """The harness digests and (case_id, digest) pairs that no scanned commit has."""
        try:
            while self._scanned < len(self.commits) and (
                harness - self.harness.keys() or cases - self.cases.keys()
            ):
                self._scan(self.commits[self._scanned])
                self._scanned += 1
        finally:
            self.close()
        return harness - self.harness.keys(), cases - self.cases.keys()

    def close(self) -> None:
        if self._batch is not None:
            assert self._batch.stdin is not None
            self._batch.stdin.close()
            self._batch.wait(timeout=30)
            self._batch = None

    def _read(self, name: str) -> tuple[str, bytes] | None:
        """(object id, content) of `name` (an id or `<commit>:<path>`); None where it does not exist."""
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", "-C", str(self.repo_root), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self._batch.stdin is not None and self._batch.stdout is not None
        self._batch.stdin.write(name.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) != 3:  # "<name> missing" (or ambiguous)
            return None
        content = self._batch.stdout.read(int(header[2]))
        self._batch.stdout.read(1)  # the newline after the content
        return header[0].decode(), content

    def _object(self, object_id: str) -> bytes:
        if object_id not in self._objects:
            found = self._read(object_id)
            self._objects[object_id] = found[1] if found else b""
        return self._objects[object_id]

    def _scan(self, commit: str) -> None:
        oracle = self._read(f"{commit}:{HARNESS_DIRS[0]}/{ORACLE_NAME}")
        self._oracle_id = oracle[0] if oracle is not None else None
        inputs = [self._read(f"{commit}:{HARNESS_DIRS[0]}/{name}") for name in INPUT_NAMES]
        self._input_ids = tuple(found[0] if found is not None else None for found in inputs)
        cases = self._read(f"{commit}:{CASES_DIR}")
        case_entries = parse_tree(cases[1]) if cases else {}
        if cases is not None:
            # census digests include the commit's oracle and the input files their modules import
            tree = (cases[0], self._oracle_id, self._input_ids)
            if tree not in self._case_sets:
                self._case_sets[tree] = self._case_digests(case_entries)
            for key in self._case_sets[tree]:
                self.cases.setdefault(key, commit)
        conftest = case_entries.get("conftest.py", ("", ""))[1]
        for digest in self._harness_digests(commit, conftest):
            self.harness.setdefault(digest, commit)

    def _harness_digests(self, commit: str, conftest: str) -> list[str]:
        """The commit's harness digests: one per device path (core + path module) where it has
        runner/devices/, else the one of its legacy file set; none where it has no harness."""
        package = self._read(f"{commit}:{HARNESS_DIRS[0]}")
        entries = parse_tree(package[1]) if package is not None else {}
        devices = entries.get(DEVICES_FOLDER)
        if devices is not None and devices[0] == "40000":
            modules = {
                name: object_id
                for name, (mode, object_id) in parse_tree(self._object(devices[1])).items()
                if name.endswith(".py") and mode.startswith("100")
            }
            entries = {**entries, **{f"{DEVICES_FOLDER}/{n}": ("100644", i) for n, i in modules.items()}}
            if not all(name in entries for name in CORE_FILES):
                return []
            core = tuple(entries[name][1] for name in CORE_FILES)
            paths = tuple(sorted((n, i) for n, i in modules.items() if n != "__init__.py"))
            key = ("paths", *core, *(f"{n}={i}" for n, i in paths), conftest)
            if key not in self._harness_of:
                content = {name: self._object(object_id) for name, object_id in paths}
                core_bytes = [self._object(object_id) for object_id in core]
                cases_conftest = self._conftest(conftest)
                self._harness_of[key] = [
                    path_harness_digest(core_bytes, content, name.removesuffix(".py"), cases_conftest)
                    for name, _ in paths
                ]
            return self._harness_of[key]
        ids = self._harness_ids(commit)
        if ids is None:
            return []
        key = (*ids, conftest)
        if key not in self._harness_of:
            files = [self._object(object_id) for object_id in ids]
            self._harness_of[key] = [harness_digest_of(files, self._conftest(conftest))]
        return self._harness_of[key]

    def _conftest(self, object_id: str) -> bytes:
        """The cases' conftest as harness_digest hashes it: b"" if the commit has none."""
        return self._object(object_id) if object_id else b""

    def _harness_ids(self, commit: str) -> list[str] | None:
        """Object ids of a legacy commit's harness files: the first file set (newest first) found
        whole in one of the HARNESS_DIRS; None where the commit has no harness."""
        trees = {}
        for folder in HARNESS_DIRS:
            package = self._read(f"{commit}:{folder}")
            trees[folder] = parse_tree(package[1]) if package is not None else {}
        for names in LEGACY_HARNESS_FILE_SETS:
            for folder in HARNESS_DIRS:
                entries = trees[folder]
                if all(name in entries for name in names):
                    return [entries[name][1] for name in names]
        return None

    def _case_digests(self, case_entries: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
        """(case_id, digest) of every row file cases/<framework>/*.yaml of one cases/ tree."""
        files: dict[str, str] = {}
        for framework in FRAMEWORKS:
            mode, tree_id = case_entries.get(framework, ("", ""))
            if mode != "40000":
                continue
            for name, (file_mode, object_id) in parse_tree(self._object(tree_id)).items():
                if file_mode.startswith("100"):
                    files[f"{CASES_DIR}/{framework}/{name}"] = object_id
        found = []
        for path, row_id in files.items():
            if path.endswith(".yaml"):
                digest = self._case_digest(row_id, files)
                if digest is not None:
                    found.append(digest)
        for framework in FRAMEWORKS:
            found += self._census_digests(case_entries, framework)
        return found

    def _census_digests(
        self, case_entries: dict[str, tuple[str, str]], framework: str
    ) -> list[tuple[str, str]]:
        """(case_id, digest) of every census entry of cases/<framework>/census/: each entry's digest is
        over its manifest and the module beside it, as runner.provenance.case_digests makes it."""
        mode, tree_id = case_entries.get(framework, ("", ""))
        if mode != "40000":
            return []
        census = parse_tree(self._object(tree_id)).get(CENSUS_FOLDER)
        if census is None or census[0] != "40000":
            return []
        files = {name: object_id for name, (_, object_id) in parse_tree(self._object(census[1])).items()}
        found = []
        for name, manifest_id in files.items():
            module_id = files.get(f"test_{name.removesuffix('.yaml')}.py")
            if not name.endswith(".yaml") or module_id is None:
                continue
            key = (manifest_id, module_id, self._oracle_id, self._input_ids)
            if key not in self._census_of:
                self._census_of[key] = self._census_entries(*key)
            found += self._census_of[key]
        return found

    def _census_entries(
        self, manifest_id: str, module_id: str, oracle_id: str | None, input_ids: tuple[str | None, ...]
    ) -> list[tuple[str, str]]:
        """(case_id, digest) of a manifest's entries: manifest, module, the commit's oracle and the
        commit's input files the module imports (none where the commit lacks one it imports)."""
        import yaml

        manifest_bytes = self._object(manifest_id)
        try:
            manifest = yaml.load(manifest_bytes, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            return []
        oracle = [self._object(oracle_id)] if oracle_id else []
        module = self._object(module_id)
        ids = dict(zip(INPUT_NAMES, input_ids, strict=True))
        imported = [ids.get(path.name) for path in census_inputs_of(module)]
        if None in imported:
            return []  # the module imports a file its commit does not have: it could not have run
        inputs = [self._object(object_id) for object_id in imported if object_id is not None]
        digest = sha256_of_parts(manifest_bytes, module, *oracle, *inputs)
        entries = manifest.get("entries") if isinstance(manifest, dict) else None
        return [(e["case_id"], digest) for e in entries or [] if isinstance(e, dict) and "case_id" in e]

    def _case_digest(self, row_id: str, files: dict[str, str]) -> tuple[str, str] | None:
        """(case_id, digest) of a row file as runner.provenance.case_digests makes it: row bytes, then
        test bytes."""
        import yaml

        row_bytes = self._object(row_id)
        try:
            row = yaml.load(row_bytes, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            return None
        if not isinstance(row, dict) or not isinstance(row.get("case_id"), str):
            return None
        test_id = files.get(str(row["test_file"])) if row.get("test_file") else None
        if row.get("test_file") and test_id is None:
            return None  # the runner could not have run it
        key = (row_id, test_id)
        if key not in self._case_of:
            parts = [row_bytes] + ([self._object(test_id)] if test_id else [])
            self._case_of[key] = (row["case_id"], sha256_of_parts(*parts))
        return self._case_of[key]
