"""The TensorFlow census (issue 21): its two manifests are what NumPy and the reviewed mapping give
on the installed wheel, a mapping row that names what does not exist is refused with its file and
row, and entries run through the real runner and harness, one subtest per entry x dtype, judged
by the oracle's tolerance policy in eager mode and under tf.function(jit_compile=True).

The full harvest runs NumPy and every reference on every generator input (minutes): these tests
check its parts on a few entries against the committed manifests instead."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from portability_data.pipeline.frameworks.manifest import HarvestError
from portability_data.pipeline.frameworks.namesakes import accepted_kinds
from portability_data.pipeline.frameworks.tensorflow.census import (
    checked_records,
    load_mapped_module,
    mapped_manifest,
    public_tf_names,
    read_mapping,
    summary_lines,
)
from portability_data.runner.census_rows import census_rows
from portability_data.tables.tableio import read_table
from tests.conftest import REPO_ROOT, census_checkout, census_results

CENSUS = REPO_ROOT / "cases" / "tensorflow" / "census"
API = REPO_ROOT / "data" / "api" / "api.parquet"


def committed(origin: str) -> dict:
    return yaml.safe_load((CENSUS / f"{origin}.yaml").read_text())


def census_params() -> dict:
    return yaml.safe_load((REPO_ROOT / "params.yaml").read_text())["census"]


def test_the_tnp_manifest_says_what_numpy_takes() -> None:
    """Every tf.experimental.numpy function of the api table is an entry or listed with its
    reason; the arity and kinds of a few are what NumPy does with the generator's inputs today."""
    import tensorflow as tf

    manifest = committed("tnp")
    public = public_tf_names(read_table("api", API), tf.__version__)
    prefix = "tensorflow.experimental.numpy."
    names = {q.removeprefix(prefix) for q in public if q.startswith(prefix)}
    listed = [e["entry"] for e in manifest["entries"]] + [u["entry"] for u in manifest["unmapped"]]
    assert sorted(listed) == sorted(names)
    assert {u["reason"] for u in manifest["unmapped"]} <= {
        "random",
        "no_numpy_namesake",
        "io",
        "global_state",
        "undefined_values",
        "numpy_rejects_inputs",
        "numpy_timeout",
    }
    by_entry = {e["entry"]: e for e in manifest["entries"]}
    for name in ("add", "sqrt", "matmul", "outer"):
        arity, kinds, _ = accepted_kinds(name)
        assert (arity, kinds) == (by_entry[name]["arity"], by_entry[name]["kinds"]), name
    assert by_entry["add"]["function"] == "tensorflow.experimental.numpy.add"
    assert by_entry["add"]["case_id"] == "tensorflow.census.tnp.add"
    assert "large" not in by_entry["outer"]["kinds"]["float32"]  # 1e12 elements: never tried
    assert manifest["numpy_behavior"] is True and manifest["prefer_float32"] is False


def test_the_mapped_manifest_is_what_the_mapping_gives() -> None:
    """Every function of the mapping's modules is in the manifest once (an entry or unmapped with
    the mapping's reason, its other spellings as aliases); a few entries' kinds are what their
    reference accepts through the adapter today."""
    import tensorflow as tf

    manifest = committed("mapped")
    mapping = read_mapping(CENSUS / "mapping.yml")
    module = load_mapped_module(CENSUS / "test_mapped.py")
    public = public_tf_names(read_table("api", API), tf.__version__)
    mapped, unmapped = checked_records(mapping, CENSUS / "mapping.yml", public, module)
    rejected = {u["function"] for u in manifest["unmapped"] if u["reason"].startswith("reference_")}
    assert {e["function"] for e in manifest["entries"]} | rejected == {name for name, _, _ in mapped}
    assert [u for u in manifest["unmapped"] if u["function"] not in rejected] == unmapped
    by_entry = {e["entry"]: e for e in manifest["entries"]}
    assert by_entry["math.sin"]["aliases"] == ["tensorflow.sin"]
    assert set(by_entry["math.tanh"]["aliases"]) == {"tensorflow.nn.tanh", "tensorflow.tanh"}
    for name in ("math.sin", "linalg.det", "nn.softmax", "image.rgb_to_yiq", "concat"):
        entry = by_entry[name]
        adapter = module.ADAPTERS[entry["adapter"]]
        arity, kinds, _ = accepted_kinds(
            name,
            module.reference_call(entry),
            (adapter.arity,),
            mapping["mapped"][entry["function"]].get("kinds"),
        )
        assert (arity, kinds) == (entry["arity"], entry["kinds"]), name
    assert by_entry["linalg.det"]["kinds"]["float64"] == ["square"]  # a matrix function: square inputs only
    assert "int8" not in by_entry["math.sigmoid"]["dtypes"]  # the reference refuses what is not floating
    measured = sum(e["function"].startswith("tensorflow.") for e in manifest["entries"])
    assert measured + len(committed("tnp")["entries"]) >= 400  # the target
    lines = summary_lines(manifest)
    assert lines[1].startswith("measured per module: tensorflow ") and "tensorflow.math" in lines[1]


