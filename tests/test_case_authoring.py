"""A contributor's first case, through the real CLI in a throwaway repository: `case new` checks the
name against the api table and the framework and refuses an existing case in one line; `case check`
refuses a scaffold never filled in, names a syntax error's type, file and line, and with `--run`
fails only when a case cannot be collected (failed subtests are data)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from portability_data.pipeline.cases import authoring_problems
from portability_data.runner.case_rows import load_rows, parse_row
from tests.conftest import REPO_ROOT, CaseRepo

API_NAMES = {
    "torch": ["torch.argsort", "torch.nn.functional.hardtanh", "torch.nn.functional.hardtanh_"],
    "tensorflow": ["tensorflow.math.cumsum"],
    "jax": ["jax.numpy.cos"],
}

WRITTEN_TEST = """
\"\"\"hardtanh clamps to [-1, 1], against numpy.clip.\"\"\"
import numpy as np
import pytest
import torch


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_values(device, timed, dtype):
    x = torch.linspace(-3, 3, 7, device=device, dtype=dtype)
    out = timed(torch.nn.functional.hardtanh, x)
    np.testing.assert_allclose(out.cpu().numpy(), np.clip(x.cpu().numpy(), -1, 1))


def test_a_failure_of_the_framework_is_data():
    assert torch.nn.functional.hardtanh(torch.tensor([5.0])).item() == 5.0
