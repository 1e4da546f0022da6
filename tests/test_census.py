"""The PyTorch census (issue 19): the manifest is what the installed wheel gives, its entries run
through the real runner and harness one subtest per entry x dtype, the oracle's tolerance policy
judges the values, and the support matrix sets what ran beside what PyTorch declares."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
import yaml

from portability_data.pipeline.frameworks.torch.census import opinfo_manifest
from portability_data.pipeline.support_matrix import support_matrix
from portability_data.runner.census_rows import CensusManifestError, census_rows
from portability_data.runner.journal import Journal
from portability_data.runner.spec import Paths, RunError, RunSpec
from portability_data.runner.supervisor import run
from portability_data.tables.contracts import is_census_case
from portability_data.tables.tableio import read_table, write_table
from tests.conftest import REPO_ROOT, census_checkout

CENSUS = REPO_ROOT / "cases" / "torch" / "census"


def census_module():
    """The census test module, imported from its file (it is a case file, not a package module)."""
    spec = importlib.util.spec_from_file_location("census_opinfo", CENSUS / "test_opinfo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_manifests_are_what_the_installed_wheel_declares() -> None:
    """A torch upgrade (or a params change) that the manifests do not follow fails here:
    re-run `portability census-harvest` and commit them."""
    from portability_data.pipeline.frameworks.torch.census import module_manifest, optimizer_manifest

    api = read_table("api", REPO_ROOT / "data" / "api" / "api.parquet")
    census = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["census"]
    sources = (
        ("opinfo", opinfo_manifest, 702),
        ("module", module_manifest, 114),
        ("optimizer", optimizer_manifest, 15),
    )
    eager_cap = census["eager"]["max_samples"]["torch"]
    for origin, make, size in sources:
        committed = yaml.safe_load((CENSUS / f"{origin}.yaml").read_text())
        assert make(api, census["tolerances"], census["compiled"], eager_cap) == committed, origin
        assert len(committed["entries"]) + len(committed["unmapped"]) == size  # every entry, none dropped
        assert {u["reason"] for u in committed["unmapped"]} <= {"private_name", "not_in_api"}


def test_census_rows_name_one_node_per_entry_and_dtype() -> None:
    rows = census_rows(REPO_ROOT / "cases", REPO_ROOT, "torch")
    manifest = yaml.safe_load((CENSUS / "opinfo.yaml").read_text())
    modules = yaml.safe_load((CENSUS / "module.yaml").read_text())
    optimizers = yaml.safe_load((CENSUS / "optimizer.yaml").read_text())
    namesakes = yaml.safe_load((CENSUS / "numpy.yaml").read_text())
    every = manifest["entries"] + modules["entries"] + optimizers["entries"] + namesakes["entries"]
    assert len(rows) == len(every)
    linear = next(r for r in rows if r["case_id"] == "torch.census.module.nn.Linear")
    assert (linear["function"], linear["origin"]) == ("torch.nn.Linear", "module")
    assert linear["test_file"] == "cases/torch/census/test_module.py"
    assert len({r["case_id"] for r in rows}) == len(rows) and all(is_census_case(r["case_id"]) for r in rows)
    svd = next(r for r in rows if r["case_id"] == "torch.census.opinfo.linalg.svd")
    assert svd["function"] == "torch.linalg.svd" and svd["origin"] == "opinfo"
    assert "cases/torch/census/test_opinfo.py::test_entry[linalg.svd-float32]" in svd["select"]
    assert sum(len(r["select"]) for r in rows) == sum(len(e["dtypes"]) for e in every)
    assert not any(is_census_case(c) for c in ("torch.add", "torch.census", "tensorflow.censusx.a.b"))


def test_a_broken_or_orphaned_manifest_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "cases" / "torch" / "census"
    folder.mkdir(parents=True)
    (folder / "opinfo.yaml").write_text("manifest_version: [unclosed\n")
    with pytest.raises(CensusManifestError, match=r"opinfo\.yaml: cannot read the census manifest"):
        census_rows(tmp_path / "cases", tmp_path, "torch")
    (folder / "opinfo.yaml").write_text("manifest_version: 1\norigin: opinfo\nentries: []\n")
    with pytest.raises(CensusManifestError, match=r"test_opinfo\.py is missing"):
        census_rows(tmp_path / "cases", tmp_path, "torch")
    (folder / "opinfo.yaml").write_text("manifest_version: 99\n")
    with pytest.raises(CensusManifestError, match="census-harvest"):
        census_rows(tmp_path / "cases", tmp_path, "torch")


def test_a_manifest_is_parsed_once_per_process_and_again_when_it_changes(tmp_path: Path) -> None:
    """A worker re-imports a census module per entry: the manifest is parsed once, and a manifest
    rewritten on disk (a new harvest) is read again, never served stale."""
    import os

    from portability_data.runner.census_rows import read_manifest

    path = tmp_path / "opinfo.yaml"
    path.write_text("manifest_version: 1\norigin: opinfo\nentries: []\n")
    first = read_manifest(path)
    assert read_manifest(path) is first
    path.write_text("manifest_version: 1\norigin: opinfo\nentries: [{entry: abs}]\n")
    assert read_manifest(path)["entries"] == [{"entry": "abs"}]
    same_size = "manifest_version: 1\norigin: opinfo\nentries: [{entry: neg}]\n"
    path.write_text(same_size)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert read_manifest(path)["entries"] == [{"entry": "neg"}]


def test_the_eager_cap_takes_the_first_samples_and_never_makes_the_rest(tmp_path: Path) -> None:
    """census.eager.max_samples: a manifest with an eager cap runs the generator's first samples
    only, without drawing the ones past it (a torch generator yields up to 1,440); compiled keeps
    its own cap; a manifest without one runs every sample."""
    from portability_data.runner.census_rows import CensusModule

    def generator(count: int):
        yield from range(count)
        raise AssertionError("a sample past the cap was made")

    folder = tmp_path / "census"
    folder.mkdir()
    base = "manifest_version: 1\norigin: opinfo\ncompiled: {dtypes: [float32], max_samples: 2}\nentries: []\n"
    (folder / "capped.yaml").write_text(base + "eager: {max_samples: 3}\n")
    (folder / "plain.yaml").write_text(base)
    capped, plain = CensusModule(folder / "test_capped.py"), CensusModule(folder / "test_plain.py")
    assert capped.samples(generator(3), "eager") == [0, 1, 2] and capped.eager_cap == 3
    assert capped.samples(generator(2), "compiled") == [0, 1]
    assert plain.samples(iter(range(7)), "eager") == list(range(7)) and plain.eager_cap is None
    assert yaml.safe_load((CENSUS / "opinfo.yaml").read_text())["eager"] == {"max_samples": 64}


def test_the_tolerance_policy_judges_each_output_by_its_own_dtype() -> None:
    from portability_data.runner.oracle import deviation

    policy = {"float32": {"atol": 1e-5, "rtol": 1.3e-6}, "int64": {"atol": 0.0, "rtol": 0.0}}
    near = torch.tensor([1.0, 2.0, float("nan"), float("inf")])
    abs_error, rel_error, problem = deviation(near, np.array([1.0, 2.0 + 1e-6, np.nan, np.inf]), policy)
    assert problem is None and abs_error == pytest.approx(1e-6, rel=0.2) and rel_error < 1e-6
    _, _, problem = deviation(near, np.array([1.0, 2.1, np.nan, np.inf]), policy)
    assert problem and "1 of 4 values off" in problem and "float32" in problem
    abs_error, _, problem = deviation(
        torch.tensor([1.0]), np.array([np.nan]), policy
    )  # NaN where a number is due
    assert problem and math.isinf(abs_error)
    _, _, problem = deviation(torch.tensor([3, 4]), np.array([3, 5]), policy)  # integers are exact
    assert problem and "int64" in problem
    _, _, problem = deviation((torch.ones(2), torch.ones(3)), (np.ones(2), np.ones(2)), policy)
    assert problem and "shape" in problem
    _, _, problem = deviation(torch.ones(2), (np.ones(2), np.ones(2)), policy)
    assert problem == "1 outputs, the oracle has 2"


def test_the_less_precise_dtype_sets_the_tolerance_and_integers_wrap_as_fixed_width() -> None:
    """NumPy's float16 reference of an int8 arccos bounds the float32 result by float16's
    tolerance; an int64 reference of an int8 sum is compared modulo 2**8 (as the op computes it);
    a reference of ~0 gives a relative error scaled by atol, not by 1e-308."""
    from portability_data.runner.oracle import deviation

    policy = {"float16": {"atol": 1e-5, "rtol": 1e-3}, "float32": {"atol": 1e-5, "rtol": 1.3e-6}}
    inputs = np.array([-3, 0, 1], dtype=np.int8)
    reference = np.arccos(inputs.astype(np.float16) / 4)  # float16, as NumPy computes it for int8
    torch_result = torch.arccos(torch.tensor(inputs, dtype=torch.float32) / 4)
    _, rel_error, problem = deviation(torch_result, reference, policy)
    assert problem is None and 0 < rel_error < 1e-3
    _, _, problem = deviation(torch_result, reference.astype(np.float32), policy)
    assert problem and "float32 against float32" in problem  # both float32: float32's tolerance

    wrapped = torch.tensor([100], dtype=torch.int8) + torch.tensor([100], dtype=torch.int8)  # -56
    assert deviation(wrapped, np.array([200], dtype=np.int64), policy)[2] is None
    assert deviation(wrapped, np.array([201], dtype=np.int64), policy)[2] is not None
    assert deviation(wrapped.to(torch.int64), np.array([200], dtype=np.int64), policy)[2] is not None

    _, rel_error, problem = deviation(torch.tensor([2e-5]), np.array([1e-300]), policy)
    assert problem and rel_error == pytest.approx(2.0)


def test_pytorchs_own_tolerance_override_loosens_the_policy_and_never_tightens_it() -> None:
    """An entry's override (PyTorch's precisionOverride / toleranceOverride, harvested into the
    manifest) is a floor under the policy: it lets 1.005 pass for 1.0 in float32, and an override
    tighter than the policy changes nothing."""
    from portability_data.runner.census_rows import loosened
    from portability_data.runner.oracle import Judgement, deviation

    policy = {"float32": {"atol": 1e-5, "rtol": 1.3e-6}, "int64": {"atol": 0.0, "rtol": 0.0}}
    result, reference = torch.tensor([1.005]), np.array([1.0], dtype=np.float32)
    assert deviation(result, reference, policy)[2] is not None
    assert deviation(result, reference, loosened(policy, {"atol": 0.01, "rtol": 0.0}))[2] is None
    assert loosened(policy, {"atol": 0.0, "rtol": 0.0}) == policy
    assert loosened(policy, None) is policy
    judgement = Judgement(loosened(policy, {"atol": 0.01, "rtol": 0.0}))
    judgement.judge(result, reference)
    assert judgement.compared == 1 and judgement.worst_abs == pytest.approx(0.005, rel=1e-3)
    opinfo = census_module().CENSUS
    acos = opinfo.tolerances_for("acos", "eager", "float16")["float16"]
    assert acos == {"atol": 0.01, "rtol": opinfo.tolerances["float16"]["rtol"]}
    assert opinfo.tolerances_for("acos", "eager", "float32") == opinfo.tolerances


def test_the_manifest_carries_what_pytorch_declares_about_judging_an_entry() -> None:
    """Read from the wheel's own decorations (the committed manifest is what the wheel gives: the
    test above): acos's precisionOverride (common_methods_invocations.py, UnaryUfuncInfo('acos'):
    float16 1e-2, bfloat16 1e-1) for both modes; `torch.empty` and `new_empty_strided` declared
    not comparable (their output is uninitialised memory); conv3d's bare "Skipped!" of
    test_compare_cpu says nothing about its values and is not read as not comparable."""
    entries = {e["entry"]: e for e in yaml.safe_load((CENSUS / "opinfo.yaml").read_text())["entries"]}
    acos = entries["acos"]["oracle_declared"]["tolerance"]
    assert acos["eager"]["float16"] == {"atol": 0.01, "rtol": 0.0} == acos["compiled"]["float16"]
    assert acos["eager"]["bfloat16"]["atol"] == pytest.approx(0.1)
    assert "float32" not in acos["eager"]
    for name in ("empty", "new_empty_strided", "empty_strided", "nn.functional.dropout"):
        assert entries[name]["oracle_declared"]["not_comparable"], name
    assert "not_comparable" not in entries["nn.functional.conv3d"].get("oracle_declared", {})
    assert "not_comparable" not in entries["add"].get("oracle_declared", {})
    modules = {e["entry"]: e for e in yaml.safe_load((CENSUS / "module.yaml").read_text())["entries"]}
    assert modules["nn.CrossEntropyLoss"]["oracle_declared"]["tolerance"]["eager"]["float16"]["atol"] == 0.03


def census_repo(
    root: Path,
    entries: dict[str, list[str]],
    modules: dict[str, list[str]] | None = None,
    optimizers: dict[str, list[str]] | None = None,
) -> Path:
    """A scratch checkout with the torch census cut down to `entries` (OpInfo entry -> dtypes),
    `modules` (ModuleInfo) and `optimizers` (OptimizerInfo)."""
    return census_checkout(
        root, "torch", {"opinfo": entries, "module": modules or {}, "optimizer": optimizers or {}}
    )


def test_a_census_run_measures_each_pair_and_the_matrix_sets_it_beside_the_declarations(
    tmp_path: Path,
) -> None:
    """Real torch, real runner: abs on bool is not implemented (a confirmed failure with the
    framework's own NotImplementedError), add works on every sample against NumPy with its
    deviation recorded. Declarations made up for the test turn both into findings."""
    root = census_repo(
        tmp_path / "repo",
        {"abs": ["bool", "float32"], "add": ["float32", "int64"]},
        {"nn.Linear": ["float64"]},
        {"LBFGS": ["complex64"]},
    )
    paths = Paths.under(root)
    spec = RunSpec(framework="torch", device="cpu", repeats=1, timeout_s=300, suite="census")
    run_id = run(spec, paths, log=lambda message: None, jobs=2)  # two workers side by side
    assert "-census-" in run_id
    results = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pandas()
    by_subtest = results.set_index("subtest")
    assert set(by_subtest.index) == {
        "test_entry[abs-bool]",
        "test_entry[abs-float32]",
        "test_entry[add-float32]",
        "test_entry[add-int64]",
        "test_entry[nn.Linear-float64]",
        "test_entry[LBFGS-complex64]",
    }
    lbfgs = by_subtest.loc["test_entry[LBFGS-complex64]"]
    assert (lbfgs["outcome"], lbfgs["oracle"], lbfgs["samples_failed"]) == ("passed", "none", 0)
    linear = by_subtest.loc["test_entry[nn.Linear-float64]"]
    assert (linear["outcome"], linear["oracle"], linear["case_id"]) == (
        "passed",
        "reference",
        "torch.census.module.nn.Linear",
    )
    bad = by_subtest.loc["test_entry[abs-bool]"]
    assert (bad["outcome"], bad["error_type"], bad["confirmation"]) == (
        "failed",
        "NotImplementedError",
        "confirmed",
    )
    assert bad["samples"] >= 1 and bad["samples_failed"] == bad["samples"]
    # confirmed in a child forked from a process that had read the manifests and torch's test
    # databases once (fork_worker.preload), so the confirmation paid neither
    journaled = Journal(paths.journal_dir / f"{run_id}.jsonl").confirmations()
    confirmation = journaled["cases/torch/census/test_opinfo.py::test_entry[abs-bool]"]
    assert confirmation["worker"] == "fork" and confirmation["verdict"] == "confirmed"
    assert {"opinfo.yaml", "torch.testing._internal.common_methods_invocations"} <= set(
        confirmation["preloaded"]
    )
    good = by_subtest.loc["test_entry[add-float32]"]
    assert (good["outcome"], good["oracle"], good["samples_failed"]) == ("passed", "reference", 0)
    assert good["samples"] >= 5 and 0 <= good["max_rel_error"] < 1.3e-6
    assert by_subtest.loc["test_entry[add-int64]", "max_abs_error"] == 0.0
    assert len(good["op_latencies_ms"]) == good["samples"]  # one timed call per sample

    runs = read_table("runs", paths.runs_dir)
    assert runs["jobs"].tolist() == [2]
    declared = pd.DataFrame(
        [
            declared_row("abs", "bool", "supported_dtype"),  # made up: says bool works on cpu
            declared_row("add", "int64", "unsupported_dtype"),  # made up: says int64 does not
            declared_row("add", "float32", "supported_dtype"),
        ]
    )
    matrix = support_matrix(results, runs, declared)
    write_table("support_matrix", matrix, tmp_path / "support_matrix.parquet")  # converts and validates
    row = matrix.set_index(["entry", "dtype"])
    assert row.loc[("abs", "bool"), "status"] == "fails"
    assert row.loc[("abs", "bool"), "finding"] == "declared_supported_fails"
    assert row.loc[("add", "int64"), "finding"] == "declared_unsupported_works"
    assert pd.isna(row.loc[("add", "float32"), "finding"]) and pd.isna(
        row.loc[("abs", "float32"), "declared_dtype"]
    )
    assert set(matrix["function"]) == {"torch.abs", "torch.add", "torch.nn.Linear", "torch.optim.LBFGS"}
    assert set(matrix["run_id"]) == {run_id} and set(matrix["origin"]) == {"opinfo", "module", "optimizer"}


def test_only_a_census_run_may_run_cases_side_by_side(tmp_path: Path) -> None:
    """Curated timings are the data: two workers sharing two cores would bend them."""
    paths = Paths.under(census_repo(tmp_path / "repo", {"abs": ["float32"]}))
    with pytest.raises(RunError, match="jobs must be 1 for a curated run"):
        run(RunSpec(framework="torch", device="cpu"), paths, jobs=2)
    with pytest.raises(RunError, match="jobs must be 1"):
        run(RunSpec(framework="torch", device="cpu", suite="census"), paths, jobs=0)


def declared_row(entry: str, dtype: str, kind: str) -> dict:
    return {
        "framework": "torch",
        "framework_version": torch.__version__,
        "function": f"torch.{entry}",
        "unmapped_reason": None,
        "origin": "opinfo",
        "entry": entry,
        "variant": None,
        "device_type": "cpu",
        "dtype": dtype,
        "declared": kind,
        "aspect": "forward",
        "test_class": None,
        "test_name": None,
        "active": True,
        "reason": None,
        "source": f"made up by a test: {entry}",
    }


def test_a_curated_run_keeps_the_params_hash_it_had_before_suites_existed() -> None:
    """Runs committed before the census record a params hash without a suite field, and runs committed
    before the compiler axis (schema 10) one without a compiler field: the run stage must still find
    them (else it would re-measure everything). Naming the path's own compiler is the same setting."""
    spec = RunSpec(framework="jax", device="cpu", mode="compiled", repeats=3, timeout_s=900.0, memory_mb=8192)
    fields = asdict(spec)
    del fields["suite"], fields["compiler"]
    before = hashlib.sha256(json.dumps({**fields, "cases_digest": "x"}, sort_keys=True).encode()).hexdigest()[
        :16
    ]
    assert spec.params_hash("x") == before
    assert RunSpec(**{**asdict(spec), "suite": "census"}).params_hash("x") != before
    assert RunSpec(**{**asdict(spec), "compiler": "xla"}).params_hash("x") == before
    assert RunSpec(**{**asdict(spec), "compiler": "other"}).params_hash("x") != before


def test_the_compiled_census_compiles_each_sample_against_eager(tmp_path: Path) -> None:
    """Compiled mode runs only params' compiled dtypes and first samples, routes every sample
    through torch.compile (execution recorded), and judges it against eager on the same sample;
    a random op (dropout) is not failed for drawing other numbers than eager, nor is an op whose
    output PyTorch declares not comparable (new_empty_strided: uninitialised memory): no oracle."""
    root = census_repo(
        tmp_path / "repo",
        {"add": ["float32", "int64"], "nn.functional.dropout": ["float32"], "new_empty_strided": ["float32"]},
    )
    paths = Paths.under(root)
    spec = RunSpec(framework="torch", device="cpu", mode="compiled", repeats=1, timeout_s=600, suite="census")
    run_id = run(spec, paths, log=lambda message: None)
    results = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pandas()
    by_subtest = results.set_index("subtest")
    assert set(by_subtest.index) == {
        "test_entry[add-float32]",
        "test_entry[nn.functional.dropout-float32]",
        "test_entry[new_empty_strided-float32]",
    }
    add = by_subtest.loc["test_entry[add-float32]"]
    limit = yaml.safe_load((CENSUS / "opinfo.yaml").read_text())["compiled"]["max_samples"]
    assert (add["outcome"], add["oracle"], add["samples"], add["execution"]) == (
        "passed",
        "eager",
        limit,
        "compiled",
    )
    assert by_subtest.loc["test_entry[nn.functional.dropout-float32]", "outcome"] == "passed"
    empty = by_subtest.loc["test_entry[new_empty_strided-float32]"]
    assert (empty["outcome"], empty["oracle"]) == ("passed", "none")


def matrix_row(
    function: str, dtype: str, status: str, declared: str | None, finding: str | None = None
) -> dict:
    return {
        "framework": "torch",
        "device": "cpu",
        "mode": "eager",
        "function": function,
        "entry": function.removeprefix("torch."),
        "origin": "opinfo",
        "dtype": dtype,
        "status": status,
        "declared_dtype": declared,
        "finding": finding,
        "samples": 4,
        "samples_failed": 0 if status == "works" else 4,
        "error_type": None if status == "works" else "RuntimeError",
    }


def test_the_report_counts_a_function_failing_only_on_what_it_declares() -> None:
    """abs fails on a dtype it does not declare: a finding, not a failure; cos fails on a declared
    one: failing. The deciles put them beside the sample's functions in the same setting."""
    from portability_data.report.census import coverage, function_status, population_vs_sample, top_findings

    matrix = pd.DataFrame(
        [
            matrix_row("torch.abs", "float32", "works", "supported"),
            matrix_row("torch.abs", "bool", "fails", "unsupported"),
            matrix_row("torch.cos", "float32", "partial", "supported", "declared_supported_fails"),
            matrix_row("torch.sin", "int8", "works", "unsupported", "declared_unsupported_works"),
        ]
    )
    verdict = function_status(matrix).set_index("function")["fails"].to_dict()
    assert verdict == {"torch.abs": False, "torch.cos": True, "torch.sin": False}
    findings = top_findings(matrix)
    assert list(findings["finding"]) == ["declared_supported_fails", "declared_unsupported_works"]
    other = matrix.assign(framework="jax", function=matrix["function"].str.replace("torch", "jax"))
    twice = pd.concat([matrix, other, matrix.assign(dtype="float64")], ignore_index=True)
    listed = top_findings(twice, per_framework=1)  # one row per framework, its dtypes listed
    assert list(listed["framework"]) == ["jax", "torch"]
    assert listed.set_index("framework").loc["torch", "dtypes"] == "float32, float64"
    none_found = top_findings(matrix.assign(finding=None))
    assert none_found.empty and list(none_found.columns) == list(listed.columns)
    api = pd.DataFrame(
        {
            "framework": "torch",
            "qualified_name": ["torch.abs", "torch.cos", "torch.sin", "torch.tan", "torch.nn.Module"],
            "kind": ["function", "function", "method", "function", "class"],
        }
    )
    calls = {"torch.abs": 100, "torch.cos": 50, "torch.sin": 10, "torch.tan": 40}
    frequencies = pd.DataFrame(
        {
            "framework": "torch",
            "corpus": "pinned:x",
            "qualified_name": list(calls),
            "calls": list(calls.values()),
        }
    )
    covered = coverage(matrix, api, frequencies).iloc[0]
    assert (covered["measured_names"], covered["pct_of_public"], covered["pct_of_calls"]) == (3, 60.0, 80.0)
    split = ["public_names", "public_functions", "public_classes", "public_methods"]
    assert covered[split].tolist() == [5, 3, 1, 1]  # every name counted once, by its kind
    outcomes = pd.DataFrame(
        [
            {
                "framework": "torch",
                "device": "cpu",
                "mode": "eager",
                "source": "portability",
                "function": f,
                "outcome": o,
            }
            for f, o in [("torch.tan", "partial_failure"), ("torch.sin", "success")]
        ]
    )
    samples = pd.DataFrame(
        [
            {"sample_id": "mince2023", "framework": "torch", "function": f, "bucket": b, "status": "kept"}
            for f, b in [("torch.tan", "50"), ("torch.sin", "10")]
        ]
    )
    versus = population_vs_sample(matrix, frequencies, outcomes, samples)
    assert set(versus["bucket"]) >= {"50", "10"}
    by_bucket = versus.set_index("bucket")
    assert (
        by_bucket.loc["50", "sample_pct_failing"] == 100.0
        and by_bucket.loc["10", "sample_pct_failing"] == 0.0
    )
    assert versus["population"].sum() == 3


def test_a_numpy_namesake_claims_every_pair_and_the_furthest_pairs_are_listed() -> None:
    """jax.numpy.cbrt declares nothing per dtype, but as NumPy's namesake it claims NumPy's
    behaviour on the inputs NumPy takes: a failing pair makes it fail. Deviations are ranked."""
    from portability_data.report.census import (
        function_status,
        largest_deviations,
        numpy_disagreements,
        status_summary,
    )

    rows = [
        {**matrix_row("jax.numpy.cbrt", "float16", "fails", None), "framework": "jax", "origin": "numpy"},
        {**matrix_row("jax.numpy.sin", "float32", "works", None), "framework": "jax", "origin": "numpy"},
        matrix_row("torch.abs", "bool", "fails", None),  # an opinfo pair nobody declares: no claim
    ]
    matrix = pd.DataFrame(rows).assign(oracle="numpy", max_abs_error=[None, 1e-7, None])
    matrix["max_rel_error"] = [None, 3e-7, None]
    verdict = function_status(matrix).set_index("function")["fails"].to_dict()
    assert verdict == {"jax.numpy.cbrt": True, "jax.numpy.sin": False, "torch.abs": False}
    # the summary counts both readings: failing what it claims, and failing at all (torch.abs)
    summary = status_summary(matrix).set_index("framework")
    readings = ["functions_failing_claimed", "functions_failing_any"]
    assert summary[readings].to_dict("index") == {
        "jax": {"functions_failing_claimed": 1, "functions_failing_any": 1},
        "torch": {"functions_failing_claimed": 0, "functions_failing_any": 1},
    }
    furthest = largest_deviations(matrix)
    assert furthest["function"].tolist() == ["jax.numpy.sin"] and furthest["max_rel_error"][0] == 3e-7
    matrix["error_message"] = ["input edge (9,) float16: 2 of 9 values off the oracle", None, "boom"]
    by_kind = numpy_disagreements(matrix).set_index("input_kind")
    assert by_kind.loc["edge", ["pairs", "raises", "examples"]].tolist() == [1, 1, "cbrt"]
    assert "raised (no input label)" not in by_kind.index  # torch.abs is no NumPy namesake
    matrix.loc[0, "error_message"] = "ValueError: input must be 1-d"  # a message that says "input"
    assert numpy_disagreements(matrix)["input_kind"].tolist() == ["raised (no input label)"]


def test_a_changed_oracle_supersedes_census_cases_and_no_curated_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The oracle judges every census sample, so it is part of each census case's digest (a
    changed oracle makes the census runs older code); curated cases do not use it."""
    from portability_data.runner import provenance

    oracle = tmp_path / "oracle.py"
    oracle.write_bytes(provenance.ORACLE_FILE.read_bytes())
    monkeypatch.setattr(provenance, "ORACLE_FILE", oracle)
    paths = Paths.under(REPO_ROOT)
    cases = ["torch.census.opinfo.add", "torch.addr"]
    before = provenance.case_digests(paths, cases, "torch")
    oracle.write_text(oracle.read_text() + "\n# changed\n")
    after = provenance.case_digests(paths, cases, "torch")
    assert set(before) == set(cases)
    assert before["torch.census.opinfo.add"] != after["torch.census.opinfo.add"]
    assert before["torch.addr"] == after["torch.addr"]


def test_census_rows_stay_out_of_the_studys_outcome_tables() -> None:
    """The same function measured by a curated case and by the census: outcomes (the study's
    table) read only the curated rows; the census failing does not make the function fail there."""
    from portability_data.pipeline.aggregate.build import aggregate
    from tests.conftest import example_rows

    curated = example_rows()["results"][0]
    census = {
        **curated,
        "case_id": "torch.census.opinfo.argsort",
        "test_id": "cases/torch/census/test_opinfo.py::test_entry[argsort-float32]",
        "subtest": "test_entry[argsort-float32]",
        "outcome": "failed",
        "failure_category": "other",
        "error_type": "RuntimeError",
    }
    outcomes, _ = aggregate(pd.DataFrame([curated, census]))
    assert list(outcomes["outcome"]) == ["success"] and list(outcomes["n_subtests"]) == [1]


def test_works_is_claimed_only_where_an_oracle_judged_the_samples() -> None:
    """A pair whose samples all ran is `works` only when an oracle compared them (NumPy, upstream's
    reference, eager for compiled mode, ...); with none (or none recorded) it is `ran`, a status of its
    own that no count of works includes (issue 48)."""
    from portability_data.pipeline.support_matrix import status_of

    for oracle in ("numpy", "reference", "eager", "scipy", "numpy_32bit"):
        assert status_of({"outcome": "passed", "oracle": oracle}) == "works", oracle
    for oracle in ("none", None, ""):
        assert status_of({"outcome": "passed", "oracle": oracle}) == "ran", oracle
    order_dependent = {"outcome": "failed", "confirmation": "order_dependent", "error_type": "RuntimeError"}
    assert status_of({**order_dependent, "oracle": "none"}) == "ran"
    assert status_of({**order_dependent, "oracle": "numpy"}) == "works"


def test_values_off_the_oracle_are_deviations_not_failures() -> None:
    """A pair whose samples ran but left the tolerance is `deviates` (with its errors), never a
    `declared_supported_fails` finding; a pair whose samples raised is partial or fails."""
    from portability_data.pipeline.support_matrix import status_of

    base = {"outcome": "failed", "confirmation": "confirmed", "samples": 4, "oracle": "numpy"}
    assert status_of({**base, "error_type": "ValuesOffOracle", "samples_failed": 2}) == "deviates"
    assert status_of({**base, "error_type": "RuntimeError", "samples_failed": 2}) == "partial"
    assert status_of({**base, "error_type": "RuntimeError", "samples_failed": 4}) == "fails"
    assert status_of({**base, "error_type": "RuntimeError", "confirmation": "order_dependent"}) == "works"
    assert status_of({**base, "outcome": "timeout", "error_type": "Timeout"}) == "timeout"
    unconfirmed = {**base, "error_type": "RuntimeError", "samples_failed": 4, "confirmation": None}
    assert status_of(unconfirmed) == "unconfirmed"  # never run alone: not the framework's failure yet
    # a crash or a host fallback is the framework's once it recurs alone too (a run closed partial
    # before its confirmations leaves them unconfirmed); timeouts are never re-run alone (15 minutes)
    for outcome in ("crashed", "host_fallback", "error"):
        assert status_of({**base, "outcome": outcome, "confirmation": None}) == "unconfirmed", outcome
    assert status_of({**base, "outcome": "crashed", "error_type": "WorkerCrashed"}) == "crashed"
    assert status_of({**base, "outcome": "host_fallback", "error_type": "HostFallback"}) == "host_fallback"
    assert status_of({**base, "outcome": "timeout", "confirmation": None}) == "timeout"


def test_an_entry_the_installed_wheel_lacks_is_listed_not_in_wheel_never_failed(tmp_path: Path) -> None:
    """The xla environment pins torch 2.9 while the manifests are harvested from torch 2.13: an
    entry added since (linear_cross_entropy, native_group_norm, ...) is not in 2.9's op_db. Its
    subtest is skipped with the reason (no confirmation: nothing failed), the support matrix lists
    the pair as not_in_wheel, and the report counts it apart and not as a measured function."""
    from portability_data.report.census import coverage, status_summary

    root = census_repo(tmp_path / "repo", {"abs": ["float32"]})
    manifest_path = root / "cases" / "torch" / "census" / "opinfo.yaml"
    manifest = yaml.safe_load(manifest_path.read_text())
    gone = {
        **manifest["entries"][0],
        "entry": "abs.gone_from_this_wheel",
        "case_id": "torch.census.opinfo.abs.gone_from_this_wheel",
        "function": "torch.gone_from_this_wheel",
    }
    manifest["entries"].append(gone)
    manifest_path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    paths = Paths.under(root)
    spec = RunSpec(framework="torch", device="cpu", repeats=1, timeout_s=300, suite="census")
    run_id = run(spec, paths, log=lambda message: None)
    results = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pandas()
    by_subtest = results.set_index("subtest")
    skipped = by_subtest.loc["test_entry[abs.gone_from_this_wheel-float32]"]
    assert skipped["outcome"] == "skipped" and pd.isna(skipped["confirmation"])
    assert skipped["error_message"] == (
        f"Skipped: not in this wheel: abs.gone_from_this_wheel is absent from the installed torch "
        f"{torch.__version__}'s torch.testing._internal.common_methods_invocations.op_db "
        f"(the manifest was harvested from {manifest['framework_version']})"
    )
    assert by_subtest.loc["test_entry[abs-float32]", "outcome"] == "passed"

    matrix = support_matrix(results, read_table("runs", paths.runs_dir), None)
    status = matrix.set_index("entry")["status"]
    assert status.to_dict() == {"abs": "works", "abs.gone_from_this_wheel": "not_in_wheel"}
    summary = status_summary(matrix).iloc[0]
    counted = ("works", "not_in_wheel", "faults", "functions_failing_claimed", "functions_failing_any")
    assert [summary[column] for column in counted] == [1, 1, 0, 0, 0]
    assert coverage(matrix, None, None).iloc[0]["measured_names"] == 1


def test_moving_off_the_cpu_counts_each_pair_by_what_the_device_did_to_it() -> None:
    """The census on the CPU beside the census on xla (torch 2.13 there, torch 2.9 here): a pair
    working on both, one lost on the device (its error named), one falling back to the host, one
    gained, one failing on both, and one not in the device's wheel (not compared)."""
    from portability_data.report.census_moves import device_moves

    pairs = [  # (entry, dtype, on the cpu, on xla)
        ("add", "float32", "works", "works"),
        ("cumsum", "float32", "works", "fails"),
        ("cumsum", "int64", "works", "partial"),
        ("nonzero", "float32", "works", "host_fallback"),
        ("abs", "bool", "fails", "works"),
        ("abs", "complex32", "fails", "fails"),
        ("native_group_norm", "float32", "works", "not_in_wheel"),
        ("sub", "float32", "ran", "works"),  # ran (nothing judged it) still runs: kept by the move
        ("abs", "float16", "fails", "ran"),
        ("cumprod", "float32", "works", "unconfirmed"),  # failed once on xla, never alone: unknown
    ]
    rows = []
    for entry, dtype, on_cpu, on_xla in pairs:
        for device, status, version, run_id in (
            ("cpu", on_cpu, "2.13.0+cpu", "torch-cpu-eager-census-20261128T000000Z-aaaaaa"),
            ("xla", on_xla, "2.9.0+cu128", "torch-xla-eager-census-20261128T000000Z-bbbbbb"),
        ):
            row = matrix_row(f"torch.{entry}", dtype, status, "supported")
            failing = status not in ("works", "ran", "host_fallback", "not_in_wheel")
            row |= {"device": device, "framework_version": version, "run_id": run_id,
                    "device_model": "XLA CPU (PJRT)" if device == "xla" else "AMD EPYC",
                    "error_message": "Value out of range (expected to be in range of [0, -1])\nmore"
                    if failing else None}  # fmt: skip
            rows.append(row)
    older_cpu = matrix_row("torch.add", "float32", "fails", "supported")  # an older run of another CPU
    older_cpu |= {"framework_version": "2.12.0", "run_id": "torch-cpu-eager-census-20261101T000000Z-cccccc",
                  "device_model": "Intel Xeon", "error_message": None}  # fmt: skip
    matrix = pd.DataFrame([*rows, older_cpu])
    summary, lost = device_moves(matrix)
    [moved] = summary.to_dict("records")
    versions = (moved["device"], moved["cpu_version"], moved["device_version"])
    assert versions == ("xla", "2.13.0+cpu", "2.9.0+cu128")  # the newest CPU run's pair, not the older
    moves = ("pairs_both", "works_both", "lost", "falls_back", "gained", "fails_both")
    assert [moved[move] for move in moves] == [10, 2, 2, 1, 2, 1]
    assert moved["not_compared"] == 2 and (moved["functions_lost"], moved["functions_falling_back"]) == (1, 1)
    assert moved["functions_unconfirmed"] == 1
    [cumsum] = lost.to_dict("records")
    assert (cumsum["function"], cumsum["pairs_lost"]) == ("torch.cumsum", 2)
    assert cumsum["dtypes"] == "float32, int64"
    assert cumsum["error"] == "Value out of range (expected to be in range of [0, -1])"
    assert [frame.empty for frame in device_moves(matrix[matrix["device"] == "cpu"])] == [True, True]


