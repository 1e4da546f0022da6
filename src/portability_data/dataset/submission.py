"""Hardware runs by pull request: package a contributor's runs, and check a submission mechanically.

The data on GPUs, TPUs and MPS comes from people who have them, so a run must be cheap to submit
and safe to review without rerunning it (as MLPerf's submission checker does for its results).

`package` copies the runs' shards and runs rows byte for byte into a folder and writes
`system.json`, the machine and code described from the runs rows. It needs pyarrow and json only,
so it works on a bare device machine beside `portability run`.

`check` treats every file as untrusted: a file must be plain Parquet by its magic bytes before
any reader touches it, is read by pyarrow against its contract (nothing is unpickled or
executed), then held to the rules a reviewer would apply by hand: the runs row matches its shard,
the harness and case digests are those of a commit of this repository, the run id is new, no
committed shard changes, the device and versions are named, the values are plausible, and a
complete run covers its cases. Every refusal is one line naming the file, the rule and the fix.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from portability_data.runner.supervisor import HARNESS_FILES, _sha256, harness_digest_of
from portability_data.tables.atomic import atomic_write_bytes
from portability_data.tables.contracts import DEVICES, FRAMEWORKS

MAGIC = b"PAR1"  # a Parquet file starts and ends with it; anything else is refused unread
TABLE_FOLDERS = ("results", "runs")  # <submission>/<table>/<source>/<run_id>.parquet, as under data/
# Where the HARNESS_FILES live in the repository: runner/ since the layered layout, the package
# root before it (a submission may match a commit of either).
HARNESS_DIRS = ("src/portability_data/runner", "src/portability_data")
CASES_DIR = "cases"
MAX_COMMITS = 500  # newest commits of `git rev-list --all` whose digests a submission may match
SYSTEM_FILE = "system.json"
SUBMISSION_FORMAT = 1
RUN_ID = re.compile(r"^[A-Za-z0-9_.:\-]+$")  # the contracts' identifier: no glob or path characters
# What the runner writes when the device never said what it is (runner.finish: the device name,
# "unknown"), and the empty spellings of the same.
UNKNOWN_VALUES = frozenset({"", "unknown", "none", "null", "n/a", *DEVICES})
# Columns every shard row shares with its runs row.
SHARED_COLUMNS = ("source", "framework", "device", "mode", "framework_version", "device_model")
HOST_FIELDS = ("host", "cpu_model", "cpu_flags", "cpu_count", "memory_mb", "os", "python")
DEVICE_FIELDS = ("device", "device_model", "accelerator", "driver")
# Per run in system.json: what ran, where, how, and with which code.
RUN_FIELDS = (
    "run_id", "source", "framework", "framework_version", "device", "device_model", "mode", "repeats",
    "status", "n_results", "timeout_s", "timer_floor_ms", "started_at", "finished_at", "params_hash",
    "git_commit", "harness_digest", "cases_digest",
)  # fmt: skip
LISTED = 5  # examples named in one problem line


class SubmissionError(RuntimeError):
    """Packaging cannot go on; the message names the run or file and what to do."""


def parquet_magic_problem(path: Path) -> str | None:
    """Why `path` is not plain Parquet by its first and last four bytes (None if it is), read
    before any reader parses it: a pickle or a script renamed .parquet is refused unread."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            head = handle.read(4)
            handle.seek(max(size - 4, 0))
            tail = handle.read(4)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if size < 12 or head != MAGIC or tail != MAGIC:
        return f"not plain Parquet (starts {head!r}, ends {tail!r}; Parquet starts and ends with b'PAR1')"
    return None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --------------------------------------------------------------------------- package


