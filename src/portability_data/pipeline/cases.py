"""The `cases` step: compile the row files into the `cases` table, with every check at once.

`portability case check` and the `cases` DVC stage are the same code: the rows' own fields
(case_rows), then what needs the other tables and the test engine: the function exists in the
`api` table (or the row says removed), the claimed samples exist, the case was written by a
person (no scaffold placeholder left, an upstream test or the reason there is none), the test file
compiles (a syntax error is named with its line) and pytest collects it. Every problem names the
file, the field and the fix.
"""

from __future__ import annotations

import difflib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings.canonical import canonical_map, with_canonical
from portability_data.runner.case_rows import (
    CASE_ROW_VERSION,
    QUALIFIED_NAME,
    CaseRowError,
    RowProblem,
    load_rows,
    parse_row,
    slug_of,
)
from portability_data.runner.run_summary import describe_collection_error
from portability_data.tables.contracts import FRAMEWORKS, SCHEMA_VERSION, canonical_name
from portability_data.tables.tableio import write_table

# What `portability case new` writes for the author to replace; `case check` refuses a case that
# still holds any of it (the scaffold's test fails on purpose, which `--run` would count as data).
SCAFFOLD_NOTES = "TODO say what the test checks"
SCAFFOLD_DOCSTRING = "TODO one line on what is checked and against what reference."
SCAFFOLD_RAISE = "write the test: values, shapes, dtypes, gradients"
TODO_WORD = re.compile(r"\bTODO\b")


def _framework_aliases(function: str) -> set[str]:
    """Spellings under which the api table may list a name (tf. and tensorflow. are the same)."""
    names = {function}
    if function.startswith("tf."):
        names.add("tensorflow." + function[3:])
    if function.startswith("tensorflow."):
        names.add("tf." + function[len("tensorflow.") :])
    return names


def is_public(name: str) -> bool:
    """Public API names are checked against the api table; private ones (`jax._src...`,
    `tensorflow.python...`) are not enumerated, so only pytest collection vouches for them."""
    name = canonical_name(name)
    return not name.startswith("tensorflow.python.") and not any(p.startswith("_") for p in name.split("."))


def _in_api(name: str, api_names: set[str]) -> bool:
    """In the api table, as a function, class or method, or as a module that holds some; a method a
    public class inherits from a public base is listed under the base only, so the class suffices."""
    spellings = _framework_aliases(name)
    if spellings & api_names or {s.rsplit(".", 1)[0] for s in spellings} & api_names:
        return True
    prefixes = tuple(f"{spelling}." for spelling in spellings)
    return any(known.startswith(prefixes) for known in api_names)


def check_rows(
    rows: list[dict[str, Any]],
    api: pd.DataFrame | None,
    samples: pd.DataFrame | None,
    repo_root: Path,
    collect: bool = True,
) -> list[RowProblem]:
    """Cross-table checks of rows that passed their own checks."""
    problems: list[RowProblem] = []
    known = None
    if api is not None and len(api):
        known = {fw: set(api.loc[api["framework"] == fw, "qualified_name"]) for fw in FRAMEWORKS}
    sample_ids = set(samples["sample_id"]) if samples is not None and len(samples) else None
    for row in rows:
        file = row["_row_file"]
        framework_api = known.get(row["framework"]) if known else None
        missing = framework_api and is_public(row["function"]) and not _in_api(row["function"], framework_api)
        if row["status"] == "active" and missing:
            problems.append(
                RowProblem(
                    file,
                    "function",
                    f"{row['function']} is not in the api table of the installed {row['framework']}",
                    "fix the name, or set `status: removed` with `removed_since` if it no longer exists",
                )
            )
        if sample_ids is not None:
            for sample in row["samples"]:
                if sample not in sample_ids:
                    problems.append(
                        RowProblem(
                            file,
                            "samples",
                            f"unknown sample {sample!r}",
                            f"use one of {', '.join(sorted(sample_ids))}",
                        )
                    )
    written, uncompilable = authoring_problems(rows, repo_root)
    problems += written
    if collect:
        problems += collect_problems(rows, repo_root, skip=uncompilable)
    return problems


