"""The declared table, harvested from the real installed torch wheel: declarations read in the wheel's
source appear as rows, every row keeps the contract, names map to the api table, and whatever cannot
be read or mapped is kept (with why), never dropped and never a crash."""

from __future__ import annotations

import pickle
import sys
import textwrap
import unittest
from pathlib import Path
from types import SimpleNamespace

import jax
import pandas as pd
import pytest
import torch

from portability_data.pipeline.api_names import public_names
from portability_data.pipeline.declared import (
    DeclaredError,
    HarvestSummary,
)
from portability_data.pipeline.frameworks.torch.databases import declaration_rows, read_decorator
from portability_data.pipeline.frameworks.torch.entries import EntryRef
from portability_data.pipeline.frameworks.torch.mps import mps_rows
from portability_data.tables.contracts import DECLARED_KINDS, arrow_schema
from portability_data.tables.tableio import TableValidationError, read_table, to_arrow, validate, write_table
from tests import beside
from tests.conftest import REPO_ROOT

API_TABLE = REPO_ROOT / "data" / "api" / "api.parquet"
REF = EntryRef("opinfo", "abs", None, "torch.abs", None)


@pytest.fixture(scope="module")
def api() -> pd.DataFrame:
    return read_table("api", API_TABLE)


def harvest_job(folder: Path) -> beside.Job:
    """One harvest of the installed wheels (imports op_db, traces TensorFlow's ops: ~20 s), pickled."""
    code = (
        "import pickle\n"
        "from portability_data.pipeline.declared import harvest_declared\n"
        "from portability_data.tables.tableio import read_table\n"
        f"found = harvest_declared(read_table('api', {str(API_TABLE)!r}))\n"
        f"with open({str(folder / 'harvest.pickle')!r}, 'wb') as out:\n"
        "    pickle.dump(found, out)\n"
    )
    return beside.Job([[sys.executable, "-c", code]], cwd=REPO_ROOT)


BESIDE = {"declared-harvest": (harvest_job, ["harvest"])}


@pytest.fixture(scope="module")
def harvest(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, HarvestSummary]:
    """One harvest of the installed wheels for the whole module, made beside the suite."""
    done = beside.finished("declared-harvest", harvest_job, tmp_path_factory.mktemp("harvest"))
    assert done.returncode == 0, f"the harvest failed:\n{done.stderr[-3000:]}"
    with (done.folder / "harvest.pickle").open("rb") as pickled:
        found: tuple[pd.DataFrame, HarvestSummary] = pickle.load(pickled)
    return found


@pytest.fixture(scope="module")
def declared(harvest: tuple[pd.DataFrame, HarvestSummary]) -> pd.DataFrame:
    return harvest[0]


def _rows(frame: pd.DataFrame, **where: object) -> pd.DataFrame:
    """The rows whose columns equal `where` (None: null)."""
    mask = pd.Series(True, index=frame.index)
    for column, value in where.items():
        mask &= frame[column].isna() if value is None else (frame[column] == value).fillna(False)
    return frame[mask]


def _complete(rows: list[dict]) -> pd.DataFrame:
    """Rows of declaration_rows/mps_rows as a typed table frame, as write_table converts them (the
    harvest adds the two framework columns)."""
    frame = pd.DataFrame(rows)
    frame.insert(0, "framework_version", "2.13.0")
    frame.insert(0, "framework", "torch")
    return to_arrow("declared", frame[arrow_schema("declared").names]).to_pandas(types_mapper=pd.ArrowDtype)


# --------------------------------------------------------------------------- the real wheel


def test_every_row_keeps_the_contract_and_survives_a_write(declared: pd.DataFrame, tmp_path: Path) -> None:
    assert list(declared.columns) == arrow_schema("declared").names
    validate("declared", declared)
    assert to_arrow("declared", declared).num_rows == len(declared)
    assert set(declared["declared"]) <= set(DECLARED_KINDS)
    versions = declared.groupby("framework")["framework_version"].unique().map(set).to_dict()
    import tensorflow as tf

    assert versions == {
        "torch": {torch.__version__},
        "jax": {jax.__version__},
        "tensorflow": {tf.__version__},
    }
    path = write_table("declared", declared, tmp_path / "declared.parquet")
    pd.testing.assert_frame_equal(read_table("declared", path), declared)