"""

WRITTEN_ROW = """\
schema_version: 1
case_id: torch.nn.functional.hardtanh
framework: torch
function: torch.nn.functional.hardtanh
test_file: cases/torch/test_nn_functional_hardtanh.py
upstream_test: null
no_upstream_test: "upstream tests the functional form only through nn.Hardtanh (test_modules.py)"
samples: []
status: active
notes: Clamping against numpy.clip in float32 and float64.
"""


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "portability_data.cli", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def write_api(path: Path) -> Path:
    """A tiny api table with the columns `case new` reads (the real one has 70k names); kept
    outside the repository, so that `case check` (which validates the whole table) does not read it."""
    if not path.exists():
        rows = [(fw, name) for fw, names in API_NAMES.items() for name in names]
        table = pa.table({"framework": [r[0] for r in rows], "qualified_name": [r[1] for r in rows]})
        pq.write_table(table, path)
    return path


def new_case(case_repo: CaseRepo, framework: str, function: str) -> subprocess.CompletedProcess:
    api = write_api(case_repo.root.parent / "api.parquet")
    return cli(case_repo.root, "case", "new", framework, function, "--api", str(api))


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / "cases").rglob("*") if p.is_file())


def assert_one_line_refusal(out: subprocess.CompletedProcess) -> str:
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    return lines[0]


def test_case_new_refuses_a_misspelled_name_and_names_the_nearest(case_repo: CaseRepo) -> None:
    before = files_under(case_repo.root)
    line = assert_one_line_refusal(new_case(case_repo, "torch", "torch.nn.functional.hardtanhh"))
    assert "torch.nn.functional.hardtanhh is not in the api table of torch" in line
    assert "did you mean torch.nn.functional.hardtanh" in line
    assert files_under(case_repo.root) == before


def test_case_new_refuses_a_name_of_another_framework(case_repo: CaseRepo) -> None:
    line = assert_one_line_refusal(new_case(case_repo, "tensorflow", "torch.nn.functional.hardtanh"))
    assert "is a torch name, not a tensorflow one" in line
    assert "portability case new torch torch.nn.functional.hardtanh" in line
    # TensorFlow's two spellings
    line = assert_one_line_refusal(new_case(case_repo, "torch", "tf.math.cumsum"))
    assert "tf.math.cumsum is a tensorflow name, not a torch one" in line


def test_case_new_refuses_an_existing_case_in_one_line(case_repo: CaseRepo) -> None:
    case_repo.add("torch", "argsort", "def test_ok():\n    assert True\n", function="torch.argsort")
    before = {p: (case_repo.root / p).read_bytes() for p in files_under(case_repo.root)}
    line = assert_one_line_refusal(new_case(case_repo, "torch", "torch.argsort"))
    assert line == "error: case torch.argsort exists already (cases/torch/argsort.yaml); edit it instead"
    assert {p: (case_repo.root / p).read_bytes() for p in files_under(case_repo.root)} == before


def test_the_unfilled_scaffold_is_refused_by_case_check(case_repo: CaseRepo) -> None:
    created = new_case(case_repo, "torch", "torch.nn.functional.hardtanh")
    assert created.returncode == 0, created.stderr
    assert "created" in created.stdout
    out = cli(case_repo.root, "case", "check", "--no-collect")
    assert out.returncode == 1
    problems = out.stderr
    row = "cases/torch/nn_functional_hardtanh.yaml"
    assert f"{row}: field 'notes': still a placeholder" in problems
    assert f"{row}: field 'upstream_test': null, and no reason is written" in problems
    assert "test_nn_functional_hardtanh.py still raises the scaffold's NotImplementedError" in problems
    assert "docstring of cases/torch/test_nn_functional_hardtanh.py is still the scaffold's TODO" in problems


def test_a_written_case_passes_and_run_exits_zero_when_only_the_framework_fails(case_repo: CaseRepo) -> None:
    assert new_case(case_repo, "torch", "torch.nn.functional.hardtanh").returncode == 0
    folder = case_repo.root / "cases" / "torch"
    (folder / "nn_functional_hardtanh.yaml").write_text(WRITTEN_ROW)
    (folder / "test_nn_functional_hardtanh.py").write_text(textwrap.dedent(WRITTEN_TEST))
    out = cli(case_repo.root, "case", "check", "--run")
    assert out.returncode == 0, out.stderr
    assert "torch: 1 case(s): 2 passed, 1 failed, 0 errors, 0 skipped" in out.stdout
    assert out.stdout.strip().splitlines()[-1].startswith("OK: every case ran; 1 subtest(s) failed")


def test_a_syntax_error_is_named_with_its_type_file_and_line(case_repo: CaseRepo) -> None:
    case_repo.add("torch", "broken", '"""x."""\nimport torch\n\ndef test_a(:\n    pass\n')
    for flags in ((), ("--no-collect",)):
        out = cli(case_repo.root, "case", "check", *flags)
        assert out.returncode == 1
        assert "cases/torch/test_broken.py line 4: SyntaxError: invalid syntax" in out.stderr, out.stderr
        assert "pytest collects no test" not in out.stderr


def test_a_test_file_without_tests_is_refused(case_repo: CaseRepo) -> None:
    case_repo.add("torch", "empty", '"""Nothing here yet."""\n\nVALUE = 1\n')
    out = cli(case_repo.root, "case", "check")
    assert out.returncode == 1
    assert "field 'test_file': pytest collects no test from cases/torch/test_empty.py" in out.stderr


def test_check_run_fails_when_a_case_cannot_be_collected(case_repo: CaseRepo) -> None:
    """Python compiles it, so only collection finds the error; --no-collect leaves it to --run."""
    source = "import torch\nimport not_a_module_anywhere\n\ndef test_a():\n    pass\n"
    case_repo.add("torch", "imports", source)
    (case_repo.root / "cases" / "torch" / "imports.yaml").write_text(
        (case_repo.root / "cases" / "torch" / "imports.yaml")
        .read_text()
        .replace("upstream_test: null", "upstream_test: test/test_torch.py::TestTorch::test_x")
    )
    collected = cli(case_repo.root, "case", "check")
    assert collected.returncode == 1
    assert (
        "pytest cannot collect cases/torch/test_imports.py: cases/torch/test_imports.py:2: "
        "ModuleNotFoundError: No module named 'not_a_module_anywhere'" in collected.stderr
    )
    out = cli(case_repo.root, "case", "check", "--no-collect", "--run")
    assert out.returncode == 1
    assert (
        "torch.imports: could not be collected: cases/torch/test_imports.py:2: ModuleNotFoundError"
        in out.stderr
    ), out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("FAILED: 1 case problem(s) above")


def test_upstream_test_null_needs_a_reason_on_active_cases_only(case_repo: CaseRepo) -> None:
    case_repo.add("torch", "one", "def test_ok():\n    assert True\n")
    row_path = case_repo.root / "cases" / "torch" / "one.yaml"
    original = row_path.read_text()

    def problems_after(text: str) -> list[str]:
        row_path.write_text(text)
        rows = load_rows(case_repo.root / "cases", case_repo.root)
        return [p.render() for p in authoring_problems(rows, case_repo.root)[0]]

    assert any("field 'upstream_test': null" in p for p in problems_after(original))
    assert problems_after(original + "no_upstream_test: the suite has no test of it\n") == []
    assert any("'upstream_test'" in p for p in problems_after(original + 'no_upstream_test: "  "\n'))
    unsuitable = original.replace("status: active", "status: unsuitable").replace(
        "test_file: cases/torch/test_one.py", "test_file: null"
    )
    assert problems_after(unsuitable) == []  # not run; its notes say why
    both = original.replace("upstream_test: null", "upstream_test: a.py::T::t") + "no_upstream_test: why\n"
    row_path.write_text(both)
    _, row_problems = parse_row(row_path, case_repo.root)
    assert [p.field for p in row_problems] == ["no_upstream_test"]


def test_every_repository_case_passes_the_authoring_checks() -> None:
    rows = load_rows(REPO_ROOT / "cases", REPO_ROOT)
    problems, uncompilable = authoring_problems(rows, REPO_ROOT)
    assert [p.render() for p in problems] == [] and uncompilable == set()


def test_the_scaffold_writes_the_row_format_version_cases_readme_documents(case_repo: CaseRepo) -> None:
    """One constant (CASE_ROW_VERSION), not the tables' SCHEMA_VERSION: the scaffold writes it,
    cases/README.md documents it, the check refuses any other."""
    import re

    from portability_data.runner.case_rows import CASE_ROW_VERSION
    from portability_data.tables.contracts import SCHEMA_VERSION

    created = new_case(case_repo, "torch", "torch.argsort")
    assert created.returncode == 0, created.stderr
    scaffolded = (case_repo.root / "cases" / "torch" / "argsort.yaml").read_text()
    assert scaffolded.startswith(f"schema_version: {CASE_ROW_VERSION}\n")
    documented = (REPO_ROOT / "cases" / "README.md").read_text()
    assert set(re.findall(r"schema_version:? (\d+)", documented)) == {str(CASE_ROW_VERSION)}
    assert CASE_ROW_VERSION != SCHEMA_VERSION  # the two versions are apart (it was 10 for a while)
    row = case_repo.root / "cases" / "torch" / "argsort.yaml"
    row.write_text(
        scaffolded.replace(f"schema_version: {CASE_ROW_VERSION}", f"schema_version: {SCHEMA_VERSION}")
    )
    out = cli(case_repo.root, "case", "check", "--no-collect")
    assert out.returncode == 1
    assert f"field 'schema_version': version {SCHEMA_VERSION} of the row format is not known" in out.stderr


def test_an_unknown_sample_is_refused_by_the_default_check(case_repo: CaseRepo) -> None:
    """`portability case check` as CI runs it (no --samples) checks the rows' samples against the
    repository's data/samples; a checkout without it is an error that names the path and the fix,
    never an OK that checked no row's `samples` (issue 56)."""
    import shutil

    case_repo.add("torch", "argsort", "def test_ok():\n    assert True\n", function="torch.argsort")
    row = case_repo.root / "cases" / "torch" / "argsort.yaml"
    text = row.read_text().replace("samples: []", "samples: [nosuchsample]")
    row.write_text(text + 'no_upstream_test: "a test of the check, not of torch"\n')
    shutil.move(case_repo.root / "data" / "samples", case_repo.root / "samples-elsewhere")
    unchecked = cli(case_repo.root, "case", "check", "--no-collect")  # a checkout without data/samples
    assert unchecked.returncode == 1, unchecked.stdout
    assert "OK" not in unchecked.stdout
    assert "error: --samples data/samples: no samples table there" in unchecked.stderr
    assert (
        "`git checkout -- data/samples`" in unchecked.stderr and "`dvc repro -s sample`" in unchecked.stderr
    )
    shutil.move(case_repo.root / "samples-elsewhere", case_repo.root / "data" / "samples")
    out = cli(case_repo.root, "case", "check", "--no-collect")
    assert out.returncode == 1, out.stdout
    assert (
        "cases/torch/argsort.yaml: field 'samples': unknown sample 'nosuchsample'; fix: use one of"
        in out.stderr
    )
    assert "mince2023" in out.stderr
    missing = cli(case_repo.root, "case", "check", "--no-collect", "--samples", "data/nothing.parquet")
    assert (
        missing.returncode == 1 and "--samples data/nothing.parquet: no samples table there" in missing.stderr
    )