def authoring_problems(rows: list[dict[str, Any]], repo_root: Path) -> tuple[list[RowProblem], set[str]]:
    """What a reviewer would send back: placeholder or empty notes, an active case with neither an
    upstream test nor `no_upstream_test` (the reason there is none), a test file that does not
    compile (its type, file and line), the scaffold's placeholders left in the test file.
    Returns the problems and the test files that do not compile (pytest need not collect those)."""
    problems: list[RowProblem] = []
    uncompilable: set[str] = set()
    for row in rows:
        file = row["_row_file"]
        notes = row["notes"].strip()
        if not notes or TODO_WORD.search(notes):
            problems.append(
                RowProblem(
                    file,
                    "notes",
                    "empty" if not notes else f"still a placeholder ({notes[:60]!r})",
                    "say in one or two sentences what the test checks and against what reference",
                )
            )
        if row["status"] != "active":
            continue  # removed and unsuitable rows have no test; their notes say why
        if not (row.get("upstream_test") or "").strip() and not (row.get("no_upstream_test") or "").strip():
            problems.append(
                RowProblem(
                    file,
                    "upstream_test",
                    "null, and no reason is written",
                    "write where the framework's own suite tests the function (path::Class::test), "
                    "or if it has none, say why in `no_upstream_test: <reason>`",
                )
            )
        test_file = row["test_file"]
        try:
            source = (repo_root / test_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            uncompilable.add(test_file)
            problems.append(RowProblem(file, "test_file", f"cannot read {test_file} ({exc})", "fix the file"))
            continue
        try:
            compile(source, test_file, "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            uncompilable.add(test_file)
            problems.append(RowProblem(file, "test_file", *_compile_error(exc, test_file)))
            continue
        if SCAFFOLD_RAISE in source:
            problems.append(
                RowProblem(
                    file,
                    "test_file",
                    f"{test_file} still raises the scaffold's NotImplementedError",
                    "write the test (values, shapes, dtypes, gradients) and delete that raise",
                )
            )
        if SCAFFOLD_DOCSTRING in source:
            problems.append(
                RowProblem(
                    file,
                    "test_file",
                    f"the docstring of {test_file} is still the scaffold's TODO",
                    "say in one line what is checked and against what reference",
                )
            )
    return problems, uncompilable


def _compile_error(exc: SyntaxError | ValueError, test_file: str) -> tuple[str, str]:
    """(issue, fix) for a test file Python cannot compile: the exception type, file and line."""
    if not isinstance(exc, SyntaxError) or exc.lineno is None:
        return f"{test_file}: {type(exc).__name__}: {exc}", f"fix {test_file} so that Python compiles it"
    code = f" in `{exc.text.strip()}`" if exc.text and exc.text.strip() else ""
    return (
        f"{test_file} line {exc.lineno}: {type(exc).__name__}: {exc.msg}{code}",
        f"fix line {exc.lineno} of {test_file} (`python -m py_compile {test_file}` shows it)",
    )


def collect_problems(
    rows: list[dict[str, Any]], repo_root: Path, skip: set[str] | frozenset[str] = frozenset()
) -> list[RowProblem]:
    """Run `pytest --collect-only` once per framework; a file that does not collect is a problem
    (files in `skip` are left out: they were already refused, e.g. for a syntax error)."""
    problems = []
    for framework in FRAMEWORKS:
        files = {
            r["test_file"]: r["_row_file"]
            for r in rows
            if r["framework"] == framework and r["status"] == "active" and r["test_file"] not in skip
        }
        if not files:
            continue
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "-p",
                "no:cacheprovider",
                "--import-mode=importlib",
                "-o",
                "addopts=",
                "--rootdir",
                str(repo_root),
                *sorted(files),
            ],
            cwd=repo_root,
            capture_output=True,
            text=True,
            check=False,
        )
        collected: dict[str, int] = {}
        for line in result.stdout.splitlines():
            if "::" in line:
                name = line.split("::", 1)[0]
                collected[name] = collected.get(name, 0) + 1
        for test_file, row_file in sorted(files.items()):
            if collected.get(test_file, 0) == 0:
                detail = _collection_error(result.stdout + result.stderr, test_file)
                problems.append(
                    RowProblem(
                        row_file,
                        "test_file",
                        f"pytest cannot collect {test_file}: {detail}"
                        if detail
                        else f"pytest collects no test from {test_file}",
                        f"run `python -m pytest --collect-only {test_file}` and fix what it reports",
                    )
                )
    return problems


