"""Case row files (cases/<framework>/<slug>.yaml): parse and check them, light enough for the runner.

Every problem in every row is collected and reported at once, each naming the file, the field
and the fix, so a contributor fixes a PR in one round.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from portability_data.tables.contracts import CASE_STATUSES, FRAMEWORKS, REPLACEMENT_REASONS
from portability_data.tables.declaration import QUALIFIED_NAME as QUALIFIED_NAME_PATTERN

# The version of the row file format (its `schema_version`), which cases/README.md documents and
# `portability case new` writes; not the tables' SCHEMA_VERSION, which moves with their columns.
CASE_ROW_VERSION = 1
MAX_ROW_BYTES = 16_384
QUALIFIED_NAME = re.compile(QUALIFIED_NAME_PATTERN)
TEST_FILE = re.compile(r"^cases/(torch|tensorflow|jax)/test_[A-Za-z0-9_]+\.py$")


@dataclass(frozen=True)
class RowField:
    """A field of a case row file, declared once: whether the file must have it, what its value is
    (kind), the values it may take (a vocabulary, or a pattern with its issue and fix). The generic
    checks come from it; the rules across fields are `_check_values`'s."""

    required: bool
    kind: Literal[
        "integer", "string", "string_or_null", "sample_ids", "path"
    ]  # path: the status rules check it
    vocabulary: tuple[str, ...] = ()
    noun: str = ""  # what a vocabulary value is, in the issue: "unknown <noun> 'x'"
    pattern: re.Pattern[str] | None = None
    unmatched: str = ""  # the issue where the value does not match the pattern
    fix: str = ""


# The row format (cases/README.md). no_upstream_test: why an active case has no upstream test (the
# framework's suite has none); `case check` asks for it where upstream_test is null.
# no_compiled_form: why the function has no compiled form (a session or graph-building API, a
# Python hook, file I/O), so compiled mode cannot route it through the compiler and its compiled
# rows are `not_routed` by nature, not by neglect.
ROW_FIELDS: dict[str, RowField] = {
    "schema_version": RowField(True, "integer", fix=f"write `schema_version: {CASE_ROW_VERSION}`"),
    "case_id": RowField(
        True,
        "string",
        pattern=QUALIFIED_NAME,
        unmatched="is not a dotted name",
        fix="use the qualified name, tf. spelled tensorflow.",
    ),
    "framework": RowField(True, "string", FRAMEWORKS, "framework"),
    "function": RowField(
        True,
        "string",
        pattern=QUALIFIED_NAME,
        unmatched="is not a dotted qualified name",
        fix="write the name only, e.g. torch.nn.Linear (no calls, spaces or code)",
    ),
    "test_file": RowField(True, "path"),
    "samples": RowField(True, "sample_ids"),
    "status": RowField(True, "string", CASE_STATUSES, "status"),
    "notes": RowField(True, "string"),
    "upstream_test": RowField(False, "string_or_null"),
    "removed_since": RowField(False, "string_or_null"),
    "study_name": RowField(False, "string_or_null"),
    "reason": RowField(False, "string_or_null", REPLACEMENT_REASONS, "replacement reason"),
    "no_upstream_test": RowField(False, "string_or_null"),
    "no_compiled_form": RowField(False, "string_or_null"),
}
REQUIRED = tuple(field for field, spec in ROW_FIELDS.items() if spec.required)
OPTIONAL = tuple(field for field, spec in ROW_FIELDS.items() if not spec.required)
FRAMEWORK_PREFIX = {"torch": "torch.", "tensorflow": "tf.", "jax": "jax."}


@dataclass(frozen=True)
class RowProblem:
    file: str
    field: str | None
    issue: str
    fix: str

    def render(self) -> str:
        where = f"{self.file}" + (f": field {self.field!r}" if self.field else "")
        return f"{where}: {self.issue}; fix: {self.fix}"