def locate_run(repo_root: Path, run_id: str) -> tuple[Path, Path]:
    """(shard, runs row) of a run made in this checkout, under whichever source it ran as."""
    if not RUN_ID.match(run_id):
        raise SubmissionError(f"run id {run_id!r} is not a run id (letters, digits, _ . : - only)")
    shards = sorted((repo_root / "data" / "results").glob(f"*/{run_id}.parquet"))
    if not shards:
        raise SubmissionError(
            f"run {run_id}: no shard data/results/<source>/{run_id}.parquet under {repo_root}; list "
            f"finished runs with `ls data/runs/*/` (an unfinished one: `portability run --resume {run_id}`)"
        )
    if len(shards) > 1:
        raise SubmissionError(
            f"run {run_id}: shards under several sources ({', '.join(str(p) for p in shards)}); "
            "a run id is unique: remove the copy that is not the run's"
        )
    runs = repo_root / "data" / "runs" / shards[0].parent.name / f"{run_id}.parquet"
    if not runs.is_file():
        raise SubmissionError(
            f"run {run_id}: shard {shards[0]} has no runs row {runs}; was it copied by hand?"
        )
    return shards[0], runs


def _json_or_text(value: str | None) -> Any:
    """A JSON column of the runs row as data (its text where it is not JSON)."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return value


def _plain(value: Any) -> Any:
    """A runs-row value as JSON can hold it (timestamps as ISO 8601)."""
    return value.isoformat() if hasattr(value, "isoformat") else value


def _distinct(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, kept = set(), []
    for item in items:
        key = json.dumps(item, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            kept.append(item)
    return kept


def system_description(
    run_rows: list[dict[str, Any]], files: dict[str, list[dict[str, str]]]
) -> dict[str, Any]:
    """What system.json says: the host(s), devices and framework builds the runs rows record, and
    per run the code that ran it (git commit, harness and case digests) and its files' sha256."""
    runs = []
    for row in run_rows:
        runs.append(
            {
                **{key: _plain(row.get(key)) for key in RUN_FIELDS},
                "case_digests": _json_or_text(row.get("case_digests")),
                "files": files[row["run_id"]],
            }
        )
    return {
        "format": SUBMISSION_FORMAT,
        "made_by": "portability submission package",
        "hosts": _distinct([{key: row.get(key) for key in HOST_FIELDS} for row in run_rows]),
        "devices": _distinct([{key: row.get(key) for key in DEVICE_FIELDS} for row in run_rows]),
        "frameworks": _distinct(
            [
                {
                    "framework": row["framework"],
                    "framework_version": row["framework_version"],
                    "build": _json_or_text(row.get("build")),
                    "packages": _json_or_text(row.get("packages")),
                }
                for row in run_rows
            ]
        ),
        "git_commits": sorted({row["git_commit"] for row in run_rows if row.get("git_commit")}),
        "harness_digests": sorted({row["harness_digest"] for row in run_rows if row.get("harness_digest")}),
        "runs": runs,
    }


def package(repo_root: Path, run_ids: Sequence[str], out: Path) -> dict[str, Any]:
    """Copy the runs' shards and runs rows (byte for byte) into `out` under results/<source>/ and
    runs/<source>/, and write out/system.json; returns what system.json says."""
    repo_root = Path(repo_root).resolve()
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SubmissionError(f"{out} exists and is not an empty folder; package into a new folder")
    located = [(run_id, *locate_run(repo_root, run_id)) for run_id in dict.fromkeys(run_ids)]
    if not located:
        raise SubmissionError("no run ids given; name the runs to submit (`ls data/runs/*/`)")
    run_rows, files = [], {}
    for run_id, shard, runs in located:
        for path in (shard, runs):
            why = parquet_magic_problem(path)
            if why:
                raise SubmissionError(f"{path}: {why}; re-run the run, the file was damaged")
        table = pq.read_table(runs)
        if table.num_rows != 1:
            raise SubmissionError(f"{runs}: {table.num_rows} runs rows, a run writes one; re-run the run")
        run_rows.append(table.to_pylist()[0])
        files[run_id] = []
        for folder, path in (("results", shard), ("runs", runs)):
            relative = f"{folder}/{path.parent.name}/{path.name}"
            (out / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out / relative)
            files[run_id].append({"path": relative, "sha256": file_sha256(out / relative)})
    system = system_description(run_rows, files)
    atomic_write_bytes(out / SYSTEM_FILE, (json.dumps(system, indent=2, sort_keys=True) + "\n").encode())
    return system