def mapping_folder(root: Path, text: str) -> Path:
    """A census folder holding the real test_mapped.py and the given mapping."""
    root.mkdir(parents=True)
    shutil.copy(CENSUS / "test_mapped.py", root / "test_mapped.py")
    (root / "mapping.yml").write_text(text)
    return root


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "  tensorflow.math.sin: {reference: numpy.sin, adapter: unary}",
            "  tensorflow.math.sin: {reference: numpy.sin, adapter: unary}\n"
            "  tensorflow.math.no_such_function: {reference: numpy.cos, adapter: unary}",
            "mapped record 'tensorflow.math.no_such_function' is not a public function of tensorflow",
        ),
        (
            "  tensorflow.math.sin: {reference: numpy.sin, adapter: unary}",
            "  tensorflow.math.sin: {reference: numpy.sin, adapter: no_such_adapter}",
            "mapped record 'tensorflow.math.sin' names the unknown adapter 'no_such_adapter'",
        ),
        (
            "  tensorflow.math.sin: {reference: numpy.sin, adapter: unary}",
            "  tensorflow.math.sin: {reference: numpy.no_such_reference, adapter: unary}",
            "mapped record 'tensorflow.math.sin' names the unknown reference 'numpy.no_such_reference'",
        ),
        (
            "  tensorflow.math.sin: {reference: numpy.sin, adapter: unary}",
            "  tensorflow.sin: {reference: numpy.sin, adapter: unary}\n"
            "  tensorflow.math.sin: {reference: numpy.sin, adapter: unary}",
            "mapped record 'tensorflow.math.sin' is the function 'tensorflow.sin' already has a record",
        ),
        (
            "  tensorflow.math.sin: {reference: numpy.sin, adapter: unary}\n",
            "",
            "1 function(s) of the mapping's modules have no record (map each or list it with its reason): "
            "tensorflow.math.sin",
        ),
        ("  random: [", "  made_up: [", "unmapped reason 'made_up' is not one of `reasons`"),
    ],
    ids=["unknown_function", "unknown_adapter", "unknown_reference", "two_records", "no_record", "reason"],
)
def test_a_bad_mapping_row_is_refused_with_its_file_and_row(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    text = (CENSUS / "mapping.yml").read_text()
    assert old in text
    folder = mapping_folder(tmp_path / "census", text.replace(old, new, 1))
    with pytest.raises(HarvestError) as refused:
        mapped_manifest(read_table("api", API), census_params(), folder)
    assert str(refused.value).startswith(f"{folder / 'mapping.yml'}: ")
    assert message in str(refused.value)


def test_census_rows_name_one_node_per_entry_and_dtype() -> None:
    rows = census_rows(REPO_ROOT / "cases", REPO_ROOT, "tensorflow")
    census = [r for r in rows if r["case_id"].startswith("tensorflow.census.")]
    origins = ("tnp", "mapped", "nn")
    assert len(census) == sum(len(committed(origin)["entries"]) for origin in origins)
    assert sum(r["origin"] == "nn" for r in census) == len(committed("nn")["entries"]) > 0
    sin = next(r for r in census if r["case_id"] == "tensorflow.census.mapped.math.sin")
    assert (sin["function"], sin["origin"]) == ("tensorflow.math.sin", "mapped")
    assert "cases/tensorflow/census/test_mapped.py::test_entry[math.sin-float32]" in sin["select"]
    add = next(r for r in census if r["case_id"] == "tensorflow.census.tnp.add")
    assert add["function"] == "tensorflow.experimental.numpy.add"


def census_repo(root: Path, tnp: dict[str, list[str]], mapped: dict[str, list[str]]) -> Path:
    """A scratch checkout with the tensorflow census cut down to the given entries and dtypes."""
    return census_checkout(root, "tensorflow", {"tnp": tnp, "mapped": mapped})


def run_census(root: Path, mode: str) -> pd.DataFrame:
    return census_results(root, "tensorflow", mode)


def test_an_eager_census_run_measures_each_pair(tmp_path: Path) -> None:
    """Real TensorFlow, real runner: tnp's add matches NumPy on every input kind; tnp's sqrt of
    int32 computes in float64 as NumPy's does (NumPy behaviour, prefer_float32 off); tf.math.sin
    and tf.linalg.det match NumPy on its inputs; tf.math.acos has no int32 kernel (a confirmed
    failure with TensorFlow's own error, every sample failed)."""
    root = census_repo(
        tmp_path / "repo",
        {"add": ["float32", "int8"], "sqrt": ["int32"]},
        {"math.sin": ["float32"], "math.acos": ["int32"], "linalg.det": ["float64"]},
    )
    by_subtest = run_census(root, "eager")
    assert set(by_subtest.index) == {
        "test_entry[add-float32]",
        "test_entry[add-int8]",
        "test_entry[sqrt-int32]",
        "test_entry[math.sin-float32]",
        "test_entry[math.acos-int32]",
        "test_entry[linalg.det-float64]",
    }
    tnp_kinds = {e["entry"]: e["kinds"] for e in committed("tnp")["entries"]}
    for dtype in ("float32", "int8"):
        add = by_subtest.loc[f"test_entry[add-{dtype}]"]
        assert (add["outcome"], add["oracle"], add["samples_failed"]) == ("passed", "numpy", 0), dtype
        assert add["samples"] == len(tnp_kinds["add"][dtype]) == len(add["op_latencies_ms"])
        assert add["case_id"] == "tensorflow.census.tnp.add"
    assert by_subtest.loc["test_entry[add-int8]", "max_abs_error"] == 0.0
    sqrt = by_subtest.loc["test_entry[sqrt-int32]"]
    assert (sqrt["outcome"], sqrt["oracle"], sqrt["samples_failed"]) == ("passed", "numpy", 0)
    assert sqrt["max_abs_error"] == 0.0  # one correctly rounded operation in float64
    dtypes = ["result_dtype", "oracle_dtype", "dtype_mismatches"]
    assert tuple(sqrt[dtypes]) == ("float64", "float64", 0)  # NumPy's promotion, as tnp claims
    assert tuple(by_subtest.loc["test_entry[add-int8]", dtypes]) == ("int8", "int8", 0)
    assert by_subtest.loc["test_entry[math.sin-float32]", dtypes].isna().all()  # mapped: not recorded
    sin = by_subtest.loc["test_entry[math.sin-float32]"]
    assert (sin["outcome"], sin["oracle"], sin["samples_failed"]) == ("passed", "numpy", 0)
    assert sin["max_abs_error"] < 1e-5 and sin["case_id"] == "tensorflow.census.mapped.math.sin"
    det = by_subtest.loc["test_entry[linalg.det-float64]"]
    assert (det["outcome"], det["oracle"], det["samples"]) == ("passed", "numpy", 1)
    assert det["max_rel_error"] < 1e-12
    acos = by_subtest.loc["test_entry[math.acos-int32]"]
    assert (acos["outcome"], acos["error_type"], acos["confirmation"]) == (
        "failed",
        "InvalidArgumentError",
        "confirmed",
    )
    assert acos["samples_failed"] == acos["samples"] > 0
    # the census conftest reports failures in Python's own format (no TensorFlow source parsed
    # per failure); the row's error above comes from the exception, not from the report
    (log,) = (root / "data" / ".journal").glob("*.log")
    worker_output = log.read_text(errors="replace")
    assert "Traceback (most recent call last)" in worker_output
    assert "def test_entry(" not in worker_output  # what the default (long) report would show


def test_the_compiled_census_runs_each_sample_under_xla(tmp_path: Path) -> None:
    """Compiled mode runs the manifest's compiled dtypes and first samples only, every sample
    through tf.function(jit_compile=True) (execution recorded), judged against the same reference."""
    root = census_repo(
        tmp_path / "repo", {"add": ["float32"]}, {"math.sin": ["float32"], "nn.softmax": ["float32"]}
    )
    by_subtest = run_census(root, "compiled")
    limit = committed("tnp")["compiled"]["max_samples"]
    for subtest, oracle in (
        ("test_entry[add-float32]", "numpy"),
        ("test_entry[math.sin-float32]", "numpy"),
        ("test_entry[nn.softmax-float32]", "reference"),
    ):
        row = by_subtest.loc[subtest]
        assert (row["outcome"], row["oracle"], row["execution"]) == ("passed", oracle, "compiled"), subtest
        assert row["samples"] <= limit and row["samples_failed"] == 0, subtest
        assert row["max_abs_error"] < 1e-5, subtest
    assert by_subtest.loc["test_entry[add-float32]", "samples"] == limit


def test_declared_support_is_read_from_the_kernel_registry(tmp_path: Path) -> None:
    """The wheel's kernel registry, per census entry and dtype, for its CPU kernels (cpu) and the
    XLA kernels of the compiled mode (xla_cpu): sin has both; acos's op definition takes no int32
    (refused while tracing, on every device); bessel_i0 has a CPU kernel and no XLA one; rfftnd has
    no CPU kernel in this wheel at all (GPU only)."""
    from portability_data.pipeline.frameworks.tensorflow.declared import tf_declared_rows

    wanted = {
        "tnp": {"add": ["float32"]},
        "mapped": {
            "math.sin": ["float32"],
            "math.acos": ["int32"],
            "math.bessel_i0": ["float32"],
            "signal.rfftnd": ["float32"],
        },
    }
    folder = census_checkout(tmp_path, "tensorflow", wanted) / "cases" / "tensorflow" / "census"
    rows = tf_declared_rows(read_table("api", API), folder)
    schema = yaml.safe_load((REPO_ROOT / "schemas" / "declared.yaml").read_text())
    assert list(rows.columns) == list(schema["columns"])
    declared = {
        (r.entry, r.device_type): (r.declared, None if pd.isna(r.reason) else r.reason)
        for r in rows.itertuples()
    }
    assert len(declared) == len(rows) == 10
    assert declared[("add", "cpu")] == declared[("add", "xla_cpu")] == ("supported_dtype", None)
    assert declared[("math.sin", "cpu")] == declared[("math.sin", "xla_cpu")] == ("supported_dtype", None)
    for device_type in ("cpu", "xla_cpu"):
        verdict, reason = declared[("math.acos", device_type)]
        assert verdict == "unsupported_dtype" and "op definition refuses" in reason and "int32" in reason
    assert declared[("math.bessel_i0", "cpu")] == ("supported_dtype", None)
    assert declared[("math.bessel_i0", "xla_cpu")] == (
        "unsupported_dtype",
        "no XLA_CPU_JIT kernel for BesselI0[T=float32]",
    )
    verdict, reason = declared[("signal.rfftnd", "cpu")]
    assert verdict == "unsupported_dtype" and reason.startswith("no CPU kernel for RFFTND[")
    assert set(rows["origin"]) == {"tnp", "mapped"} and set(rows["framework"]) == {"tensorflow"}
    sin = rows[rows["entry"] == "math.sin"].iloc[0]
    assert sin["function"] == "tensorflow.math.sin" and sin["source"].endswith("traced on edge float32")


def test_the_declared_stage_names_a_malformed_manifest(tmp_path: Path) -> None:
    """The declared stage reads TensorFlow's census manifests (cases/tensorflow/census/) as the
    runner does: a malformed one is named with the fix (the CLI prints it, exit 2), not a
    traceback of the YAML parser."""
    from portability_data.pipeline.frameworks.tensorflow.declared import tf_declared_rows
    from portability_data.runner.census_rows import CensusManifestError

    wanted = {"tnp": {"add": ["float32"]}, "mapped": {"math.sin": ["float32"]}}
    folder = census_checkout(tmp_path, "tensorflow", wanted) / "cases" / "tensorflow" / "census"
    (folder / "tnp.yaml").write_text("manifest_version: 1\nentries: [unclosed\n")
    named = r"(?s)tnp\.yaml: cannot read the census manifest .*census-harvest"
    with pytest.raises(CensusManifestError, match=named):
        tf_declared_rows(read_table("api", API), folder)


def test_tf_compiled_mode_is_held_to_what_xla_cpu_registers() -> None:
    """tf.function(jit_compile=True) runs XLA's CPU kernels: its pairs are set beside the XLA_CPU_JIT
    registrations, eager ones beside the CPU kernels; other frameworks keep their device names."""
    from portability_data.pipeline.support_matrix import declared_device_type

    assert declared_device_type("tensorflow", "cpu", "compiled") == "xla_cpu"
    assert declared_device_type("tensorflow", "cpu", "eager") == "cpu"
    assert declared_device_type("torch", "gpu", "compiled") == "cuda"
    assert declared_device_type("jax", "tpu", "eager") == "tpu"
