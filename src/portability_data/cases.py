"""The `cases` step: compile the row files into the `cases` table, with every check at once.

`portability case check` and the `cases` DVC stage are the same code: the rows' own fields
(case_rows), then what needs the other tables and the test engine: the function exists in the
`api` table (or the row says removed), the claimed samples exist, and pytest collects the test
file. Every problem names the file, the field and the fix.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.case_rows import CaseRowError, RowProblem, load_rows, slug_of
from portability_data.contracts import FRAMEWORKS, SCHEMA_VERSION, canonical_name
from portability_data.tableio import write_table


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
    if collect:
        problems += collect_problems(rows, repo_root)
    return problems


def collect_problems(rows: list[dict[str, Any]], repo_root: Path) -> list[RowProblem]:
    """Run `pytest --collect-only` once per framework; a file that does not collect is a problem."""
    problems = []
    for framework in FRAMEWORKS:
        files = {
            r["test_file"]: r["_row_file"]
            for r in rows
            if r["framework"] == framework and r["status"] == "active"
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
                        f"pytest collects no test from {test_file}{': ' + detail if detail else ''}",
                        f"run `python -m pytest {test_file}` and fix what it reports",
                    )
                )
    return problems


def _collection_error(output: str, test_file: str) -> str:
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if test_file in line and "ERROR" in line:
            return " ".join(lines[i : i + 2]).strip()[:300]
    return ""


def compile_cases(
    repo_root: Path,
    api_path: Path | None,
    samples_path: Path | None,
    out: Path,
    collect: bool = True,
    frameworks: tuple[str, ...] = FRAMEWORKS,
) -> pd.DataFrame:
    """The `cases` stage: check every row and write the cases table (nothing written on error)."""
    from portability_data.tableio import read_table

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
            }
            for r in sorted(rows, key=lambda r: r["case_id"])
        ]
    )
    if frame.empty:
        from portability_data.tableio import empty_frame

        frame = empty_frame("cases")
    write_table("cases", frame, out)
    return frame


def run_cases_once(repo_root: Path, rows: list[dict[str, Any]]) -> list[str]:
    """Run cases once on the CPU in eager mode (CI's check of changed cases). A failing assertion
    is data (a function may not work on a device); what fails the check is a case that cannot run:
    an error in collection, set-up or teardown. Returns those, one line each."""
    import tempfile

    import pyarrow.parquet as pq

    from portability_data.runner import Paths, RunSpec, run

    broken: list[str] = []
    with tempfile.TemporaryDirectory(prefix="portability-ci-") as tmp:
        paths = Paths(
            repo_root, repo_root / "cases", Path(tmp) / "results", Path(tmp) / "runs", Path(tmp) / "journal"
        )
        for framework in FRAMEWORKS:
            ids = tuple(r["case_id"] for r in rows if r["framework"] == framework)
            if not ids:
                continue
            run_id = run(
                RunSpec(framework=framework, device="cpu", repeats=1, timeout_s=300, cases=ids), paths
            )
            shard = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
            counts: dict[str, int] = {}
            for row in shard:
                counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
                if row["outcome"] == "error":
                    broken.append(
                        f"{row['test_id']}: {row['error_type']}: {(row['error_message'] or '')[:200]}"
                    )
            print(f"{framework}: {len(ids)} case(s), outcomes {dict(sorted(counts.items()))}")
    return broken


ROW_TEMPLATE = """schema_version: {version}
case_id: {case_id}
framework: {framework}
function: {function}
test_file: {test_file}
upstream_test: null  # path/in/the/{framework}/repo.py::Class::test_name, found by reading upstream
samples: []
status: active
removed_since: null
study_name: null
notes: TODO say what the test checks
"""

TEST_TEMPLATE = '''"""{function}: TODO one line on what is checked and against what reference."""

import numpy as np
import pytest
{imports}


@pytest.mark.parametrize("dtype", {dtypes})
def test_{name}_values(device, timed, dtype):
    # Build inputs on `device`, call the function through `timed`, compare with NumPy.
    raise NotImplementedError("write the test: values, shapes, dtypes, gradients")
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


def scaffold(repo_root: Path, framework: str, function: str) -> tuple[Path, Path]:
    """`portability case new`: a row and a failing test skeleton for a contributor to fill."""
    if framework not in FRAMEWORKS:
        raise ValueError(f"unknown framework {framework!r}; use one of {', '.join(FRAMEWORKS)}")
    slug = slug_of(function)
    row_path = repo_root / "cases" / framework / f"{slug}.yaml"
    test_path = repo_root / "cases" / framework / f"test_{slug}.py"
    for path in (row_path, test_path):
        if path.exists():
            raise FileExistsError(f"{path} exists already; edit it instead")
    row_path.parent.mkdir(parents=True, exist_ok=True)
    case_id = "tensorflow." + function[3:] if function.startswith("tf.") else function
    row_path.write_text(
        ROW_TEMPLATE.format(
            version=SCHEMA_VERSION,
            case_id=case_id,
            framework=framework,
            function=function,
            test_file=test_path.relative_to(repo_root),
        )
    )
    test_path.write_text(
        TEST_TEMPLATE.format(
            function=function, imports=_IMPORTS[framework], dtypes=_DTYPES[framework], name=slug.lower()
        )
    )
    return row_path, test_path