# --------------------------------------------------------------------------- digests of commits


def _git(repo_root: Path, *args: str) -> str:
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
    `runner.harness_digest` and `runner.case_digests` compute them, from git objects read by one
    `git cat-file --batch` process. Objects are cached by id (commits sharing a cases/ tree are read
    once) and commits are scanned newest first only as far as a lookup needs."""

    def __init__(self, repo_root: Path, max_commits: int = MAX_COMMITS, base: str | None = None) -> None:
        self.repo_root = repo_root
        # With a base (a pull request's target), only the base's history counts: a pull request
        # must not be able to vouch for runs made with a harness or cases it brings itself.
        scope = [base] if base else ["--all"]
        self.commits = _git(repo_root, "rev-list", *scope, f"--max-count={max_commits}").split()
        self.harness: dict[str, str] = {}  # digest -> newest commit it is the harness of
        self.cases: dict[tuple[str, str], str] = {}  # (case_id, digest) -> newest commit
        self._scanned = 0
        self._objects: dict[str, bytes] = {}
        self._case_sets: dict[str, list[tuple[str, str]]] = {}  # cases/ tree id -> its case digests
        self._harness_of: dict[tuple[str, ...], str] = {}
        self._case_of: dict[tuple[str, str | None], tuple[str, str] | None] = {}
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
        cases = self._read(f"{commit}:{CASES_DIR}")
        case_entries = parse_tree(cases[1]) if cases else {}
        if cases is not None:
            if cases[0] not in self._case_sets:
                self._case_sets[cases[0]] = self._case_digests(case_entries)
            for key in self._case_sets[cases[0]]:
                self.cases.setdefault(key, commit)
        ids: list[str] = []
        for folder in HARNESS_DIRS:
            package = self._read(f"{commit}:{folder}")
            entries = parse_tree(package[1]) if package is not None else {}
            ids = [entries[name][1] for name in HARNESS_FILES if name in entries]
            if len(ids) == len(HARNESS_FILES):
                break
        if len(ids) != len(HARNESS_FILES):
            return
        conftest = case_entries.get("conftest.py", ("", ""))[1]
        key = (*ids, conftest)
        if key not in self._harness_of:
            files = [self._object(object_id) for object_id in ids]
            # as harness_digest: b"" if the conftest is absent
            self._harness_of[key] = harness_digest_of(files, self._object(conftest) if conftest else b"")
        self.harness.setdefault(self._harness_of[key], commit)

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
        return found

    def _case_digest(self, row_id: str, files: dict[str, str]) -> tuple[str, str] | None:
        """(case_id, digest) of a row file as runner.case_digests makes it: row bytes, then test bytes."""
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
            self._case_of[key] = (row["case_id"], _sha256(*parts))
        return self._case_of[key]


# --------------------------------------------------------------------------- check


@dataclass(frozen=True)
class Problem:
    """One reason to refuse a submission: where, which rule, what is wrong and what to do."""

    where: str
    rule: str
    issue: str
    fix: str

    def render(self) -> str:
        return f"{self.where}: [{self.rule}] {self.issue}; {self.fix}"


@dataclass
class Submitted:
    """One file of the submission, and what it holds once read."""

    path: Path
    shown: str
    table: str
    source: str
    run_id: str
    data: pa.Table | None = None


@dataclass
class CheckReport:
    """What the check refused (problems) and, for the summary, what it read."""

    problems: list[Problem] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    files: int = 0
    matched: dict[str, str] = field(default_factory=dict)  # harness digest -> commit it is from
    cases_matched: int = 0  # case digests found in a commit

    def add(self, where: str, rule: str, issue: str, fix: str) -> None:
        problem = Problem(where, rule, issue, fix)
        if problem not in self.problems:
            self.problems.append(problem)

    def lines(self) -> list[str]:
        return [p.render() for p in self.problems]

    def summary(self) -> list[str]:
        lines = [
            f"  {r['run_id']}: {r['source']} · {r['framework']} {r['framework_version']} · {r['device']} "
            f"{r['device_model']} · {r['mode']} · {r['status']} · {r['n_results']} row(s)"
            for r in self.runs
        ]
        commits = ", ".join(f"{commit[:10]}" for commit in sorted(set(self.matched.values())))
        return [
            f"OK: {len(self.runs)} run(s) in {self.files} file(s) pass the submission check "
            f"(harness digest of commit(s) {commits or '-'}; {self.cases_matched} case digest(s), each "
            "of a commit)",
            *lines,
        ]


def _listed(values: Any) -> str:
    values = sorted(str(v) for v in values)
    more = f", ... ({len(values)} in all)" if len(values) > LISTED else ""
    return ", ".join(values[:LISTED]) + more


def _unknown(value: Any) -> bool:
    return value is None or str(value).strip().lower() in UNKNOWN_VALUES


def _finite_positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def _expand(paths: Sequence[Path], report: CheckReport) -> tuple[list[Path], list[Path], list[Path]]:
    """(files, submission folders, paths that do not exist) from the paths given."""
    files, folders, missing = [], [], []
    for path in map(Path, paths):
        if path.is_dir():
            folders.append(path)
            for found in sorted(p for p in path.rglob("*") if p.is_file()):
                relative = found.relative_to(path)
                if relative.as_posix() == SYSTEM_FILE:
                    continue
                if (
                    len(relative.parts) == 3
                    and relative.parts[0] in TABLE_FOLDERS
                    and found.suffix == ".parquet"
                ):
                    files.append(found)
                else:
                    report.add(
                        str(found),
                        "file",
                        "not part of a submission (only system.json, results/<source>/*.parquet and "
                        "runs/<source>/*.parquet are)",
                        "remove it",
                    )
        elif path.exists():
            files.append(path)
        else:
            missing.append(path)
    return files, folders, missing


def _classify(path: Path, report: CheckReport) -> Submitted | None:
    """The file's table, source and run id from where it lies: <table>/<source>/<run_id>.parquet."""
    table, source, run_id = path.parent.parent.name, path.parent.name, path.stem
    if table not in TABLE_FOLDERS or path.suffix != ".parquet":
        report.add(
            str(path),
            "file",
            "not a shard or runs row (those lie at results/<source>/<run_id>.parquet or "
            "runs/<source>/<run_id>.parquet)",
            "submit only the files `portability run` or `portability bench` wrote",
        )
        return None
    if not RUN_ID.match(run_id) or not RUN_ID.match(source):
        report.add(
            str(path), "file", "source folder or file name is not an identifier", "keep the run's name"
        )
        return None
    return Submitted(path, str(path), table, source, run_id)


