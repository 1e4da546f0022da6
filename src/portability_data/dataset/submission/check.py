"""`portability submission check`: every file a pull request adds (or a submission folder) is read
as untrusted and held to the rules; every refusal is one line naming the file, the rule and the fix.

This module finds and reads the files, pairs each shard with its runs row and checks what spans
runs: digests of a commit, new run ids, committed shards unchanged, and system.json. The rules of a
single run are in `run_rules`. Reading tables against their contract needs the pipeline extra
(pandas, pandera), imported only when a check runs.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from portability_data.dataset.submission.accounting import check_accounting, check_described
from portability_data.dataset.submission.chain import check_chains, is_chain_file
from portability_data.dataset.submission.files import (
    RUN_ID,
    SYSTEM_FILE,
    TABLE_FOLDERS,
    SubmissionError,
    file_sha256,
    parquet_magic_problem,
)
from portability_data.dataset.submission.history import CommitDigests, git_output
from portability_data.dataset.submission.plausibility import check_plausibility
from portability_data.dataset.submission.problems import CheckReport, Submitted, listed_values
from portability_data.dataset.submission.run_rules import check_run


def _expand(paths: Sequence[Path], report: CheckReport) -> tuple[list[Path], list[Path], list[Path]]:
    """(files, submission folders, paths that do not exist) from the paths given."""
    files, folders, missing = [], [], []
    for path in map(Path, paths):
        if path.is_dir():
            folders.append(path)
            for found in sorted(p for p in path.rglob("*") if p.is_file()):
                relative = found.relative_to(path)
                if relative.as_posix() == SYSTEM_FILE or is_chain_file(relative):
                    continue  # read by _check_system_file and chain.check_chains
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
                f"{where} {issue} (row(s) {listed_values(rows) or '-'})",
                f"make it match schemas/{item.table}.yaml",
            )
    item.data = data


def _relative(path: Path, repo_root: Path) -> str | None:
    """The path relative to the repository root (posix), or None where it lies outside."""
    try:
        return path.resolve().relative_to(repo_root).as_posix()
    except ValueError:
        return None


class BaseRevision:
    """The revision a pull request is compared with: what data/ held there, and what changed since."""

    def __init__(self, repo_root: Path, base: str | None, report: CheckReport) -> None:
        self.paths: set[str] = set()
        self.changed: dict[str, str] = {}  # path -> M, D or T against --base
        self.name = base or "HEAD"
        try:
            commit = git_output(
                repo_root, "rev-parse", "--verify", "--quiet", f"{self.name}^{{commit}}"
            ).strip()
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
                commit = git_output(repo_root, "merge-base", commit, "HEAD").strip() or commit
            status = git_output(
                repo_root, "diff", "--name-status", "--no-renames", commit, "--", "data/results", "data/runs"
            )
            for line in status.splitlines():
                kind, _, path = line.partition("\t")
                if kind[:1] in "MDT" and path.endswith(".parquet"):
                    self.changed[path] = kind[:1]
        listed = git_output(
            repo_root, "ls-tree", "-r", "--name-only", commit, "--", "data/results", "data/runs"
        )
        self.paths = set(listed.split())


def branch_files(repo_root: Path, base: str) -> list[str]:
    """The shards and runs rows (paths relative to the root) the branch adds or changes against
    `base`, from where it branched off, committed or not, and the untracked ones: what a pull
    request would bring (a deleted shard is found by the check itself)."""
    try:
        commit = git_output(repo_root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").strip()
    except SubmissionError:
        raise SubmissionError(
            f"--base {base} is not a commit of {repo_root}; fetch it (`git fetch origin`) or name the "
            "pull request's target branch"
        ) from None
    with contextlib.suppress(SubmissionError):  # unrelated histories: compare with the base itself
        commit = git_output(repo_root, "merge-base", commit, "HEAD").strip() or commit
    folders = ("data/results", "data/runs")
    changed = git_output(
        repo_root, "diff", "--name-only", "--no-renames", "--diff-filter=ACMT", commit, "--", *folders
    )
    untracked = git_output(repo_root, "ls-files", "--others", "--exclude-standard", "--", *folders)
    return sorted({p for p in [*changed.split(), *untracked.split()] if p.endswith(".parquet")})


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
        git_output(repo_root, "rev-parse", "--git-dir")
    except SubmissionError:
        report.add(
            str(repo_root), "repository", "not a git checkout", "run from the repository root or pass --root"
        )
        return report
    compared = BaseRevision(repo_root, base, report)
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
    check_chains(folders, items, report)
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
                run_id,
                "exists",
                f"run id under several sources ({listed_values(found)})",
                "a run id is unique",
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
            row = check_run(pair["runs"], pair["results"], report)
            if row is not None:
                shard, shown = pair["results"].data, pair["results"].shown
                check_accounting(row, shard, pair["runs"].shown, shown, repo_root, report)
                check_plausibility(row, shard, shown, repo_root, report)
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


def _check_new(items: list[Submitted], repo_root: Path, compared: BaseRevision, report: CheckReport) -> None:
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
                f"run id {run_id} exists already in the repository at {compared.name} "
                f"({listed_values(clashes)})",
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
    chains = [p.relative_to(folder) for p in folder.glob("*/*/*") if is_chain_file(p.relative_to(folder))]
    present.update({c.as_posix(): Submitted(folder / c, str(folder / c), "chain", "", "") for c in chains})
    if set(listed) != set(present):
        report.add(
            str(path),
            "system",
            f"lists {listed_values(listed) or 'no file'}, "
            f"the folder holds {listed_values(present) or 'no file'}",
            fix,
        )
    for relative in sorted(set(listed) & set(present)):
        if file_sha256(present[relative].path) != listed[relative]:
            report.add(str(path), "system", f"{relative} is not the file it describes (sha256 differs)", fix)
    shown = {item.shown for item in present.values()}
    check_described(str(path), system, [r for r in report.runs if r["_where"] in shown], report)