def test_each_path_keeps_its_own_list_of_functions_lost_moving_off_the_cpu() -> None:
    """Issue 51 asks for the functions most often lost on each path: a path losing many functions
    (onnxruntime, 23 here) keeps its TOP_LOST, most pairs first, and does not push out the one
    function another path (openvino) loses."""
    from portability_data.report.census_moves import TOP_LOST, device_moves

    rows = []
    lost_on = {"onnxruntime": [f"op{i:02d}" for i in range(TOP_LOST + 3)], "openvino": ["op00"]}
    for device, losing in lost_on.items():
        for index, entry in enumerate(lost_on["onnxruntime"]):
            dtypes = ("float32", "int64") if index == TOP_LOST + 2 else ("float32",)  # the last: 2 pairs
            for dtype in dtypes:
                for where, status in (("cpu", "works"), (device, "fails" if entry in losing else "works")):
                    row = matrix_row(f"torch.{entry}", dtype, status, "supported")
                    suffix = "a00000" if where == "cpu" else "b00000"
                    run = f"torch-{where}-compiled-census-20261201T000000Z-{suffix}"
                    row |= {"device": where, "mode": "compiled", "framework_version": "2.13.0", "run_id": run,
                            "device_model": where, "error_message": f"no lowering for {entry}"}  # fmt: skip
                    rows.append(row)
    matrix = pd.DataFrame(rows).drop_duplicates(["device", "function", "dtype"])
    _, lost = device_moves(matrix)
    per_path = lost.groupby("device")["function"].apply(list).to_dict()
    assert len(per_path["onnxruntime"]) == TOP_LOST
    assert per_path["onnxruntime"][0] == f"torch.op{TOP_LOST + 2:02d}"  # two pairs lost: first
    assert per_path["onnxruntime"][1:] == [f"torch.op{i:02d}" for i in range(TOP_LOST - 1)]
    assert per_path["openvino"] == ["torch.op00"]
    assert lost.loc[lost["device"] == "openvino", "error"].tolist() == ["no lowering for op00"]


