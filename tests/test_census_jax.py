"""The JAX census (issue 20): its two manifests are what the installed wheel and NumPy give, and
their entries run through the real runner and harness, one subtest per entry x dtype, judged by
the oracle's tolerance policy (eager: harnesses run alone, jax.numpy against NumPy; compiled:
harnesses against eager)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import yaml

from portability_data.pipeline.frameworks.jax.census import group_function, harness_manifest
from portability_data.pipeline.frameworks.namesakes import accepted_kinds
from portability_data.runner.census_rows import census_rows
from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run
from portability_data.tables.tableio import read_table
from tests.conftest import REPO_ROOT, census_checkout

CENSUS = REPO_ROOT / "cases" / "jax" / "census"
API = REPO_ROOT / "data" / "api" / "api.parquet"


def committed(origin: str) -> dict:
    return yaml.safe_load((CENSUS / f"{origin}.yaml").read_text())


def test_the_harness_manifest_is_what_the_installed_wheel_holds() -> None:
    """Every group listed (mapped or with its reason), every harness counted, none dropped."""
    from jax._src.internal_test_util.test_harnesses import all_harnesses

    census = yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["census"]
    manifest = committed("harnesses")
    assert harness_manifest(read_table("api", API), census) == manifest
    groups = {h.group_name for h in all_harnesses}
    assert {e["entry"] for e in manifest["entries"]} | {u["entry"] for u in manifest["unmapped"]} == groups
    counted = sum(sum(e["samples"].values()) for e in manifest["entries"])
    assert counted + sum(u["harnesses"] for u in manifest["unmapped"]) == len(all_harnesses)
    by_entry = {e["entry"]: e for e in manifest["entries"]}
    assert by_entry["and"]["function"] == "jax.lax.bitwise_and"
    assert by_entry["svd"]["function"] == "jax.lax.linalg.svd"
    assert by_entry["random_uniform"]["function"] == "jax.random.uniform"
    assert "bool" in by_entry["clamp"]["unimplemented"]["cpu"]  # JAX's own declaration, kept
    assert group_function("add_any", frozenset()) == (None, "private_name")
    assert group_function("made_up", frozenset({"jax.lax.other"})) == (None, "not_in_api")


def test_the_numpy_manifest_says_what_numpy_takes() -> None:
    """Every jax.numpy function of the api table is an entry or listed with its reason; the
    arity and kinds of a few are what NumPy does with the generator's inputs today."""
    manifest = committed("numpy")
    api = read_table("api", API)
    functions = api[(api["framework"] == "jax") & (api["kind"] == "function")]["qualified_name"]
    names = {q.removeprefix("jax.numpy.") for q in functions if q.startswith("jax.numpy.")}
    listed = [e["entry"] for e in manifest["entries"]] + [u["entry"] for u in manifest["unmapped"]]
    assert sorted(listed) == sorted(names)
    reasons = {u["reason"] for u in manifest["unmapped"]}
    assert reasons <= {"no_numpy_namesake", "io", "global_state", "undefined_values"} | {
        "numpy_rejects_inputs",
        "numpy_timeout",
    }
    by_entry = {e["entry"]: e for e in manifest["entries"]}
    for name in ("add", "sqrt", "linalg.svd", "outer"):
        arity, kinds, _ = accepted_kinds(name)
        assert (arity, kinds) == (by_entry[name]["arity"], by_entry[name]["kinds"]), name
    assert by_entry["add"]["arity"] == 2 and "large" in by_entry["add"]["kinds"]["float32"]
    assert "large" not in by_entry["outer"]["kinds"]["float32"]  # 1e12 elements: never tried
    assert "large" not in by_entry["linalg.svd"]["kinds"]["float32"]  # superlinear


def test_census_rows_name_one_node_per_entry_and_dtype() -> None:
    rows = census_rows(REPO_ROOT / "cases", REPO_ROOT, "jax")
    harnesses, numpy, nn = committed("harnesses"), committed("numpy"), committed("nn")
    assert len(rows) == len(harnesses["entries"]) + len(numpy["entries"]) + len(nn["entries"])
    assert sum(r["origin"] == "nn" for r in rows) == len(nn["entries"]) > 0
    assert len({r["case_id"] for r in rows}) == len(rows)
    add = next(r for r in rows if r["case_id"] == "jax.census.numpy.add")
    assert (add["function"], add["origin"]) == ("jax.numpy.add", "numpy")
    assert "cases/jax/census/test_numpy.py::test_entry[add-float32]" in add["select"]
    gather = next(r for r in rows if r["case_id"] == "jax.census.harnesses.gather")
    assert gather["select"] == [
        f"cases/jax/census/test_harnesses.py::test_entry[gather-{d}]" for d in gather_dtypes(harnesses)
    ]
    compiled = census_rows(REPO_ROOT / "cases", REPO_ROOT, "jax", mode="compiled")
    assert all(s.endswith("-float32]") for r in compiled for s in r["select"])