def _collection_error(output: str, test_file: str) -> str:
    """`file:line: Type: message` from pytest's "ERROR collecting <file>" section ('' if none)."""
    lines = output.splitlines()
    start = next(
        (i for i, line in enumerate(lines) if "ERROR collecting" in line and test_file in line), None
    )
    if start is None:
        return ""
    end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith(("___", "==="))), len(lines))
    return describe_collection_error("\n".join(lines[start + 1 : end]), test_file)


# Where upstream runs what the census runs: the OpInfo entries against their NumPy references.
CENSUS_UPSTREAM = {"opinfo": "test/test_ops.py::TestCommon::test_numpy_ref"}


def census_case_rows(cases_dir: Path, repo_root: Path, frameworks: tuple[str, ...]) -> list[dict]:
    """The census manifests' entries as rows of the cases table (origin opinfo, ...)."""
    from portability_data.runner.census_rows import census_rows, manifest_paths, read_manifest

    rows = []
    for framework in frameworks:
        entries = {
            entry["case_id"]: (entry["entry"], manifest["source"])
            for path in manifest_paths(cases_dir, framework)
            for manifest in [read_manifest(path)]
            for entry in manifest["entries"]
        }
        for row in census_rows(cases_dir, repo_root, framework):
            entry, source = entries[row["case_id"]]
            rows.append(
                {
                    "case_id": row["case_id"],
                    "framework": framework,
                    "function": canonical_name(row["function"]),
                    "study_name": None,
                    "test_file": row["test_file"],
                    "upstream_test": CENSUS_UPSTREAM.get(row["origin"]),
                    "samples": [],
                    "status": "active",
                    "removed_since": None,
                    "notes": f"census entry {entry} of {source}, one subtest per dtype it knows of",
                    "schema_version": SCHEMA_VERSION,
                    "origin": row["origin"],
                    "no_compiled_form": None,
                }
            )
    return rows


def compile_cases(
    repo_root: Path,
    api_path: Path | None,
    samples_path: Path | None,
    out: Path,
    collect: bool = True,
    frameworks: tuple[str, ...] = FRAMEWORKS,
) -> pd.DataFrame:
    """The `cases` stage: check every row and write the cases table (nothing written on error)."""
    from portability_data.tables.tableio import read_table

    cases_dir = repo_root / "cases"
    rows = load_rows(cases_dir, repo_root, frameworks)
    api = read_table("api", api_path) if api_path and Path(api_path).exists() else None
    samples = read_table("samples", samples_path) if samples_path and Path(samples_path).exists() else None
    problems = check_rows(rows, api, samples, repo_root, collect=collect)
    if problems:
        raise CaseRowError(problems)
    frame = pd.DataFrame(
        [
            {
                "case_id": r["case_id"],
                "framework": r["framework"],
                "function": canonical_name(r["function"]),
                "study_name": r.get("study_name"),
                "test_file": r.get("test_file"),
                "upstream_test": r.get("upstream_test"),
                "samples": list(r["samples"]),
                "status": r["status"],
                "removed_since": None if r.get("removed_since") is None else str(r["removed_since"]),
                "notes": r["notes"],
                "schema_version": r["schema_version"],
                "origin": "curated",
                "no_compiled_form": r.get("no_compiled_form"),
            }
            for r in sorted(rows, key=lambda r: r["case_id"])
        ]
        + census_case_rows(cases_dir, repo_root, frameworks)
    )
    if frame.empty:
        from portability_data.tables.tableio import empty_frame

        frame = empty_frame("cases")
    else:  # one function under all its names: readers join on this column, not on their own mapping
        frame = with_canonical(frame, canonical_map(api))
    write_table("cases", frame, out)
    return frame