def _read(item: Submitted, report: CheckReport) -> None:
    """Magic bytes first, then the contract (schema: tableio.read_file; values: the pandera model)."""
    import pandas as pd

    from portability_data.tables.tableio import TableValidationError, read_file, validate

    why = parquet_magic_problem(item.path)
    if why:
        report.add(
            item.shown, "parquet", why, "submit the file as the runner wrote it (nothing else is read)"
        )
        return
    try:
        data = read_file(item.table, item.path)
    except TableValidationError as exc:
        for problem in exc.problems:
            report.add(item.shown, "contract", problem.render(), f"make it match schemas/{item.table}.yaml")
        return
    except (pa.ArrowException, ValueError, OSError) as exc:
        report.add(item.shown, "parquet", f"not readable as the {item.table} table ({exc})", "re-run the run")
        return
    try:
        validate(item.table, data.to_pandas(types_mapper=pd.ArrowDtype), source=item.shown)
    except TableValidationError as exc:
        grouped: dict[str, list[Any]] = {}
        for problem in exc.problems:  # a frame-wide check fails once per column: one line per check
            rows = grouped.setdefault(problem.issue, [])
            if problem.row is not None and problem.row not in rows:
                rows.append(problem.row)
        for issue, rows in grouped.items():
            columns = sorted({str(p.column) for p in exc.problems if p.issue == issue})
            where = f"column {columns[0]}" if len(columns) == 1 else "table"
            report.add(
                item.shown,
                "contract",
                f"{where} {issue} (row(s) {_listed(rows) or '-'})",
                f"make it match schemas/{item.table}.yaml",
            )
    item.data = data