def gather_dtypes(manifest: dict) -> list[str]:
    return next(e["dtypes"] for e in manifest["entries"] if e["entry"] == "gather")


def census_repo(root: Path, harnesses: dict[str, list[str]], numpy: dict[str, list[str]]) -> Path:
    """A scratch checkout with the jax census cut down to the given entries and dtypes."""
    return census_checkout(root, "jax", {"harnesses": harnesses, "numpy": numpy})


def test_an_eager_census_run_measures_each_pair(tmp_path: Path) -> None:
    """Real jax, real runner: lu on float16 has no LAPACK kernel (a confirmed failure with jax's own
    NotImplementedError), abs runs, add matches NumPy on every input kind; a float64 input runs as
    float32 (x64 off): recorded in the oracle column, not failed."""
    root = census_repo(
        tmp_path / "repo",
        {"abs": ["float32"], "lu": ["float16"]},
        {"add": ["float32", "float64", "int8"]},
    )
    paths = Paths.under(root)
    spec = RunSpec(framework="jax", device="cpu", repeats=1, timeout_s=300, suite="census")
    run_id = run(spec, paths, log=lambda message: None)
    results = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pandas()
    by_subtest = results.set_index("subtest")
    assert set(by_subtest.index) == {
        "test_entry[abs-float32]",
        "test_entry[lu-float16]",
        "test_entry[add-float32]",
        "test_entry[add-float64]",
        "test_entry[add-int8]",
    }
    abs_ = by_subtest.loc["test_entry[abs-float32]"]
    # lax.abs is held to numpy.abs on the same host arrays (REFERENCES of test_harnesses.py)
    assert (abs_["outcome"], abs_["oracle"], abs_["samples"], abs_["samples_compared"], abs_["case_id"]) == (
        "passed",
        "numpy",
        1,
        1,
        "jax.census.harnesses.abs",
    )
    lu = by_subtest.loc["test_entry[lu-float16]"]
    assert (lu["outcome"], lu["error_type"], lu["confirmation"]) == (
        "failed",
        "NotImplementedError",
        "confirmed",
    )
    assert lu["samples_failed"] == lu["samples"] == 3
    kinds = committed("numpy")["entries"]
    add_kinds = next(e["kinds"] for e in kinds if e["entry"] == "add")
    for dtype, oracle in (("float32", "numpy"), ("float64", "numpy_32bit"), ("int8", "numpy")):
        add = by_subtest.loc[f"test_entry[add-{dtype}]"]
        assert (add["outcome"], add["oracle"], add["samples_failed"]) == ("passed", oracle, 0), dtype
        assert add["samples"] == len(add_kinds[dtype]) == len(add["op_latencies_ms"])
    # one correctly rounded operation: equal bits, but for XLA flushing denormal sums to zero
    assert by_subtest.loc["test_entry[add-int8]", "max_abs_error"] == 0.0
    # result dtypes beside NumPy's on what jax ran (float64 inputs ran as float32: NumPy got those)
    dtypes = ["result_dtype", "oracle_dtype", "dtype_mismatches"]
    for dtype, returned in (("float32", "float32"), ("float64", "float32"), ("int8", "int8")):
        assert tuple(by_subtest.loc[f"test_entry[add-{dtype}]", dtypes]) == (returned, returned, 0), dtype
    assert by_subtest.loc["test_entry[abs-float32]", dtypes].isna().all()  # harnesses: no NumPy namesake
    assert 0 < by_subtest.loc["test_entry[add-float32]", "max_abs_error"] < 1e-44


def test_the_compiled_census_jits_each_sample_against_eager(tmp_path: Path) -> None:
    """Compiled mode runs the manifest's compiled dtypes and first samples only, every sample
    through jax.jit (execution recorded), harnesses judged against jax with jit disabled."""
    root = census_repo(tmp_path / "repo", {"gather": ["float32"]}, {"sqrt": ["float32"]})
    paths = Paths.under(root)
    spec = RunSpec(framework="jax", device="cpu", mode="compiled", repeats=1, timeout_s=300, suite="census")
    run_id = run(spec, paths, log=lambda message: None)
    results = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pandas()
    by_subtest = results.set_index("subtest")
    limit = committed("harnesses")["compiled"]["max_samples"]
    gather = by_subtest.loc["test_entry[gather-float32]"]
    assert (gather["outcome"], gather["oracle"], gather["samples"], gather["execution"]) == (
        "passed",
        "eager",
        limit,
        "compiled",
    )
    assert gather["max_abs_error"] == 0.0  # a gather moves values: jit and eager agree exactly
    sqrt = by_subtest.loc["test_entry[sqrt-float32]"]
    assert (sqrt["oracle"], sqrt["samples"], sqrt["execution"]) == ("numpy", limit, "compiled")