def run_cases_once(repo_root: Path, rows: list[dict[str, Any]]) -> tuple[list[str], int]:
    """Run cases once on the CPU in eager mode (CI's check of changed cases). A failing assertion
    is data (a function may not work on a device); what fails the check is a case that cannot run:
    a collection (import) or harness error, or an error in set-up or teardown (the test body never
    ran). Returns those, one line each, and how many subtests failed (the data)."""
    import tempfile

    import pyarrow.parquet as pq

    from portability_data.runner.progress import terminal_progress
    from portability_data.runner.run_summary import RunSummary, cannot_run
    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.supervisor import run, shard_path

    broken: list[str] = []
    failed = 0
    with tempfile.TemporaryDirectory(prefix="portability-ci-") as tmp:
        paths = Paths(
            repo_root, repo_root / "cases", Path(tmp) / "results", Path(tmp) / "runs", Path(tmp) / "journal"
        )
        for framework in FRAMEWORKS:
            ids = tuple(r["case_id"] for r in rows if r["framework"] == framework)
            if not ids:
                continue
            run_id = run(
                RunSpec(framework=framework, device="cpu", repeats=1, timeout_s=300, cases=ids),
                paths,
                confirm=False,  # the check asks "does it run", not "is the failure order-dependent"
                progress=terminal_progress(),
            )
            shard = pq.read_table(shard_path(paths, run_id)).to_pylist()
            summary = RunSummary.of_rows(run_id, shard)
            for counts in summary.not_run:
                broken += [f"{counts.case_id}: {reason}" for reason in counts.not_run]
            broken += [
                f"{row['test_id']}: error outside the test body (set-up or teardown): "
                f"{row['error_type']}: {(row['error_message'] or '')[:200]}"
                for row in shard
                if row["outcome"] == "error" and not cannot_run(row)
            ]
            total = summary.total()
            failed += total.failed + total.other
            print(f"{framework}: {len(ids)} case(s): {total.short()}")
    return broken, failed


ROW_TEMPLATE = """schema_version: {version}
case_id: {case_id}
framework: {framework}
function: {function}
test_file: {test_file}
upstream_test: null  # path/in/the/{framework}/repo.py::Class::test_name, found by reading upstream
# no_upstream_test: why the framework's own suite has no test of it (only when upstream_test is null)
samples: []
status: active
removed_since: null
study_name: null
notes: {notes}
"""

TEST_TEMPLATE = '''"""{function}: {docstring}"""

import numpy as np
import pytest
{imports}


@pytest.mark.parametrize("dtype", {dtypes})
def test_{name}_values(device, timed, dtype):
    # Build inputs on `device`, call the function through `timed`, compare with NumPy.
    raise NotImplementedError("{marker}")
'''

_IMPORTS = {
    "torch": "import torch",
    "tensorflow": "import tensorflow as tf",
    "jax": "import jax\nimport jax.numpy as jnp",
}
_DTYPES = {
    "torch": "[torch.float32, torch.float64, torch.float16, torch.bfloat16]",
    "tensorflow": "[tf.float32, tf.float64, tf.float16, tf.bfloat16]",
    "jax": '["float32", "float64", "float16", "bfloat16"]',
}
_NAME_PREFIXES = {"torch.": "torch", "tf.": "tensorflow", "tensorflow.": "tensorflow", "jax.": "jax"}
_EXAMPLES = {"torch": "torch.nn.functional.relu", "tensorflow": "tf.math.cumsum", "jax": "jax.numpy.cos"}


class CaseNameError(ValueError):
    """`portability case new` refuses the name; the message is one line: why, and what to do."""


def framework_of(function: str) -> str | None:
    """The framework a qualified name belongs to by its prefix (None: no framework's prefix)."""
    return next((fw for prefix, fw in _NAME_PREFIXES.items() if function.startswith(prefix)), None)


def api_names(api_path: Path) -> dict[str, set[str]] | None:
    """framework -> the qualified names of the api table; None where the table is absent. Read
    with pyarrow, two columns: the contributor's command answers in a fraction of a second."""
    if not Path(api_path).is_file():
        return None
    import pyarrow.parquet as pq

    table = pq.read_table(api_path, columns=["framework", "qualified_name"]).to_pydict()
    found: dict[str, set[str]] = {}
    for framework, name in zip(table["framework"], table["qualified_name"]):
        found.setdefault(framework, set()).add(name)
    return found


