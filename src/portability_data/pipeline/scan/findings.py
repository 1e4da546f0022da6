"""`portability scan PATH...`: the framework calls of a user's Python files, each with what the dataset
knows of its function on every device path (knowledge.py), offline.

The calls are found by the usage counter's own resolver (frequencies/calls.py's scan_calls: qualified names
through the file's imports and aliases), so a call the counter counts is a call the scan reports, at
its file, line and column. A file that does not parse cleanly is reported with its path and first
bad line and scanned as far as it parses (the counter does the same); the output formats are in
output.py.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from portability_data.pipeline.frequencies.calls import find_nodes, parser, scan_calls
from portability_data.pipeline.frequencies.index import ApiIndex
from portability_data.readings.knowledge import (
    PROBLEM_STATUSES,
    RANK,
    SCAN_STATUSES,
    Knowledge,
    Setting,
    path_status,
)

# Folders never scanned: version control, virtual environments, caches, build outputs.
SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules", "build", "dist"}
)
SKIPPED_DIR_PREFIXES = (".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs")


class ScanInputError(ValueError):
    """Bad input to the scan (no such path, no Python file, an unknown target or framework)."""


@dataclass(frozen=True)
class CallSite:
    """One call of a framework function: where (1-based line and column, column in characters)."""

    path: str
    line: int
    column: int
    function: str
    framework: str


@dataclass(frozen=True)
class FileProblem:
    """A file scanned as far as it parses (syntax) or not at all (unreadable)."""

    path: str
    line: int
    message: str


@dataclass
class ScanResult:
    files: int = 0
    sites: list[CallSite] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)


def python_files(paths: Sequence[Path]) -> Iterator[Path]:
    """The .py files under each path (a file is taken as given), sorted, skipped folders left out."""
    for root in paths:
        root = Path(root)
        if not root.exists():
            raise ScanInputError(f"{root}: no such file or folder")
        if root.is_file():
            yield root
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(
                d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(SKIPPED_DIR_PREFIXES)
            )
            for name in sorted(files):
                if name.endswith(".py"):
                    yield Path(folder) / name


def _first_error_line(tree) -> int:
    """The 1-based line of the first ERROR or MISSING node of a tree that has errors."""
    cursor = tree.walk()
    while True:
        node = cursor.node
        if node.is_error or node.is_missing:
            return node.start_point[0] + 1
        if node.has_error and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return tree.root_node.start_point[0] + 1


def _column(line: bytes, byte_column: int) -> int:
    """The 1-based column in characters (UTF-16 code units, SARIF's default) of a byte offset."""
    text = line[:byte_column].decode("utf-8", "replace")
    return len(text.encode("utf-16-le")) // 2 + 1


def scan_source(source: bytes, path: str, api: ApiIndex) -> tuple[list[CallSite], FileProblem | None]:
    """The resolved framework calls of one file's bytes, and its syntax problem if it has one."""
    tree = parser().parse(source)
    found: list[tuple[str, tuple[int, int]]] = []
    scan_calls(source, tree, api, find_nodes(source, tree), bare=False, sites=found)
    problem = None
    if tree.root_node.has_error:
        line = _first_error_line(tree)
        problem = FileProblem(path, line, "does not parse; calls scanned as far as it parses")
    lines = source.split(b"\n") if found else []
    sites = [
        CallSite(path, row + 1, _column(lines[row], column), name, api.qualified[name])
        for name, (row, column) in sorted(found, key=lambda site: site[1])  # the scan runs backwards
    ]
    return sites, problem


def scan_paths(paths: Sequence[Path], api: ApiIndex, frameworks: Iterable[str] | None = None) -> ScanResult:
    """Every framework call under `paths` (of `frameworks`, default all); a path with no .py file is
    an input error, a file that cannot be read or parsed is a problem and the scan goes on."""
    wanted = set(frameworks) if frameworks else None
    result = ScanResult()
    for file in python_files(paths):
        result.files += 1
        shown = str(file)
        try:
            source = file.read_bytes()
            source.decode("utf-8")
        except OSError as exc:
            result.problems.append(FileProblem(shown, 1, f"unreadable ({exc.strerror or exc})"))
            continue
        except UnicodeDecodeError as exc:
            line = source[: exc.start].count(b"\n") + 1
            result.problems.append(FileProblem(shown, line, "not UTF-8 text; not scanned"))
            continue
        sites, problem = scan_source(source, shown, api)
        if problem is not None:
            result.problems.append(problem)
        result.sites.extend(s for s in sites if wanted is None or s.framework in wanted)
    if not result.files:
        raise ScanInputError(f"no Python (.py) files under {', '.join(str(p) for p in paths)}")
    return result


@dataclass
class FunctionFinding:
    """One called function: its call sites, its settings per path and its status per target path.
    `function` is the canonical name; `names` the names the code wrote for it (issue 60)."""

    function: str
    framework: str
    sites: list[CallSite]
    settings: dict[str, list[Setting]]  # path -> the function's settings on it
    statuses: dict[str, str]  # target path -> worst status there (not_in_dataset: no row)
    names: tuple[str, ...] = ()

    @property
    def worst(self) -> str:
        return min(self.statuses.values(), key=RANK.__getitem__) if self.statuses else "not_in_dataset"


def check_targets(
    targets: Sequence[str] | None, known: Iterable[str], measured: Sequence[str]
) -> tuple[str, ...]:
    """The target paths asked for, each one a known path (a registered device path or one the
    tables hold); by default the paths the dataset has rows for (`measured`)."""
    known = tuple(sorted({*known, *measured}))
    if not targets:
        return tuple(measured)
    unknown = [t for t in targets if t not in known]
    if unknown:
        raise ScanInputError(
            f"unknown target {', '.join(unknown)}; the known device paths: {', '.join(known)}"
        )
    return tuple(dict.fromkeys(targets))


def findings(result: ScanResult, knowledge: Knowledge, targets: Sequence[str]) -> list[FunctionFinding]:
    """The called functions, worst first: each with its status on each target path. Calls of
    aliases are one function's (its canonical name: `tf.exp` and `tf.math.exp` are one)."""
    by_function: dict[str, list[CallSite]] = {}
    for site in result.sites:
        by_function.setdefault(knowledge.canonical_name(site.function), []).append(site)
    out = []
    for function, sites in by_function.items():
        names = tuple(sorted({s.function for s in sites}))
        per_path: dict[str, list[Setting]] = {}
        for setting in knowledge.settings(function):
            per_path.setdefault(setting.path, []).append(setting)
        statuses = {target: path_status(per_path.get(target, ())) for target in targets}
        out.append(FunctionFinding(function, sites[0].framework, sites, per_path, statuses, names))
    return sorted(out, key=lambda f: (RANK[f.worst], f.function))


@dataclass(frozen=True)
class PathSummary:
    """One target path: of the called functions, how many fail or fall back, how many have no row."""

    path: str
    functions: int
    problems: int
    not_in_dataset: int

    def line(self) -> str:
        return (
            f"{self.problems} of your {self.functions} framework functions are known to fail or fall "
            f"back on {self.path}; {self.not_in_dataset} are not in the dataset"
        )


def summaries(found: Sequence[FunctionFinding], targets: Sequence[str]) -> list[PathSummary]:
    return [
        PathSummary(
            target,
            len(found),
            sum(f.statuses[target] in PROBLEM_STATUSES for f in found),
            sum(f.statuses[target] == "not_in_dataset" for f in found),
        )
        for target in targets
    ]


def check_fail_on(statuses: Sequence[str] | None) -> tuple[str, ...]:
    unknown = [s for s in statuses or () if s not in SCAN_STATUSES]
    if unknown:
        raise ScanInputError(
            f"unknown status {', '.join(unknown)} for --fail-on; known: {', '.join(SCAN_STATUSES)}"
        )
    return tuple(statuses or ())


def failing(found: Sequence[FunctionFinding], fail_on: Sequence[str]) -> list[FunctionFinding]:
    """The functions with a --fail-on status on some target path (the exit code's reason)."""
    return [f for f in found if any(s in fail_on for s in f.statuses.values())]