class CaseRowError(ValueError):
    """One or more case rows are malformed; the message lists every problem."""

    def __init__(self, problems: list[RowProblem]) -> None:
        self.problems = problems
        lines = [f"{len(problems)} problem(s) in case rows:"] + [f"  - {p.render()}" for p in problems]
        super().__init__("\n".join(lines))


# libyaml's safe loader where PyYAML was built with it (ten times faster: a run reads every row).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def slug_of(function: str) -> str:
    """cases/<fw>/<slug>.yaml: the qualified name without its framework prefix, dots as '_'."""
    for prefix in ("tensorflow.", "tf.", "torch.", "jax."):
        if function.startswith(prefix):
            function = function[len(prefix) :]
            break
    return function.replace(".", "_")


def case_id_of(function: str) -> str:
    """The case id: the qualified name with `tf.` spelled `tensorflow.`."""
    return "tensorflow." + function[3:] if function.startswith("tf.") else function


def parse_row(path: Path, repo_root: Path) -> tuple[dict[str, Any] | None, list[RowProblem]]:
    """Parse and check one row file; returns the row (or None) and its problems."""
    name = _display(path, repo_root)
    problems: list[RowProblem] = []
    try:
        size = path.stat().st_size
    except OSError as exc:
        return None, [RowProblem(name, None, f"cannot read the file ({exc})", "check the path")]
    if size > MAX_ROW_BYTES:
        return None, [
            RowProblem(
                name,
                None,
                f"row file is {size} bytes (limit {MAX_ROW_BYTES})",
                "a row is a few fields; move long text to the test file's docstring",
            )
        ]
    try:
        row = yaml.load(path.read_text(encoding="utf-8"), Loader=_SAFE_LOADER)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        return None, [
            RowProblem(
                name,
                None,
                f"not valid YAML ({_yaml_problem(exc)})",
                "write the row as a YAML mapping like cases/README.md shows",
            )
        ]
    if not isinstance(row, dict):
        return None, [
            RowProblem(
                name,
                None,
                "the row is not a YAML mapping",
                "write `field: value` lines like cases/README.md shows",
            )
        ]
    for field in REQUIRED:
        if field not in row:
            problems.append(RowProblem(name, field, "missing", f"add `{field}:` (see cases/README.md)"))
    for field in row:
        if field not in REQUIRED and field not in OPTIONAL:
            problems.append(
                RowProblem(
                    name, field, "unknown field", f"remove it; known fields: {', '.join(REQUIRED + OPTIONAL)}"
                )
            )
    problems += _check_values(row, name, path, repo_root)
    return (row if not problems else None), problems


def _yaml_problem(exc: Exception) -> str:
    """The parser's complaint and where in the row it is: PyYAML's own text names the file as
    "<unicode string>", so the line and column are taken from its mark instead."""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}" if mark else problem


def _value_problem(spec: RowField, value: object) -> tuple[str, str] | None:
    """What is wrong with one field's value by its declaration (issue, fix), or None."""
    if spec.kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)):
        return f"must be an integer, got {value!r}", spec.fix
    if spec.kind == "string" and not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}", "quote the value"
    if spec.kind == "string_or_null" and value is not None and not isinstance(value, str):
        return f"must be a string or null, got {type(value).__name__}", "quote the value"
    if spec.kind == "sample_ids" and (
        not isinstance(value, list) or not all(isinstance(s, str) for s in value)
    ):
        return f"must be a list of sample ids, got {value!r}", "write e.g. `samples: [mince2023]`"
    if not isinstance(value, str):
        return None
    if spec.vocabulary and value not in spec.vocabulary:
        return f"unknown {spec.noun} {value!r}", f"use one of {', '.join(spec.vocabulary)}"
    if spec.pattern is not None and not spec.pattern.match(value):
        return f"{value!r} {spec.unmatched}", spec.fix
    return None