def nearest_names(function: str, names: set[str], limit: int = 3) -> list[str]:
    """The api names closest in spelling: first among the siblings in the same module (cheap and
    usually right), else across the framework's whole table."""
    spelled = canonical_name(function)
    parent = spelled.rsplit(".", 1)[0] + "."
    siblings = [name for name in names if name.startswith(parent)]
    close = difflib.get_close_matches(spelled, siblings, n=limit, cutoff=0.75) if siblings else []
    return close or difflib.get_close_matches(spelled, sorted(names), n=limit, cutoff=0.75)


def check_new_name(framework: str, function: str, known: dict[str, set[str]] | None) -> None:
    """Refuse a name that is not a public name of `framework` in the api table (`known`, the same
    test as `case check`), or that belongs to another framework; with no table, the prefix only."""
    if framework not in FRAMEWORKS:
        raise CaseNameError(f"unknown framework {framework!r}; use one of {', '.join(FRAMEWORKS)}")
    if not QUALIFIED_NAME.match(function):
        raise CaseNameError(
            f"{function!r} is not a dotted qualified name; write the name only, e.g. {_EXAMPLES[framework]}"
        )
    owner = framework_of(function)
    if owner is not None and owner != framework:
        raise CaseNameError(
            f"{function} is a {owner} name, not a {framework} one; "
            f"run `portability case new {owner} {function}`"
        )
    names = (known or {}).get(framework)
    if not names:
        if owner is None:
            raise CaseNameError(
                f"{function} does not start with a {framework} prefix ({_EXAMPLES[framework]}) and there "
                "is no api table to look it up in; run `portability enumerate` (or `dvc pull`) first"
            )
        return
    if not is_public(function):
        if owner is None:
            raise CaseNameError(f"{function} is not under {framework}; write the {framework} name of it")
        return  # private names are not enumerated; only pytest collection vouches for them
    if _in_api(function, names):
        return
    for other in FRAMEWORKS:
        if other != framework and _in_api(function, (known or {}).get(other, set())):
            raise CaseNameError(
                f"{function} is a {other} name, not a {framework} one; "
                f"run `portability case new {other} {function}`"
            )
    close = nearest_names(function, names)
    hint = f"did you mean {', '.join(close)}?" if close else "check the spelling in the framework's docs"
    raise CaseNameError(
        f"{function} is not in the api table of {framework}; {hint} "
        "(a function the installed version no longer has: write its row by hand with `status: removed`)"
    )


def existing_case(repo_root: Path, framework: str, case_id: str) -> str | None:
    """The row file that already holds `case_id` under cases/<framework>/ (None if none does)."""
    for path in sorted((repo_root / "cases" / framework).glob("*.yaml")):
        row, _ = parse_row(path, repo_root)
        if row is not None and row.get("case_id") == case_id:
            return str(path.relative_to(repo_root))
    return None


def scaffold(
    repo_root: Path, framework: str, function: str, known: dict[str, set[str]] | None = None
) -> tuple[Path, Path]:
    """`portability case new`: a row and a failing test skeleton for a contributor to fill. The
    name is checked against the api table (`known`, from `api_names`) and the framework first,
    and an existing case is refused (FileExistsError, one line) rather than overwritten."""
    check_new_name(framework, function, known)
    slug = slug_of(function)
    row_path = repo_root / "cases" / framework / f"{slug}.yaml"
    test_path = repo_root / "cases" / framework / f"test_{slug}.py"
    case_id = canonical_name(function)
    holder = existing_case(repo_root, framework, case_id)
    if holder is not None:
        raise FileExistsError(f"case {case_id} exists already ({holder}); edit it instead")
    for path in (row_path, test_path):
        if path.exists():
            raise FileExistsError(f"{path.relative_to(repo_root)} exists already; edit it instead")
    row_path.parent.mkdir(parents=True, exist_ok=True)
    row_path.write_text(
        ROW_TEMPLATE.format(
            version=CASE_ROW_VERSION,
            case_id=case_id,
            framework=framework,
            function=function,
            test_file=test_path.relative_to(repo_root),
            notes=SCAFFOLD_NOTES,
        )
    )
    test_path.write_text(
        TEST_TEMPLATE.format(
            function=function,
            docstring=SCAFFOLD_DOCSTRING,
            imports=_IMPORTS[framework],
            dtypes=_DTYPES[framework],
            name=slug.lower(),
            marker=SCAFFOLD_RAISE,
        )
    )
    return row_path, test_path