def _check_run(runs_file: Submitted, shard_file: Submitted, report: CheckReport) -> dict[str, Any] | None:
    """The runs row against its shard, and both against the submission rules; returns the row."""
    assert runs_file.data is not None and shard_file.data is not None
    where, shard_where = runs_file.shown, shard_file.shown
    fix_rerun = "submit the files as the runner wrote them"
    if runs_file.data.num_rows != 1:
        report.add(where, "pairing", f"{runs_file.data.num_rows} runs rows, a run writes one", fix_rerun)
        return None
    row = runs_file.data.to_pylist()[0]
    shard = shard_file.data
    column = {name: shard.column(name).to_pylist() for name in ("run_id", "test_id", "repeat", "case_id")}
    if row["run_id"] != runs_file.run_id:
        report.add(
            where,
            "pairing",
            f"runs row has run_id {row['run_id']!r}, the file is {runs_file.run_id}.parquet",
            fix_rerun,
        )
    if set(column["run_id"]) - {runs_file.run_id}:
        report.add(
            shard_where,
            "pairing",
            f"shard rows carry run_id {_listed(set(column['run_id']) - {runs_file.run_id})}, "
            f"the file is {shard_file.run_id}.parquet",
            fix_rerun,
        )
    if row["source"] != runs_file.source:
        report.add(
            where,
            "pairing",
            f"runs row has source {row['source']!r}, it lies under {runs_file.source}/",
            fix_rerun,
        )
    for name in SHARED_COLUMNS:
        expected = runs_file.source if name == "source" else row[name]
        differing = set(shard.column(name).to_pylist()) - {expected}
        if differing:
            report.add(
                shard_where,
                "pairing",
                f"column {name}: the runs row says {expected!r}, shard rows say {_listed(differing)}",
                fix_rerun,
            )
    if row["n_results"] != shard.num_rows:
        report.add(
            where,
            "pairing",
            f"n_results is {row['n_results']}, the shard has {shard.num_rows} row(s)",
            fix_rerun,
        )
    repeats, seen = row["repeats"], set(column["repeat"])
    beyond = [(t, r) for t, r in zip(column["test_id"], column["repeat"]) if r >= repeats]
    if beyond:
        report.add(
            shard_where,
            "repeats",
            f"{len(beyond)} row(s) have a repeat index >= the runs row's repeats={repeats} "
            f"(first: {beyond[0][0]} repeat {beyond[0][1]}): more rows than the run allows",
            fix_rerun,
        )
    elif row["status"] == "complete" and seen != set(range(repeats)):
        report.add(
            where,
            "repeats",
            f"complete run with repeats={repeats}, the shard has repeat values {_listed(seen) or 'none'}",
            fix_rerun,
        )
    twice = [key for key, count in Counter(zip(column["test_id"], column["repeat"])).items() if count > 1]
    if twice:
        report.add(
            shard_where,
            "rows",
            f"{len(twice)} (test_id, repeat) pair(s) appear more than once (first: {twice[0][0]} repeat "
            f"{twice[0][1]}): more rows than the cases allow",
            fix_rerun,
        )
    _check_values(row, shard, where, shard_where, report)
    _check_cases(row, set(column["case_id"]), where, shard_where, report)
    return row


