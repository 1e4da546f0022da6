"""PyTorch's NumPy namesakes in the census (issues 20 and 21): the manifest holds exactly the torch
functions whose own OpInfo entry declares a NumPy reference, on the shared generator's inputs;
they run through the real runner and harness and are judged against NumPy; their pairs read what
the declaring OpInfo entry claims; and the cross-framework table sets them beside jax.numpy and
tf.experimental.numpy under the same NumPy name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from portability_data.pipeline.crossframework import crossframework
from portability_data.pipeline.frameworks.namesakes import accepted_kinds
from portability_data.pipeline.frameworks.torch.namesakes import (
    declared_namesakes,
    numpy_names_of,
    public_namesakes,
)
from portability_data.pipeline.support_matrix import declaring_entries, support_matrix
from tests.conftest import REPO_ROOT, census_checkout, census_results

MANIFEST = REPO_ROOT / "cases" / "torch" / "census" / "numpy.yaml"


def committed() -> dict:
    return yaml.safe_load(MANIFEST.read_text())


def test_the_manifest_holds_the_namesakes_torch_declares_and_says_why_not_the_others() -> None:
    """Every NumPy name an OpInfo `ref` is bound to is an entry or listed with its reason; public
    torch namesakes without such a declaration are listed, not measured; NumPy's arity and kinds
    are today's; the torch function is the namesake where the op or an alias has that name."""
    import numpy as np
    from torch.testing._internal.common_methods_invocations import op_db

    manifest = committed()
    by_entry = {e["entry"]: e for e in manifest["entries"]}
    unmapped = {u["entry"]: u["reason"] for u in manifest["unmapped"]}
    declared = declared_namesakes(list(op_db))
    assert set(declared) <= set(by_entry) | set(unmapped)
    assert not set(by_entry) & set(unmapped)
    assert numpy_names_of(np.arccos) == ["acos", "arccos"] and numpy_names_of(lambda x: x) == []
    assert by_entry["arccos"]["function"] == "torch.arccos" and by_entry["arccos"]["opinfo"] == "acos"
    assert by_entry["conjugate"]["function"] == "torch.conj"  # no torch.conjugate: the op's own name
    assert by_entry["equal"]["function"] == "torch.eq"  # torch.equal is another function (one bool)
    assert unmapped["transpose"] == "other_signature"  # torch.permute needs the dims
    assert unmapped["tile"] == "non_array_arguments"  # torch.tile takes a tuple of ints
    assert unmapped["std"] == "no_declared_numpy_reference"  # torch.std divides by n - 1
    assert "std" in public_namesakes(frozenset({"torch.std", "torch.fft.rfft", "torch.nn.relu"}))
    for name in ("sin", "maximum", "fft.rfft"):
        arity, kinds, _ = accepted_kinds(name)
        assert (arity, kinds) == (by_entry[name]["arity"], by_entry[name]["kinds"]), name
    assert by_entry["sin"]["case_id"] == "torch.census.numpy.sin"
    assert "bool" not in by_entry["abs"]["declared_cpu"]  # what OpInfo says torch.abs takes on cpu


def test_an_eager_run_judges_torch_against_numpy_on_the_generators_inputs(tmp_path: Path) -> None:
    """Real torch, real runner: torch.sin matches NumPy on every kind; torch.sqrt of int64 computes
    in float32 where NumPy uses float64 (recorded as numpy_32bit, judged at float32, passes);
    torch.abs has no bool kernel (a confirmed failure with torch's own error, every sample)."""
    entries = {"sin": ["float32"], "sqrt": ["int64"], "abs": ["bool"]}
    root = census_checkout(tmp_path / "repo", "torch", {"numpy": entries})
    by_subtest = census_results(root, "torch", "eager")
    kinds = {e["entry"]: e["kinds"] for e in committed()["entries"]}
    sin = by_subtest.loc["test_entry[sin-float32]"]
    assert (sin["outcome"], sin["oracle"], sin["samples_failed"]) == ("passed", "numpy", 0)
    assert sin["samples"] == len(kinds["sin"]["float32"]) and sin["case_id"] == "torch.census.numpy.sin"
    sqrt = by_subtest.loc["test_entry[sqrt-int64]"]
    assert (sqrt["outcome"], sqrt["oracle"], sqrt["samples_failed"]) == ("passed", "numpy_32bit", 0)
    abs_bool = by_subtest.loc["test_entry[abs-bool]"]
    assert (abs_bool["outcome"], abs_bool["error_type"], abs_bool["confirmation"]) == (
        "failed",
        "NotImplementedError",
        "confirmed",
    )
    assert abs_bool["samples_failed"] == abs_bool["samples"] > 0
    # result dtypes beside NumPy's: sqrt of int64 is float32 in torch, float64 in NumPy (promotion)
    dtypes = ["result_dtype", "oracle_dtype", "dtype_mismatches"]
    assert tuple(sin[dtypes]) == ("float32", "float32", 0)
    assert tuple(sqrt[dtypes]) == ("float32", "float64", sqrt["samples"])
    assert abs_bool[dtypes].isna().all()  # no sample returned