def test_a_cuda_expected_failure_with_dtypes_of_an_opinfo(declared: pd.DataFrame) -> None:
    # common_methods_invocations.py:15039, OpInfo('logspace', skips=(...)):
    #   DecorateInfo(unittest.expectedFailure, 'TestDecomp', 'test_quick',
    #                dtypes=(torch.int16, torch.int32, torch.int64), device_type="cuda")
    rows = _rows(declared, origin="opinfo", entry="logspace", variant=None, test_name="test_quick")
    assert set(rows["dtype"]) == {"int16", "int32", "int64"}
    assert set(rows["declared"]) == {"expected_failure"}
    assert set(rows["device_type"]) == {"cuda"}
    assert set(rows["test_class"]) == {"TestDecomp"}
    assert set(rows["function"]) == {"torch.logspace"}
    assert rows["source"].str.match(r"^common_methods_invocations\.py:op_db\[\d+\]\.decorators\[\d+\]").all()


def test_supported_and_unsupported_dtypes_per_device_type(declared: pd.DataFrame) -> None:
    # common_methods_invocations.py:15016-15021: OpInfo('logspace',
    #   dtypes=all_types_and_complex_and(torch.half, torch.bfloat16),
    #   dtypesIfHpu=custom_types(torch.float32, torch.bfloat16), ..., supports_autograd=False)
    logspace = _rows(declared, origin="opinfo", entry="logspace", variant=None, aspect="forward")
    hpu = _rows(logspace, device_type="hpu")
    assert set(_rows(hpu, declared="supported_dtype")["dtype"]) == {"float32", "bfloat16"}
    assert "float16" in set(_rows(hpu, declared="unsupported_dtype")["dtype"])
    cpu = _rows(logspace, device_type="cpu", declared="supported_dtype")
    assert {"float16", "bfloat16", "int64", "complex64"} <= set(cpu["dtype"])
    assert "bool" in set(_rows(logspace, device_type="cpu", declared="unsupported_dtype")["dtype"])
    backward = _rows(declared, origin="opinfo", entry="logspace", variant=None, aspect="backward")
    assert set(backward["declared"]) == {"unsupported_dtype"}
    assert set(backward["reason"]) == {"the entry does not support autograd"}


def test_a_module_expected_failure_on_mps(declared: pd.DataFrame) -> None:
    # common_modules.py:4452, ModuleInfo(torch.nn.Bilinear, skips=(...)):
    #   DecorateInfo(unittest.expectedFailure, "TestModule", "test_forward",
    #                device_type='mps', dtypes=[torch.float16])
    rows = _rows(declared, origin="module", entry="nn.Bilinear", declared="expected_failure")
    assert rows[["function", "device_type", "dtype", "test_class", "test_name"]].values.tolist() == [
        ["torch.nn.Bilinear", "mps", "float16", "TestModule", "test_forward"]
    ]


def test_an_optimizer_skip_keeps_its_reason_and_its_per_test_condition(declared: pd.DataFrame) -> None:
    # common_optimizers.py:1470, OptimizerInfo(Adafactor, skips=(...)):
    #   DecorateInfo(unittest.skip("See #133268 regarding dtype being None"),
    #                "CompiledOptimizerParityTests", "test_correctness", device_type="cuda",
    #                active_if=lambda kwargs: kwargs.get("use_closure", False))
    rows = _rows(
        declared, origin="optimizer", entry="Adafactor", device_type="cuda", test_name="test_correctness"
    )
    assert len(rows) == 1
    row = rows.iloc[0]
    assert (row["function"], row["declared"]) == ("torch.optim.Adafactor", "skip")
    assert row["reason"] == "See #133268 regarding dtype being None"
    assert pd.isna(row["active"])  # a callable active_if: decided per test, not here