def _check_values(
    row: dict[str, Any], shard: pa.Table, where: str, shard_where: str, report: CheckReport
) -> None:
    """The device and versions are named; latencies, times and the timer floor are plausible."""
    for name in ("device_model", "framework_version"):
        if _unknown(row[name]):
            report.add(
                where,
                "identity",
                f"{name} is {row[name]!r}: the device or framework did not say what it is",
                "run with a runner that records it (the worker reports the device model and version)",
            )
    if not _finite_positive(row["timer_floor_ms"]):
        report.add(
            where,
            "implausible",
            f"timer_floor_ms is {row['timer_floor_ms']!r}: the timer's floor was not measured",
            "re-run with the current runner (the worker measures the floor when it starts)",
        )
    latencies = shard.column("op_latencies_ms").to_pylist()
    test_ids = shard.column("test_id").to_pylist()
    bad = [(t, v) for t, values in zip(test_ids, latencies) for v in values or [] if not _finite_positive(v)]
    if bad:
        report.add(
            shard_where,
            "implausible",
            f"{len(bad)} op latenc(ies) <= 0 or not finite (first: {bad[0][0]}: {bad[0][1]!r} ms)",
            "a timed operation takes time: submit the measured values",
        )
    negative = [
        (t, v)
        for t, v in zip(test_ids, shard.column("test_time_ms").to_pylist())
        if v is not None and not v >= 0
    ]
    if negative:
        report.add(
            shard_where,
            "implausible",
            f"{len(negative)} test_time_ms < 0 or not a number (first: {negative[0][0]}: {negative[0][1]!r})",
            "submit the measured values",
        )


def _check_cases(
    row: dict[str, Any], covered: set[str], where: str, shard_where: str, report: CheckReport
) -> None:
    """Status, digests present and consistent, and a complete run covering every case it lists."""
    if row["status"] not in ("complete", "partial"):
        report.add(
            where,
            "status",
            f"status {row['status']!r}: the run did not finish",
            f"finish it (`portability run --resume {row['run_id']}`) or close it (`--close {row['run_id']}`)",
        )
    if not row.get("harness_digest"):
        report.add(where, "digest", "no harness_digest", "re-run with the current runner, which records it")
    try:
        listed = json.loads(row["case_digests"]) if row.get("case_digests") else None
    except ValueError:
        listed = None
    if not isinstance(listed, dict) or not all(isinstance(v, str) for v in listed.values()):
        report.add(
            where, "digest", "no case_digests object", "re-run with the current runner, which records it"
        )
        return
    if row.get("cases_digest") != _sha256(*(f"{k}={v}".encode() for k, v in sorted(listed.items()))):
        report.add(
            where, "digest", "cases_digest is not the digest of its case_digests", "submit the row as written"
        )
    extra = covered - set(listed)
    if extra:
        report.add(
            shard_where,
            "rows",
            f"rows of case(s) the runs row's case_digests do not list: {_listed(extra)}",
            "submit the files as the runner wrote them",
        )
    missing = set(listed) - covered
    if row["status"] == "complete" and missing:
        report.add(
            where,
            "coverage",
            f"complete run whose shard covers {len(set(listed) & covered)} of the {len(listed)} case(s) it "
            f"lists (missing: {_listed(missing)})",
            "finish the run, or close an unfinished one as partial (`portability run --close <run_id>`)",
        )


def _relative(path: Path, repo_root: Path) -> str | None:
    """The path relative to the repository root (posix), or None where it lies outside."""
    try:
        return path.resolve().relative_to(repo_root).as_posix()
    except ValueError:
        return None


class _Base:
    """The revision a pull request is compared with: what data/ held there, and what changed since."""

    def __init__(self, repo_root: Path, base: str | None, report: CheckReport) -> None:
        self.paths: set[str] = set()
        self.changed: dict[str, str] = {}  # path -> M, D or T against --base
        self.name = base or "HEAD"
        try:
            commit = _git(repo_root, "rev-parse", "--verify", "--quiet", f"{self.name}^{{commit}}").strip()
        except SubmissionError:
            if base:
                report.add(
                    f"--base {base}",
                    "immutable",
                    "is not a commit of this repository",
                    f"fetch it (`git fetch origin {base}`) or name the pull request's target branch",
                )
            return  # no HEAD (a repository without commits): nothing exists yet
        if base:  # the pull request's own changes: from where it branched off, not the base's tip
            with contextlib.suppress(SubmissionError):  # unrelated histories: compare with the base
                commit = _git(repo_root, "merge-base", commit, "HEAD").strip() or commit
            status = _git(
                repo_root, "diff", "--name-status", "--no-renames", commit, "--", "data/results", "data/runs"
            )
            for line in status.splitlines():
                kind, _, path = line.partition("\t")
                if kind[:1] in "MDT" and path.endswith(".parquet"):
                    self.changed[path] = kind[:1]
        listed = _git(repo_root, "ls-tree", "-r", "--name-only", commit, "--", "data/results", "data/runs")
        self.paths = set(listed.split())