def test_a_failure_the_rules_now_put_on_the_harness_is_not_the_frameworks_in_any_census_table() -> None:
    """The xla environment once lacked ml_dtypes, which the NumPy generator needs for bfloat16: those
    pairs failed with category "other" at run time, before a rule put that message on the harness.
    The support matrix reads failures with the current rules, as aggregation does: the pair is
    `harness` (not measured), so it is neither lost moving off the CPU nor a function apart from the
    other frameworks, and the function is not counted as measured through it."""
    from portability_data.pipeline.crossframework import crossframework
    from portability_data.report.census import coverage
    from portability_data.report.census_moves import device_moves
    from tests.conftest import example_rows

    base = example_rows()["results"][0]
    rows = []
    for framework, device, outcome, message in (
        ("torch", "cpu", "passed", None),
        ("torch", "xla", "failed", "No module named 'ml_dtypes'"),
        ("jax", "xla", "passed", None),
    ):
        version = {"torch": "2.9.0+cu128", "jax": "0.8.0"}[framework]
        rows.append({
            **base, "framework": framework, "device": device, "framework_version": version,
            "case_id": f"{framework}.census.numpy.abs", "function": f"{framework}.abs",
            "test_id": f"cases/{framework}/census/test_numpy.py::test_entry[abs-bfloat16]",
            "subtest": "test_entry[abs-bfloat16]", "outcome": outcome, "confirmation": None,
            "failure_category": "other" if message else None,
            "failure_rule": "unclassified" if message else None,
            "error_type": "ModuleNotFoundError" if message else None, "error_message": message,
            "samples": None if message else 3, "samples_failed": None if message else 0,
        })  # fmt: skip
    rows[1]["confirmation"] = "confirmed"
    matrix = support_matrix(pd.DataFrame(rows), None, None)
    on_xla = matrix[(matrix["framework"] == "torch") & (matrix["device"] == "xla")].iloc[0]
    assert (on_xla["status"], on_xla["failure_category"]) == ("harness", "harness")
    summary, lost = device_moves(matrix[matrix["framework"] == "torch"])
    assert (summary.iloc[0]["lost"], summary.iloc[0]["not_compared"], len(lost)) == (0, 1, 0)
    assert crossframework(matrix).empty  # torch's xla row measured nothing: jax stands alone
    only_xla = matrix[matrix["device"] == "xla"]
    assert coverage(only_xla, None, None).set_index("framework")["measured_names"].to_dict() == {
        "jax": 1,
        "torch": 0,
    }