def test_mps_lists_are_read_from_the_file_with_their_comments(declared: pd.DataFrame) -> None:
    # common_mps.py:624-626 (mps_ops_modifier, UNIMPLEMENTED_XFAILLIST):
    #   # Convolution for integral types is not supported on MPS
    #   "nn.functional.conv1d": [torch.int64],
    #   "nn.functional.conv2d": [torch.int64],
    mps = _rows(declared, origin="mps_list", device_type="mps")
    conv2d = mps[
        mps["source"] == "common_mps.py:626:mps_ops_modifier.UNIMPLEMENTED_XFAILLIST['nn.functional.conv2d']"
    ]
    assert conv2d[["function", "dtype", "declared", "aspect"]].values.tolist() == [
        ["torch.nn.functional.conv2d", "int64", "expected_failure", "forward"]
    ]
    conv1d = _rows(mps, entry="nn.functional.conv1d", dtype="int64", declared="expected_failure")
    assert conv1d["reason"].str.contains("Convolution for integral types is not supported on MPS").any()
    # common_mps.py:348: "linalg.eig": None -> every dtype
    eig = mps[mps["source"] == "common_mps.py:348:mps_ops_modifier.UNIMPLEMENTED_XFAILLIST['linalg.eig']"]
    assert len(eig) == 1 and pd.isna(eig.iloc[0]["dtype"])
    # common_mps.py:793-799: every op gets DecorateInfo(unittest.expectedFailure, dtypes=[double, cdouble])
    blanket = _rows(mps, entry="abs", variant=None, source="common_mps.py:793:mps_ops_modifier")
    assert set(blanket["dtype"]) == {"float64", "complex128"}


def test_mapped_functions_exist_in_the_api_table(declared: pd.DataFrame, api: pd.DataFrame) -> None:
    public = set(api.loc[api["framework"] == "torch", "qualified_name"])
    mapped = set(declared.loc[declared["framework"] == "torch", "function"].dropna())
    assert mapped and mapped <= public
    entries = declared.drop_duplicates(["origin", "entry", "variant"]).set_index(["origin", "entry"])
    expected = {
        ("opinfo", "nn.functional.conv2d"): "torch.nn.functional.conv2d",
        ("opinfo", "linalg.svd"): "torch.linalg.svd",
        ("opinfo", "add"): "torch.add",
        ("opinfo", "byte"): "torch.Tensor.byte",  # method only: torch.byte is a dtype
        ("opinfo", "uniform"): "torch.Tensor.uniform_",  # in-place only
        ("module", "nn.Conv2d"): "torch.nn.Conv2d",
        ("optimizer", "Adam"): "torch.optim.Adam",
    }
    for key, function in expected.items():
        assert entries.loc[key, "function"] == function, key


def test_every_entry_is_kept_and_unmapped_ones_say_why(declared: pd.DataFrame) -> None:
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_modules import module_db
    from torch.testing._internal.common_optimizers import optim_db

    def entries(origin: str) -> set[tuple[str, str]]:
        rows = declared[declared["origin"] == origin]
        return set(zip(rows["entry"], rows["variant"].fillna(""), strict=True))

    assert entries("opinfo") == {(op.name, op.variant_test_name) for op in op_db}
    assert entries("module") == {(info.name, "") for info in module_db}
    assert entries("optimizer") == {(info.name, "") for info in optim_db if info.decorators}
    unmapped = declared[declared["function"].isna()].drop_duplicates(["origin", "entry", "variant"])
    reasons = dict(zip(unmapped.loc[unmapped["origin"] == "opinfo", "entry"], unmapped["unmapped_reason"]))
    assert reasons["__radd__"] == "private_name"  # a dunder: no public name
    assert reasons["T"] == "not_in_api"  # a property: the api table lists no properties
    assert declared["unmapped_reason"].notna().equals(declared["function"].isna())


def test_a_malformed_decorate_info_in_the_wheel_is_kept_as_unknown(declared: pd.DataFrame) -> None:
    # opinfo/definitions/_masked.py:557, ReductionOpInfo("masked.prod", skips=(...)):
    #   DecorateInfo("TestReductions", "test_ref_small_input", dtypes=(torch.int8, torch.int16, torch.int32))
    # names no decorator: DecorateInfo splits the string into letters and shifts the test names.
    rows = _rows(declared, origin="opinfo", entry="masked.prod", declared="unknown")
    assert set(rows["dtype"]) == {"int8", "int16", "int32"}
    assert rows["reason"].str.contains("TestReductions").all()
    assert rows["active"].isna().all()