def check_submission(paths: Sequence[Path], repo_root: Path, base: str | None = None) -> CheckReport:
    """Check the shards and runs rows a pull request adds (or a submission folder) against the
    repository at `repo_root`; `base` (the target revision) also refuses changed or deleted shards."""
    try:  # the contract's value checks: the pipeline extra, which CI has and a bare device machine need not
        import pandas  # noqa: F401
        import pandera  # noqa: F401
    except ImportError as exc:
        raise SubmissionError(
            f"the check reads tables with pandas and pandera ({exc}); install the pipeline extra "
            "(`pip install -e '.[pipeline]'`), or let CI check the pull request"
        ) from None
    report = CheckReport()
    repo_root = Path(repo_root).resolve()
    try:
        _git(repo_root, "rev-parse", "--git-dir")
    except SubmissionError:
        report.add(
            str(repo_root), "repository", "not a git checkout", "run from the repository root or pass --root"
        )
        return report
    compared = _Base(repo_root, base, report)
    files, folders, missing = _expand(paths, report)
    for path in missing:
        if _relative(path, repo_root) not in compared.changed:  # a deleted shard: reported below
            report.add(
                str(path), "file", "does not exist", "give the paths of the files the pull request adds"
            )
    items = [item for item in (_classify(path, report) for path in files) if item is not None]
    report.files = len(items)
    for item in items:
        _read(item, report)
    runs = _pair(items, repo_root, report)
    _check_digests(repo_root, runs, report, base)
    _check_new(items, repo_root, compared, report)
    for path, kind in sorted(compared.changed.items()):
        verb = {"M": "changes", "D": "deletes", "T": "changes"}[kind]
        report.add(
            path,
            "immutable",
            f"{verb} a shard committed at {compared.name} (shards are immutable)",
            f"restore it (`git checkout {compared.name} -- {path}`) and add a new run instead",
        )
    for folder in folders:
        _check_system_file(folder, items, report)
    return report


def _pair(items: list[Submitted], repo_root: Path, report: CheckReport) -> list[dict[str, Any]]:
    """Pair each shard with its runs row (a file checked in place may pair with the committed
    other half) and check each pair; returns the runs rows that were checked."""
    by_run: dict[tuple[str, str], dict[str, Submitted]] = {}
    for item in items:
        by_run.setdefault((item.source, item.run_id), {})[item.table] = item
    sources: dict[str, set[str]] = {}
    for source, run_id in by_run:
        sources.setdefault(run_id, set()).add(source)
    for run_id, found in sources.items():
        if len(found) > 1:
            report.add(
                run_id, "exists", f"run id under several sources ({_listed(found)})", "a run id is unique"
            )
    rows = []
    for (source, run_id), pair in sorted(by_run.items()):
        for table in TABLE_FOLDERS:
            if table in pair:
                continue
            present = next(iter(pair.values()))
            beside = repo_root / "data" / table / source / f"{run_id}.parquet"
            in_data = (_relative(present.path, repo_root) or "").startswith("data/")
            if in_data and beside.is_file():
                pair[table] = Submitted(beside, str(beside), table, source, run_id)
                _read(pair[table], report)
            else:
                report.add(
                    present.shown,
                    "pairing",
                    f"no {table}/{source}/{run_id}.parquet beside it",
                    "a run is submitted as its shard and its runs row together",
                )
        if all(pair.get(t) is not None and pair[t].data is not None for t in TABLE_FOLDERS):
            row = _check_run(pair["runs"], pair["results"], report)
            if row is not None:
                row["_where"] = pair["runs"].shown
                rows.append(row)
    report.runs = rows
    return rows