def test_a_refusal_by_design_is_no_finding_against_the_declared_dtype() -> None:
    """Integer fmod by a zero divisor and meshgrid of an N-D tensor raise by design on a dtype the
    framework supports: the current failure rules read them as input_domain, and the support matrix
    keeps the pair failing but makes no declared_supported_fails finding of it (issue 48); a missing
    kernel on the same declared dtype still is one."""
    from portability_data.pipeline.support_matrix import support_matrix
    from tests.conftest import example_rows

    base = example_rows()["results"][0]
    meshgrid_message = "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: 1"
    rows = []
    for entry, dtype, error_type, message in (
        ("fmod", "int64", "RuntimeError", "ZeroDivisionError"),
        ("meshgrid", "float32", "RuntimeError", meshgrid_message),
        ("cumsum", "int64", "NotImplementedError", '"cumsum_cpu" not implemented for \'Long\''),
    ):  # fmt: skip
        rows.append({
            **base, "framework": "torch", "device": "cpu", "framework_version": "2.13.0+cpu",
            "case_id": f"torch.census.opinfo.{entry}", "function": f"torch.{entry}",
            "test_id": f"cases/torch/census/test_opinfo.py::test_entry[{entry}-{dtype}]",
            "subtest": f"test_entry[{entry}-{dtype}]", "outcome": "failed", "confirmation": "confirmed",
            "failure_category": "other", "failure_rule": "unclassified", "failure_subcategory": None,
            "error_type": error_type, "error_message": message, "samples": 4, "samples_failed": 4,
        })  # fmt: skip
    declared = pd.DataFrame([declared_row(entry, dtype, "supported_dtype") for entry, dtype, *_ in (
        ("fmod", "int64"), ("meshgrid", "float32"), ("cumsum", "int64"))])  # fmt: skip
    matrix = support_matrix(pd.DataFrame(rows), None, declared).set_index("entry")
    assert set(matrix["status"]) == {"fails"} and set(matrix["declared_dtype"]) == {"supported"}
    assert matrix["finding"].isna()[["fmod", "meshgrid"]].all()
    assert matrix.loc["cumsum", "finding"] == "declared_supported_fails"