def test_the_summary_counts_what_the_table_holds(harvest: tuple[pd.DataFrame, HarvestSummary]) -> None:
    frame, summary = harvest
    assert summary.rows == len(frame)
    assert sum(summary.declared.values()) == len(frame)
    assert summary.entries["optimizer"] == frame.loc[frame["origin"] == "optimizer", "entry"].nunique()
    assert any(line.startswith("entries without a public function: ") for line in summary.report())


def test_jax_harness_limitations_are_rows_beside_torchs(declared: pd.DataFrame, api: pd.DataFrame) -> None:
    """JAX's harnesses declare scatter_add on bool unimplemented on cpu, gpu and tpu (every harness
    of that dtype: unsupported); sin on float32 carries no limitation (supported on all three);
    a disabled limitation (scatter on bool) is a row with active false; JAX's device names stay."""
    jax_rows = declared[declared["framework"] == "jax"]
    assert set(jax_rows["origin"]) == {"harnesses"}
    assert set(jax_rows["device_type"]) == {"cpu", "gpu", "tpu"}
    unsupported = _rows(jax_rows, entry="scatter_add", dtype="bool", declared="unsupported_dtype")
    assert set(unsupported["device_type"]) == {"cpu", "gpu", "tpu"}
    assert unsupported["reason"].str.contains("unimplemented").all()
    assert set(_rows(jax_rows, entry="sin", dtype="float32")["declared"]) == {"supported_dtype"}
    disabled = _rows(jax_rows, entry="scatter", dtype="bool", device_type="cpu", declared="expected_failure")
    assert disabled["active"].tolist() == [False]
    public = set(api.loc[api["framework"] == "jax", "qualified_name"])
    assert set(jax_rows["function"].dropna()) <= public and "jax.lax.scatter_add" in set(jax_rows["function"])
    private = jax_rows.drop_duplicates("entry").set_index("entry")
    assert private.loc["add_any", "unmapped_reason"] == "private_name"


# --------------------------------------------------------------------------- what cannot be read


def test_a_decorator_of_an_unknown_kind_is_recorded_not_dropped() -> None:
    def custom_decorator(fn: object) -> object:
        return fn

    decorate_info_like = SimpleNamespace(
        decorators=[object(), custom_decorator, unittest.expectedFailure],
        cls_name="TestX",
        test_name="test_y",
        device_type="cuda",
        dtypes=(torch.float32,),
        active_if=True,
    )
    rows = declaration_rows(REF, decorate_info_like, "somewhere.py:db[0].decorators[0]")
    frame = _complete(rows)
    validate("declared", frame)
    assert frame["declared"].tolist() == ["unknown", "unknown", "expected_failure"]
    assert frame["reason"].iloc[0].startswith("not a decorator: <object object")
    assert (
        "no rule for decorator" in frame["reason"].iloc[1] and "custom_decorator" in frame["reason"].iloc[1]
    )
    assert set(frame["device_type"]) == {"cuda"} and set(frame["dtype"]) == {"float32"}
    assert set(frame["test_class"]) == {"TestX"} and set(frame["test_name"]) == {"test_y"}
    assert frame["source"].tolist() == [f"somewhere.py:db[0].decorators[0].decorators[{i}]" for i in range(3)]


def test_an_unreadable_declaration_is_one_unknown_row() -> None:
    class Broken:
        decorators = (unittest.expectedFailure,)

        @property
        def device_type(self) -> str:
            raise RuntimeError("boom")

    rows = declaration_rows(REF, Broken(), "somewhere.py:db[0].decorators[1]")
    assert len(rows) == 1
    assert rows[0]["declared"] == "unknown" and "RuntimeError: boom" in rows[0]["reason"]
    not_dtypes = SimpleNamespace(
        decorators=[unittest.expectedFailure],
        cls_name=None,
        test_name=None,
        device_type=None,
        dtypes=("float32",),
        active_if=True,
    )
    rows = declaration_rows(REF, not_dtypes, "somewhere.py:db[0].decorators[2]")
    assert [r["declared"] for r in rows] == ["unknown"] and "not a torch.dtype" in rows[0]["reason"]
    validate("declared", _complete(rows))