def _check_digests(
    repo_root: Path, rows: list[dict[str, Any]], report: CheckReport, base: str | None = None
) -> None:
    """Every harness and case digest must be that of a commit of this repository."""
    wanted_harness = {r["harness_digest"] for r in rows if r.get("harness_digest")}
    wanted_cases = set()
    for row in rows:
        try:
            listed = json.loads(row.get("case_digests") or "{}")
        except ValueError:
            continue
        if isinstance(listed, dict):
            wanted_cases |= {(k, v) for k, v in listed.items() if isinstance(v, str)}
    if not wanted_harness and not wanted_cases:
        return
    digests = CommitDigests(repo_root, base=base)
    unknown_harness, unknown_cases = digests.unknown(wanted_harness, wanted_cases)
    history = f"git rev-list {base}" if base else "git rev-list --all"
    scope = f"none of the newest {len(digests.commits)} commit(s) of `{history}`"
    report.cases_matched = len(wanted_cases - unknown_cases)
    for row in rows:
        if row.get("harness_digest") in unknown_harness:
            report.add(
                row["_where"],
                "digest",
                f"harness_digest {row['harness_digest'][:16]}... is the harness of {scope}",
                "run from a checkout of a commit of this repository, with harness.py, worker.py and "
                "cases/conftest.py unmodified",
            )
        elif row.get("harness_digest"):
            report.matched[row["harness_digest"]] = digests.harness[row["harness_digest"]]
        listed = (
            json.loads(row.get("case_digests") or "{}") if isinstance(row.get("case_digests"), str) else {}
        )
        for case_id, digest in sorted(listed.items() if isinstance(listed, dict) else []):
            if (case_id, digest) in unknown_cases:
                report.add(
                    row["_where"],
                    "digest",
                    f"case {case_id} digest {str(digest)[:16]}... matches {scope}",
                    "run the cases as committed (a changed case goes in its own pull request first)",
                )


def _check_new(items: list[Submitted], repo_root: Path, compared: _Base, report: CheckReport) -> None:
    """A run the pull request adds must have a new run id: no file of that name in data/results or
    data/runs at the base revision (HEAD without --base), under any source."""
    for run_id in sorted({item.run_id for item in items}):
        mine = {_relative(item.path, repo_root): item for item in items if item.run_id == run_id}
        if all(path in compared.paths for path in mine):
            continue  # files committed at the base: not added by this pull request
        clashes = {path for path in compared.paths if Path(path).stem == run_id} - set(mine)
        if clashes:
            report.add(
                next(iter(mine.values())).shown,
                "exists",
                f"run id {run_id} exists already in the repository at {compared.name} ({_listed(clashes)})",
                "submit a new run (every run gets a new id); committed runs stay as they are",
            )


def _check_system_file(folder: Path, items: list[Submitted], report: CheckReport) -> None:
    """A submission folder's system.json parses and lists exactly its files, with their sha256."""
    path = folder / SYSTEM_FILE
    fix = "re-package the runs with `portability submission package`"
    try:
        system = json.loads(path.read_text(encoding="utf-8"))
        listed = {f["path"]: f["sha256"] for run in system["runs"] for f in run["files"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        report.add(str(path), "system", f"missing or not a system description ({exc})", fix)
        return
    present = {
        item.path.relative_to(folder).as_posix(): item for item in items if item.path.is_relative_to(folder)
    }
    if set(listed) != set(present):
        report.add(
            str(path),
            "system",
            f"lists {_listed(listed) or 'no file'}, the folder holds {_listed(present) or 'no file'}",
            fix,
        )
    for relative in sorted(set(listed) & set(present)):
        if file_sha256(present[relative].path) != listed[relative]:
            report.add(str(path), "system", f"{relative} is not the file it describes (sha256 differs)", fix)