def test_a_namesake_pair_reads_what_its_opinfo_entry_declares() -> None:
    """torch.abs on bool is declared unsupported by OpInfo `abs`: as the namesake `abs` its failing
    pair is no claimed failure, its float32 pair is declared supported; other origins unaffected."""
    shared = declaring_entries(REPO_ROOT / "cases")
    assert shared[("torch", "numpy", "arccos")] == ("opinfo", "acos")
    results = pd.DataFrame(
        [
            census_row("torch.census.numpy.abs", "abs", dtype, outcome)
            for dtype, outcome in (("bool", "failed"), ("float32", "passed"))
        ]
        # jax.numpy's namesake of the same origin and entry declares nothing: torch's OpInfo is not its
        + [{**census_row("jax.census.numpy.abs", "abs", "bool", "passed"), "framework": "jax"}]
    )
    declared = pd.DataFrame(
        [
            declared_row("opinfo", "abs", "bool", "unsupported_dtype"),
            declared_row("opinfo", "abs", "float32", "supported_dtype"),
        ]
    )
    matrix = support_matrix(results, None, declared, shared)
    jax = matrix[matrix["framework"] == "jax"]
    assert jax["declared_dtype"].isna().all() and jax["finding"].isna().all()
    matrix = matrix[matrix["framework"] == "torch"].set_index("dtype")
    assert matrix.loc["bool", "declared_dtype"] == "unsupported"
    assert matrix.loc["float32", "declared_dtype"] == "supported"
    alone = support_matrix(results, None, declared)
    assert alone["declared_dtype"].isna().all()  # without the manifests' link nothing is declared
    # the rows' result dtypes are the pair's (null where the row recorded none)
    results["result_dtype"], results["oracle_dtype"], results["dtype_mismatches"] = "bool", "bool", 0
    results.loc[0, ["result_dtype", "oracle_dtype", "dtype_mismatches"]] = [None, None, None]
    carried = support_matrix(results, None, None).set_index(["framework", "dtype"])
    assert tuple(carried.loc[("jax", "bool"), ["result_dtype", "oracle_dtype", "dtype_mismatches"]]) == (
        "bool",
        "bool",
        0,
    )
    assert carried.loc[("torch", "bool"), ["result_dtype", "oracle_dtype", "dtype_mismatches"]].isna().all()


def test_the_cross_framework_table_sets_torch_beside_jax_and_tensorflow() -> None:
    """One NumPy name and dtype in three frameworks: torch's namesake joins the group; the one
    that fails where the others work stands apart."""
    rows = [
        matrix_row("torch", "numpy", "sin", "torch.sin", "works"),
        matrix_row("jax", "numpy", "sin", "jax.numpy.sin", "works"),
        matrix_row("tensorflow", "tnp", "sin", "tensorflow.experimental.numpy.sin", "fails"),
        matrix_row("torch", "opinfo", "sin", "torch.sin", "fails"),  # not a namesake row
    ]
    table = crossframework(pd.DataFrame(rows)).set_index("framework")
    assert sorted(table.index) == ["jax", "tensorflow", "torch"]
    assert table.loc["tensorflow", "stands_apart"] == "alone_fails"
    assert table.loc["torch", "status"] == "works" and table.loc["torch", "name"] == "sin"


def census_row(case_id: str, entry: str, dtype: str, outcome: str) -> dict:
    return {
        "run_id": "r1",
        "case_id": case_id,
        "subtest": f"test_entry[{entry}-{dtype}]",
        "framework": "torch",
        "framework_version": "2.13.0",
        "function": "torch.abs",
        "device": "cpu",
        "device_model": "cpu",
        "mode": "eager",
        "repeat": 0,
        "outcome": outcome,
        "confirmation": "confirmed" if outcome == "failed" else None,
        "error_type": "NotImplementedError" if outcome == "failed" else None,
        "error_message": None,
        "samples": 8,
        "samples_failed": 8 if outcome == "failed" else 0,
    }


def declared_row(origin: str, entry: str, dtype: str, declared: str) -> dict:
    return {
        "origin": origin,
        "entry": entry,
        "variant": None,
        "device_type": "cpu",
        "dtype": dtype,
        "declared": declared,
        "aspect": "forward",
        "active": True,
    }


def matrix_row(framework: str, origin: str, entry: str, function: str, status: str) -> dict:
    return {
        "framework": framework,
        "framework_version": "1",
        "function": function,
        "case_id": f"{framework}.census.{origin}.{entry}",
        "entry": entry,
        "origin": origin,
        "dtype": "float32",
        "device": "cpu",
        "device_model": "cpu",
        "mode": "eager",
        "run_id": f"{framework}-run",
        "status": status,
        "samples": 8,
        "samples_failed": 0 if status == "works" else 8,
        "oracle": "numpy",
        "max_abs_error": 0.0,
        "max_rel_error": 0.0,
        "error_type": None,
        "error_message": None,
    }
