"""Case rows: every malformed row is refused with the file, the field and the fix; all at once."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest

from portability_data.pipeline.cases import check_rows, compile_cases, scaffold
from portability_data.runner.case_rows import CaseRowError, load_rows, parse_row, slug_of

GOOD = {
    "schema_version": "1",
    "case_id": "torch.add",
    "framework": "torch",
    "function": "torch.add",
    "test_file": "cases/torch/test_add.py",
    "upstream_test": "test/test_binary_ufuncs.py::TestBinaryUfuncs::test_add",
    "samples": "[mince2023]",
    "status": "active",
    "notes": "adds",
}


def write_row(root: Path, fields: dict[str, str], folder: str = "torch", name: str = "add") -> Path:
    (root / "cases" / folder).mkdir(parents=True, exist_ok=True)
    (root / "cases" / "torch" / "test_add.py").parent.mkdir(parents=True, exist_ok=True)
    (root / "cases" / "torch" / "test_add.py").write_text("def test_add():\n    assert 1 + 1 == 2\n")
    path = root / "cases" / folder / f"{name}.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in fields.items()))
    return path


def problems_for(tmp_path: Path, fields: dict[str, str], **kwargs: str) -> list[str]:
    path = write_row(tmp_path, fields, **kwargs)
    _, problems = parse_row(path, tmp_path)
    return [p.render() for p in problems]


def test_good_row_passes(tmp_path: Path) -> None:
    assert problems_for(tmp_path, GOOD) == []


MALFORMED = [
    ("missing-field", {k: v for k, v in GOOD.items() if k != "function"}, "field 'function': missing"),
    ("missing-notes", {k: v for k, v in GOOD.items() if k != "notes"}, "field 'notes': missing"),
    ("unknown-field", {**GOOD, "devices": "[cpu]"}, "field 'devices': unknown field"),
    ("version-not-int", {**GOOD, "schema_version": "one"}, "field 'schema_version': must be an integer"),
    ("version-unknown", {**GOOD, "schema_version": "99"}, "field 'schema_version': version 99 of the row"),
    ("unknown-framework", {**GOOD, "framework": "mxnet"}, "field 'framework': unknown framework 'mxnet'"),
    ("framework-folder", {**GOOD, "framework": "jax"}, "row is in cases/torch/ but says 'jax'"),
    (
        "function-with-code",
        {**GOOD, "function": "\"__import__('os').system('rm -rf /')\""},
        "field 'function': ",
    ),
    ("function-with-call", {**GOOD, "function": "torch.add()"}, "is not a dotted qualified name"),
    ("function-not-string", {**GOOD, "function": "[torch.add]"}, "field 'function': must be a string"),
    (
        "case-id-spaces",
        {**GOOD, "case_id": '"torch add"'},
        "field 'case_id': 'torch add' is not a dotted name",
    ),
    ("unknown-status", {**GOOD, "status": "maybe"}, "field 'status': unknown status 'maybe'"),
    ("samples-not-list", {**GOOD, "samples": "mince2023"}, "field 'samples': must be a list"),
    ("samples-not-strings", {**GOOD, "samples": "[1, 2]"}, "field 'samples': must be a list"),
    ("test-outside-cases", {**GOOD, "test_file": "../evil/test_x.py"}, "is not a case test path"),
    ("test-other-framework", {**GOOD, "test_file": "cases/jax/test_add.py"}, "is outside cases/torch/"),
    (
        "test-missing",
        {**GOOD, "test_file": "cases/torch/test_nothing.py"},
        "cases/torch/test_nothing.py does not exist",
    ),
    ("active-without-test", {**GOOD, "test_file": "null"}, "an active case needs a test file"),
    (
        "removed-without-version",
        {**GOOD, "status": "removed", "test_file": "null"},
        "field 'removed_since': a removed case must say since which version",
    ),
    (
        "upstream-not-string",
        {**GOOD, "upstream_test": "[a, b]"},
        "field 'upstream_test': must be a string or null",
    ),
    ("notes-not-string", {**GOOD, "notes": "{a: 1}"}, "field 'notes': must be a string"),
]


@pytest.mark.parametrize(
    "fields, expected", [(f, e) for _, f, e in MALFORMED], ids=[n for n, _, _ in MALFORMED]
)
def test_malformed_row_is_refused_with_file_field_and_fix(
    tmp_path: Path, fields: dict, expected: str
) -> None:
    problems = problems_for(tmp_path, fields)
    assert problems, "the row should have been refused"
    assert any(expected in p for p in problems), problems
    assert all(p.startswith("cases/torch/add.yaml") and "; fix: " in p for p in problems)


def test_not_yaml_and_not_a_mapping_and_huge(tmp_path: Path) -> None:
    folder = tmp_path / "cases" / "torch"
    folder.mkdir(parents=True)
    (folder / "a.yaml").write_text("case_id: [unclosed\n")
    (folder / "b.yaml").write_text("- just\n- a list\n")
    (folder / "c.yaml").write_text("notes: " + "x" * 20_000 + "\n")
    (folder / "d.yaml").write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(CaseRowError) as caught:
        load_rows(tmp_path / "cases", tmp_path)
    text = str(caught.value)
    assert "cases/torch/a.yaml: not valid YAML" in text
    assert "cases/torch/b.yaml: the row is not a YAML mapping" in text
    assert "cases/torch/c.yaml: row file is 20008 bytes (limit 16384)" in text
    assert "cases/torch/d.yaml: not valid YAML" in text


def test_a_yaml_error_names_the_file_line_and_column(tmp_path: Path) -> None:
    """PyYAML's own text names the file "<unicode string>": the problem names the row file and the
    line and column of the mistake instead."""
    folder = tmp_path / "cases" / "torch"
    folder.mkdir(parents=True)
    (folder / "bad.yaml").write_text("schema_version: 1\ncase_id: torch.add\nnotes: a: b\n")
    with pytest.raises(CaseRowError) as caught:
        load_rows(tmp_path / "cases", tmp_path)
    text = str(caught.value)
    assert "cases/torch/bad.yaml: not valid YAML (mapping values are not allowed" in text
    assert "at line 3, column 9); fix: " in text and "<unicode string>" not in text


def test_duplicate_ids_and_all_problems_at_once(tmp_path: Path) -> None:
    write_row(tmp_path, GOOD, name="add")
    write_row(tmp_path, GOOD, name="add_again")
    write_row(tmp_path, {**GOOD, "case_id": "torch.sub", "framework": "tpu"}, name="sub")
    with pytest.raises(CaseRowError) as caught:
        load_rows(tmp_path / "cases", tmp_path)
    text = str(caught.value)
    assert "duplicate case id 'torch.add' (also in cases/torch/add.yaml)" in text
    assert "cases/torch/sub.yaml: field 'framework': unknown framework 'tpu'" in text


def test_function_must_exist_in_api_or_be_marked_removed(tmp_path: Path) -> None:
    write_row(tmp_path, {**GOOD, "function": "torch.addd"})
    rows = load_rows(tmp_path / "cases", tmp_path)
    api = pd.DataFrame({"framework": ["torch"], "qualified_name": ["torch.add"]})
    problems = [p.render() for p in check_rows(rows, api, None, tmp_path, collect=False)]
    assert problems == [
        "cases/torch/add.yaml: field 'function': torch.addd is not in the api table of the "
        "installed torch; fix: fix the name, or set `status: removed` with `removed_since` "
        "if it no longer exists"
    ]


def test_unknown_sample_and_uncollectable_test(tmp_path: Path) -> None:
    write_row(tmp_path, {**GOOD, "samples": "[nosuch]"})
    (tmp_path / "cases" / "torch" / "test_add.py").write_text("def test_add(:\n")
    rows = load_rows(tmp_path / "cases", tmp_path)
    samples = pd.DataFrame({"sample_id": ["mince2023"]})
    problems = "\n".join(p.render() for p in check_rows(rows, None, samples, tmp_path))
    assert "field 'samples': unknown sample 'nosuch'" in problems
    assert "field 'test_file': cases/torch/test_add.py line 1: SyntaxError: " in problems


def test_compile_writes_the_cases_table_for_the_repo(repo_root: Path, tmp_path: Path) -> None:
    frame = compile_cases(repo_root, None, None, tmp_path / "cases.parquet", collect=False)
    assert {"torch.argsort", "tensorflow.linalg.svd", "jax.numpy.cos"} <= set(frame["case_id"])
    assert (tmp_path / "cases.parquet").exists()


def test_scaffold_makes_a_row_that_checks_and_a_test_that_fails_until_written(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    row, test = scaffold(tmp_path, "tensorflow", "tf.math.cumsum")
    assert row.name == "math_cumsum.yaml" and test.name == "test_math_cumsum.py"
    rows = load_rows(tmp_path / "cases", tmp_path)
    assert rows[0]["case_id"] == "tensorflow.math.cumsum"
    assert "raise NotImplementedError" in test.read_text()
    with pytest.raises(FileExistsError):
        scaffold(tmp_path, "tensorflow", "tf.math.cumsum")


def test_repository_rows_all_pass(repo_root: Path) -> None:
    rows = load_rows(repo_root / "cases", repo_root)
    assert len(rows) >= 6
    assert textwrap.dedent(slug_of("tf.linalg.svd")) == "linalg_svd"