def _check_values(row: dict[str, Any], name: str, path: Path, repo_root: Path) -> list[RowProblem]:
    """Every field by its declaration (ROW_FIELDS), then the rules across fields."""
    problems = []

    def bad(field: str, issue: str, fix: str) -> None:
        problems.append(RowProblem(name, field, issue, fix))

    for field, spec in ROW_FIELDS.items():
        found = _value_problem(spec, row[field]) if field in row else None
        if found is not None:
            bad(field, *found)
    version = row.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and not 1 <= version <= CASE_ROW_VERSION:
        bad(
            "schema_version",
            f"version {version} of the row format is not known (latest {CASE_ROW_VERSION}, cases/README.md)",
            f"write `schema_version: {CASE_ROW_VERSION}`",
        )
    framework = row.get("framework")
    if framework in FRAMEWORKS and path.parent.name != framework:
        bad(
            "framework",
            f"row is in cases/{path.parent.name}/ but says {framework!r}",
            f"move the row to cases/{framework}/ or fix the field",
        )
    status = row.get("status")
    if row.get("upstream_test") is not None and row.get("no_upstream_test") is not None:
        bad(
            "no_upstream_test",
            "is set beside an upstream_test",
            "keep upstream_test and remove no_upstream_test (the reason is for a case with none)",
        )
    test_file = row.get("test_file")
    if status == "active":
        if not isinstance(test_file, str):
            bad(
                "test_file",
                "an active case needs a test file",
                "write `test_file: cases/<fw>/test_<slug>.py`",
            )
        else:
            problems += _check_test_file(test_file, name, framework, repo_root)
    elif status == "removed" and not row.get("removed_since"):
        bad(
            "removed_since",
            "a removed case must say since which version",
            'write `removed_since: "<first version without it>"`',
        )
    elif test_file is not None and not isinstance(test_file, str):
        bad("test_file", "must be a path or null", "write the path relative to the repository root")
    return problems


def _check_test_file(test_file: str, name: str, framework: object, repo_root: Path) -> list[RowProblem]:
    if not TEST_FILE.match(test_file) or ".." in test_file:
        return [
            RowProblem(
                name,
                "test_file",
                f"{test_file!r} is not a case test path",
                "use cases/<framework>/test_<slug>.py, relative to the repository root",
            )
        ]
    if isinstance(framework, str) and not test_file.startswith(f"cases/{framework}/"):
        return [
            RowProblem(
                name,
                "test_file",
                f"{test_file!r} is outside cases/{framework}/",
                f"put the test beside its row in cases/{framework}/",
            )
        ]
    if not (repo_root / test_file).is_file():
        return [
            RowProblem(
                name,
                "test_file",
                f"{test_file} does not exist",
                "add the test file or fix the path (scaffold: portability case new)",
            )
        ]
    return []


def _display(path: Path, repo_root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(repo_root.resolve()))
    except ValueError:
        return str(path)


def row_files(cases_dir: Path, frameworks: tuple[str, ...] = FRAMEWORKS) -> list[Path]:
    """Every row file under cases/<framework>/, sorted."""
    return sorted(p for fw in frameworks for p in (cases_dir / fw).glob("*.yaml"))


def load_rows(
    cases_dir: Path, repo_root: Path, frameworks: tuple[str, ...] = FRAMEWORKS
) -> list[dict[str, Any]]:
    """Every case row, checked; raises CaseRowError listing every problem in every file."""
    rows, problems = [], []
    seen: dict[str, str] = {}
    for path in row_files(cases_dir, frameworks):
        row, found = parse_row(path, repo_root)
        problems += found
        if row is None:
            continue
        name = _display(path, repo_root)
        if row["case_id"] in seen:
            problems.append(
                RowProblem(
                    name,
                    "case_id",
                    f"duplicate case id {row['case_id']!r} (also in {seen[row['case_id']]})",
                    "give each case its own id",
                )
            )
            continue
        seen[row["case_id"]] = name
        row["_row_file"] = name
        rows.append(row)
    if problems:
        raise CaseRowError(problems)
    return rows