def test_known_decorators_are_read_with_their_device_and_reason() -> None:
    from torch.testing._internal.common_device_type import skipCUDAIf, tol, toleranceOverride

    assert read_decorator(unittest.skip("because")).reason == "because"
    skip_cuda = read_decorator(skipCUDAIf(True, "no magma"))
    assert (skip_cuda.declared, skip_cuda.device_type, skip_cuda.reason, skip_cuda.active) == (
        "skip",
        "cuda",
        "no magma",
        True,
    )
    override = read_decorator(toleranceOverride({torch.float16: tol(atol=1e-3, rtol=0)}))
    assert override.per_dtype == {"float16": "atol=0.001, rtol=0"}
    # limited by its DecorateInfo to a dtype it has no tolerance for: kept, as unknown
    nowhere = SimpleNamespace(
        decorators=[toleranceOverride({torch.float16: tol(atol=1e-3, rtol=0)})],
        cls_name=None,
        test_name=None,
        device_type="cpu",
        dtypes=(torch.float32,),
        active_if=True,
    )
    rows = declaration_rows(REF, nowhere, "somewhere.py:db[0].decorators[3]")
    assert [(r["declared"], r["dtype"]) for r in rows] == [("unknown", None)]
    assert rows[0]["reason"] == "tolerance_override for ['float16'] limited to ['float32']"
    assert read_decorator(unittest.skipIf(False, "never here")).active is False


def test_an_unknown_mps_list_and_a_non_literal_value_are_recorded(api: pd.DataFrame) -> None:
    source = textwrap.dedent(
        """
        def mps_ops_modifier(ops):
            UNIMPLEMENTED_XFAILLIST = {
                # needs a kernel
                "abs": [torch.float32],
                "add": SOME_DTYPES,
            }
            BRAND_NEW_XFAILLIST = {"abs": None}
            return ops
        """
    )
    public = public_names(api, "torch", torch.__version__)
    abs_ref = EntryRef("opinfo", "abs", None, "torch.abs", None)
    rows = list(mps_rows(source, {"abs": abs_ref}, public))
    frame = _complete(rows)
    validate("declared", frame)
    by_entry = {(r["entry"], r["declared"]): r for r in rows}
    known = by_entry[("abs", "expected_failure")]
    assert (known["origin"], known["dtype"], known["device_type"]) == ("mps_list", "float32", "mps")
    assert known["reason"] == "UNIMPLEMENTED_XFAILLIST: not implemented on MPS (needs a kernel)"
    assert "SOME_DTYPES" in by_entry[("add", "unknown")]["reason"]
    assert by_entry[("add", "unknown")]["function"] == "torch.add"  # a key outside op_db maps by name
    assert "BRAND_NEW_XFAILLIST" in by_entry[("abs", "unknown")]["reason"]


def test_a_stale_or_missing_api_table_is_refused(api: pd.DataFrame, tmp_path: Path) -> None:
    with pytest.raises(DeclaredError, match="re-run `portability enumerate`"):
        public_names(api, "torch", "0.0.1", DeclaredError)
    with pytest.raises(DeclaredError, match="no torch rows"):
        public_names(api[api["framework"] != "torch"], "torch", torch.__version__, DeclaredError)
    from portability_data.cli import main

    with pytest.raises(SystemExit, match="not found; run `portability enumerate` first"):
        main(["declared", "--api", str(tmp_path / "missing.parquet"), "--out", str(tmp_path / "d.parquet")])
    assert not (tmp_path / "d.parquet").exists()


def test_a_row_that_breaks_the_contract_is_refused() -> None:
    row = declaration_rows(REF, unittest.expectedFailure, "somewhere.py:db[0].decorators[0]")[0]
    frame = _complete([{**row, "declared": "broken"}, {**row, "function": None}])
    with pytest.raises(TableValidationError) as caught:
        validate("declared", frame)
    assert "declared" in str(caught.value) and "exactly one of them is set" in str(caught.value)
