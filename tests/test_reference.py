"""The study importer and the failure classifier: rules on a miniature copy of the study's raw layout
(hand-written files, expectations computed by hand), the classifier on real error texts from the
study's failure reports, and the real import where the study's data is present."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from portability_data.pipeline.aggregate.build import aggregate
from portability_data.pipeline.reference import (
    REPORT_COVERAGE,
    build_reference,
    find_run_sets,
    import_reference,
    qualified,
    strip_device_token,
)
from portability_data.runner.failures import classify_failure
from portability_data.tables.tableio import read_table

REFERENCE_DIR = Path(__file__).resolve().parents[2] / "shared" / "reference" / "mince2023"


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("test_diag_cuda_bool", ("test_diag_bool", "gpu")),
        ("test_diag_xla_bool", ("test_diag_bool", "tpu")),
        ("test_adamax_cpu", ("test_adamax", "cpu")),
        ("test_batchnorm_nhwc_cuda_cpu", ("test_batchnorm_nhwc_cuda", "cpu")),
        (
            "test_batchnorm_nonaffine_cuda_half_input_cuda",
            ("test_batchnorm_nonaffine_cuda_half_input", "gpu"),
        ),
        ("test_triangular_solve_cpu_complex128", ("test_triangular_solve_complex128", "cpu")),
        ("test_copy_streams", ("test_copy_streams", None)),
    ],
)
def test_device_token_is_the_last_one_and_the_dtype_stays(
    name: str, expected: tuple[str, str | None]
) -> None:
    assert strip_device_token(name) == expected


def test_tf_prefix_is_spelled_as_the_module() -> None:
    assert qualified("tf.linalg.svd") == "tensorflow.linalg.svd"
    assert qualified("torch.argsort") == "torch.argsort"


# --------------------------------------------------------------------------- classifier

# Error texts as they stand in the study's failure reports (crash type, first part of the message).
REAL_ERRORS = [
    (
        "jax",
        "TypeError",
        "partial_timed() takes 1 positional argument but 3 were given",
        "harness",
        "harness_partial_timed",
    ),
    (
        "jax",
        "NotImplementedError",
        "Nonsymmetric eigendecomposition is only implemented on the CPU backend. If "
        "your matrix is symmetric or Hermitian, you should use eigh instead.",
        "not_implemented",
        "jax_backend_only",
    ),
    (
        "torch",
        "RuntimeError",
        "\"smooth_l1_cuda\" not implemented for 'BFloat16'",
        "type_failure",
        "torch_dtype_not_implemented",
    ),
    (
        "torch",
        "AssertionError",
        "The values for attribute 'dtype' do not match: torch.float32 != torch.float64.",
        "type_failure",
        "torch_dtype_mismatch",
    ),
    (
        "torch",
        "RuntimeError",
        "Error while lowering: [] aten::isnan\nXLA builder error: INVALID_ARGUMENT: "
        "Operands to IsNan must be real-valued floating-point, but got C64: ",
        "type_failure",
        "torch_xla_operand_type",
    ),
    (
        "torch",
        "NotImplementedError",
        "Could not run 'aten::_pin_memory' with arguments from the 'CPU' backend.",
        "memory",
        "memory_pinned",
    ),
    (
        "torch",
        "NotImplementedError",
        "Could not run 'quantized::group_norm' with arguments from the 'QuantizedCUDA' backend.",
        "not_implemented",
        "torch_no_backend_kernel",
    ),
    (
        "torch",
        "NotImplementedError",
        "Unsupported device type for sparse layout: xla",
        "not_implemented",
        "torch_unsupported_device",
    ),
    ("torch", "RuntimeError", "NYI: CUDA sspaddmm is not implemented", "not_implemented", "torch_nyi"),
    ("torch", "OSError", "[Errno 12] Cannot allocate memory", "memory", "memory_alloc"),
    ("torch", "Failed", "Timeout >1020.0s", "timeout", "timeout_pytest"),
    (
        "torch",
        "AssertionError",
        "Tensor-likes are not close!\n\nMismatched elements: 117 / 2500 (4.7%)",
        "float_precision",
        "torch_not_close",
    ),
    (
        "torch",
        "GradcheckError",
        "Jacobian mismatch for output 0 with respect to input 0,",
        "float_precision",
        "torch_gradcheck",
    ),
    ("torch", "NameError", "name 'stats' is not defined", "other", "test_name_error"),
    ("torch", "AssertionError", "RuntimeError not raised", "other", "dropped_check"),
    (
        "tensorflow",
        "tensorflow.python.framework.errors_impl.InvalidArgumentError",
        "Could not satisfy device specification '/job:localhost/replica:0/task:0/device:TPU:0'. "
        "enable_soft_placement=0. Supported device types [CPU].",
        "not_implemented",
        "tf_no_kernel_placement",
    ),
    (
        "tensorflow",
        "InvalidArgumentError",
        "Graph execution error: ... Cannot assign a device for operation "
        "IsVariableInitialized: Could not satisfy explicit device specification '/device:TPU:0'",
        "not_implemented",
        "tf_no_kernel_placement",
    ),
    (
        "tensorflow",
        "InvalidArgumentError",
        "Failed copying input tensor from /job:localhost/replica:0/task:0/"
        "device:CPU:0 to /job:localhost/replica:0/task:0/device:TPU:0 in order to run _EagerConst: "
        "Element type C128 is not supported on TPU.",
        "type_failure",
        "tf_element_type",
    ),
    (
        "tensorflow",
        "UnimplementedError",
        "{{function_node __wrapped__RandomStandardNormal_device_/job:localhost/"
        "replica:0/task:0/device:TPU:0}} While rewriting computation to not contain X64 element types",
        "type_failure",
        "tf_x64_rewrite",
    ),
    (
        "tensorflow",
        "ResourceExhaustedError",
        "XLA:TPU compile permanent error. Ran out of memory in memory space hbm.",
        "memory",
        "memory_alloc",
    ),
    (
        "tensorflow",
        "_ArrayMemoryError",
        "Unable to allocate 2.33 GiB for an array with shape (2500000000,)",
        "memory",
        "memory_alloc",
    ),
    ("tensorflow", "AssertionError", "0.9921875 not less than 0.005", "float_precision", "tf_not_close"),
    (
        "tensorflow",
        "AssertionError",
        "\nNot equal to tolerance rtol=1e-06, atol=1e-06",
        "float_precision",
        "tf_not_close",
    ),
    (
        "tensorflow",
        "ValueError",
        "The test requires parameters whose arguments were not passed: {'verify_fn'} .",
        "other",
        "test_parameters",
    ),
    ("tensorflow", "AssertionError", "0 != 9128", "other", "wrong_result_values"),
]


@pytest.mark.parametrize(("framework", "error_type", "message", "category", "rule"), REAL_ERRORS)
def test_classifier_on_real_report_texts(
    framework: str, error_type: str, message: str, category: str, rule: str
) -> None:
    assert classify_failure(framework, error_type, message) == (category, rule)


def test_runner_verdicts_decide_before_the_message() -> None:
    assert classify_failure("torch", "", "", outcome="timeout") == ("timeout", "outcome_timeout")
    assert classify_failure("jax", "", "", outcome="memory") == ("memory", "outcome_memory")


# --------------------------------------------------------------------------- miniature study layout


def _write(root: Path, rel: str, payload: Any) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload))


def _test(nodeid: str, outcome: str, message: str | None = None, skip: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"duration": 0.1, "outcome": outcome}
    if message is not None:
        call["crash"] = {"path": "x.py", "lineno": 1, "message": message}
        call["longrepr"] = "E   " + message
    if skip is not None:
        call["longrepr"] = skip
    return {
        "nodeid": nodeid,
        "lineno": 1,
        "outcome": outcome,
        "setup": {"outcome": "passed"},
        "call": call,
        "teardown": {"outcome": "passed"},
    }


def _report(tests: list[dict[str, Any]], python: str = "3.10.9") -> dict[str, Any]:
    return {
        "created": 1.0,
        "duration": 1.0,
        "exitcode": 1,
        "root": "/r",
        "environment": {
            "Python": python,
            "Platform": "Linux-test",
            "Packages": {"pytest": "7.3.1"},
            "Plugins": {"timeout": "2.1.0"},
        },
        "summary": {},
        "collectors": [],
        "tests": tests,
        "warnings": [],
    }


def _op(seconds: list[float], test_time: float = 1.0) -> dict[str, Any]:
    return {"operations": seconds, "test_time": test_time}


TORCH = "src/pytorch_tests_reduced"
TF = "src/tensorflow_tests_reduced"
JAX = "src/jax_tests_reduced"


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A miniature of the study's files: every rule of the importer has one case here."""
    root = tmp_path_factory.mktemp("mince2023")
    _write(
        root,
        "study_function_map.json",
        [
            {
                "framework": "torch",
                "paper_name": "torch.argsort",
                "test_file": "argsort_test.py",
                "qualified_name": "torch.argsort",
                "timed_call": "",
                "in_sample": True,
            },
            {
                "framework": "tensorflow",
                "paper_name": "tf.linalg.svd",
                "test_file": "svd_test.py",
                "qualified_name": "tf.linalg.svd",
                "timed_call": "",
                "in_sample": True,
            },
            {
                "framework": "jax",
                "paper_name": "jax.numpy.cos",
                "test_file": "cos_test.py",
                "qualified_name": "jax.numpy.cos",
                "timed_call": "",
                "in_sample": True,
            },
            {
                "framework": "jax",
                "paper_name": None,
                "test_file": "PRNG_test.py",
                "qualified_name": "jax.random.PRNGKey",
                "timed_call": "",
                "in_sample": False,
            },
        ],
    )
    # PyTorch, T4: the CPU variants sit in the GPU files; one report (same folder) covers both.
    for run, scale in ((1, 1.0), (2, 2.0)):
        _write(
            root,
            f"pytorch_timings/t4_vm/gpu_{run}.json",
            {
                "argsort_test.py:test_sort_cuda": _op([0.001 * scale, 0.003 * scale], 0.5),
                "argsort_test.py:test_sort_cpu": _op([0.002 * scale]),
                "argsort_test.py:test_sort_cuda_bfloat16": _op([]),
                "argsort_test.py:test_copy_streams": _op([0.004]),
                "apply_test.py:test_apply_cuda": _op([0.001]),  # not in the map: left out
            },
        )
    _write(
        root,
        "pytorch_timings/t4_vm/test_failure_report.json",
        _report(
            [
                _test(f"{TORCH}/argsort_test.py::TestSortCPU::test_sort_cpu", "passed"),
                _test(f"{TORCH}/argsort_test.py::TestSortCUDA::test_sort_cuda", "passed"),
                _test(
                    f"{TORCH}/argsort_test.py::TestSortCUDA::test_sort_cuda_bfloat16",
                    "failed",
                    "RuntimeError: \"sort_cuda\" not implemented for 'BFloat16'",
                ),
                _test(
                    f"{TORCH}/argsort_test.py::TestSortCUDA::test_sort_stable_cuda",
                    "skipped",
                    skip="('x.py', 1, 'Skipped: Only runs on cpu')",
                ),
            ]
        ),
    )
    # PyTorch, A100: no report anywhere on the machine -> unknown.
    _write(root, "pytorch_timings/a100_vm/gpu_1.json", {"argsort_test.py:test_sort_cuda": _op([0.001])})
    _write(root, "pytorch_timings/gpu_cpu_vm.json", {"argsort_test.py:test_sort_cuda": _op([9.0])})
    # TensorFlow, T4: the rerun report in gpu/ wins over the machine's older one; a test name in
    # two classes; a timing entry the report lacks; soft placement left out.
    for run in (1, 2):
        _write(
            root,
            f"tensorflow_timings/t4_vm/gpu/gpu_{run}.json",
            {
                "svd_test.py:testSvd": _op([0.010 * run]),
                "svd_test.py:testAxes": _op([0.020]),
                "svd_test.py:testNew": _op([0.030]),
            },
        )
    _write(
        root,
        "tensorflow_timings/t4_vm/gpu/test_failure_report.json",
        _report(
            [
                _test(f"{TF}/svd_test.py::SvdTest::testSvd", "passed"),
                _test(
                    f"{TF}/svd_test.py::MeanTest::testAxes",
                    "failed",
                    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Could not satisfy device "
                    "specification '/job:localhost/replica:0/task:0/device:GPU:0'. enable_soft_placement=0.",
                ),
                _test(f"{TF}/svd_test.py::SumTest::testAxes", "passed"),
            ],
            python="3.10.10",
        ),
    )
    _write(
        root,
        "tensorflow_timings/t4_vm/test_failure_report.json",
        _report(
            [
                _test(f"{TF}/svd_test.py::SvdTest::testSvd", "failed", "AssertionError: stale"),
            ]
        ),
    )
    _write(root, "tensorflow_timings/t4_vm/cpu/cpu_1.json", {"svd_test.py:testSvd": _op([0.5])})
    _write(root, "tensorflow_timings/soft_placement/gpu/gpu_1.json", {"svd_test.py:testSvd": _op([9.0])})
    # JAX: the one report lives on the GPU machine; tpu_vm's top-level copy covers no TPU run.
    jax_report = _report(
        [
            _test(f"{JAX}/cos_test.py::CosTest::testCos0", "passed"),
            _test(
                f"{JAX}/cos_test.py::CosTest::testCos1",
                "failed",
                "TypeError: partial_timed() takes 1 positional argument but 3 were given",
            ),
            _test(f"{JAX}/cos_test.py::CosTest::testCos2", "passed"),  # never timed: rows without timings
        ]
    )
    _write(root, "jax_timings/t4_vm/gpu/test_failure_report.json", jax_report)
    _write(root, "jax_timings/tpu_vm/test_failure_report.json", jax_report)
    for device, folder in (("gpu", "t4_vm/gpu"), ("tpu", "tpu_vm/tpu")):
        _write(
            root,
            f"jax_timings/{folder}/{device}_1.json",
            {
                "cos_test.py:testCos0": _op([0.002]),
                "cos_test.py:testCos1": _op([0.004]),
                "PRNG_test.py:testPRNGValues": _op([0.1]),  # in_sample=false: left out
            },
        )
    return root


@pytest.fixture(scope="module")
def mini_built(mini: Path) -> dict[str, tuple[pd.DataFrame, dict[str, Any]]]:
    return build_reference(mini)


def _rows(built: dict, run_id: str) -> pd.DataFrame:
    return built[run_id][0]


def test_one_run_per_framework_machine_device_and_left_out_files(mini_built: dict) -> None:
    assert sorted(mini_built) == [
        "mince2023-jax-t4_vm-gpu",
        "mince2023-jax-tpu_vm-tpu",
        "mince2023-tensorflow-t4_vm-cpu",
        "mince2023-tensorflow-t4_vm-gpu",
        "mince2023-torch-a100_vm-gpu",
        "mince2023-torch-t4_vm-cpu",
        "mince2023-torch-t4_vm-gpu",
    ]
    every = pd.concat([frame for frame, _ in mini_built.values()])
    assert not every["test_id"].str.contains("apply_test|PRNG_test").any()
    assert set(every["source"]) == {"mince2023"} and set(every["mode"]) == {"eager"}
    # soft placement and top-level files never enter: no 9.0 s timing anywhere
    assert max(v for ops in every["op_latencies_ms"] for v in ops) < 9000.0


def test_torch_cpu_variants_become_the_machines_cpu_run(mini_built: dict) -> None:
    cpu = _rows(mini_built, "mince2023-torch-t4_vm-cpu")
    assert list(cpu["subtest"]) == ["test_sort", "test_sort"]
    assert list(cpu["repeat"]) == [0, 1]
    assert set(cpu["device_model"]) == {"t4_vm CPU"} and set(cpu["outcome"]) == {"passed"}
    assert [list(v) for v in cpu["op_latencies_ms"]] == [[2.0], [4.0]]  # seconds -> ms
    gpu = _rows(mini_built, "mince2023-torch-t4_vm-gpu")
    by_subtest = {s: g for s, g in gpu.groupby("subtest")}
    assert set(by_subtest) == {"test_sort", "test_sort_bfloat16", "test_copy_streams", "test_sort_stable"}
    assert (
        by_subtest["test_sort"]["test_id"].iloc[0] == f"{TORCH}/argsort_test.py::TestSortCUDA::test_sort_cuda"
    )
    assert [list(v) for v in by_subtest["test_sort"]["op_latencies_ms"]] == [[1.0, 3.0], [2.0, 6.0]]
    assert list(by_subtest["test_sort"]["test_time_ms"]) == [500.0, 500.0]
    failed = by_subtest["test_sort_bfloat16"].iloc[0]
    assert (failed["outcome"], failed["failure_category"], failed["failure_rule"], failed["error_type"]) == (
        "failed",
        "type_failure",
        "torch_dtype_not_implemented",
        "RuntimeError",
    )
    # untokened test: the accelerator's, and absent from the report -> passed (the study kept it)
    assert set(by_subtest["test_copy_streams"]["outcome"]) == {"passed"}
    assert by_subtest["test_copy_streams"]["test_id"].iloc[0] == f"{TORCH}/argsort_test.py::test_copy_streams"
    # report-only subtest: one row per repeat, no timings, the skip reason kept
    stable = by_subtest["test_sort_stable"]
    assert list(stable["repeat"]) == [0, 1] and set(stable["outcome"]) == {"skipped"}
    assert all(len(v) == 0 for v in stable["op_latencies_ms"]) and stable["test_time_ms"].isna().all()
    assert "Only runs on cpu" in stable["error_message"].iloc[0]


def test_no_report_on_the_machine_means_unknown(mini_built: dict) -> None:
    a100 = _rows(mini_built, "mince2023-torch-a100_vm-gpu")
    assert set(a100["outcome"]) == {"unknown"} and set(a100["device_model"]) == {"A100"}
    assert a100["failure_category"].isna().all()
    facts = mini_built["mince2023-torch-a100_vm-gpu"][1]
    assert (facts["os"], facts["python"], facts["repeats"]) == ("unknown", "unknown", 1)


def test_the_report_in_the_timing_folder_wins_and_cpu_is_not_covered(mini_built: dict) -> None:
    gpu = _rows(mini_built, "mince2023-tensorflow-t4_vm-gpu")
    svd = gpu[gpu["subtest"] == "testSvd"]
    assert set(svd["outcome"]) == {"passed"}  # the stale machine report said failed
    assert set(svd["function"]) == {"tensorflow.linalg.svd"} and set(svd["case_id"]) == {
        "tensorflow.linalg.svd"
    }
    assert set(_rows(mini_built, "mince2023-tensorflow-t4_vm-cpu")["outcome"]) == {"unknown"}
    facts = mini_built["mince2023-tensorflow-t4_vm-gpu"][1]
    assert facts["python"] == "3.10.10" and facts["host"] == "t4_vm" and facts["accelerator"] == "T4"
    assert json.loads(facts["packages"])["tensorflow"] == "2.11.0"


def test_a_name_in_two_classes_gives_a_row_per_class_timings_on_the_last(mini_built: dict) -> None:
    gpu = _rows(mini_built, "mince2023-tensorflow-t4_vm-gpu")
    axes = gpu[(gpu["subtest"] == "testAxes") & (gpu["repeat"] == 0)].set_index("test_id")
    mean_id, sum_id = f"{TF}/svd_test.py::MeanTest::testAxes", f"{TF}/svd_test.py::SumTest::testAxes"
    assert axes.loc[mean_id, "outcome"] == "failed"
    assert axes.loc[mean_id, "failure_category"] == "not_implemented"
    assert list(axes.loc[mean_id, "op_latencies_ms"]) == []
    assert axes.loc[sum_id, "outcome"] == "passed" and list(axes.loc[sum_id, "op_latencies_ms"]) == [20.0]
    new = gpu[gpu["subtest"] == "testNew"]
    assert set(new["outcome"]) == {"passed"} and set(new["test_id"]) == {f"{TF}/svd_test.py::testNew"}


def _two_class_study(root: Path, report_tests: list[dict[str, Any]]) -> Path:
    """A TF T4 run set whose report lists `test_session` in two classes of one file (as TF's
    inherited test_session is collected in every test class) and one timing entry for it."""
    _write(
        root,
        "study_function_map.json",
        [
            {
                "framework": "tensorflow",
                "paper_name": "tf.linalg.svd",
                "test_file": "svd_test.py",
                "qualified_name": "tf.linalg.svd",
                "timed_call": "",
                "in_sample": True,
            }
        ],
    )
    for run in (1, 2):
        _write(
            root,
            f"tensorflow_timings/t4_vm/gpu/gpu_{run}.json",
            {"svd_test.py:test_session": _op([0.001 * run]), "svd_test.py:testSvd": _op([0.002])},
        )
    _write(root, "tensorflow_timings/t4_vm/gpu/test_failure_report.json", _report(report_tests))
    _write(root, "tensorflow_timings/t4_vm/cpu/cpu_1.json", {"svd_test.py:test_session": _op([0.5])})
    return root


def test_a_name_in_two_classes_gets_unique_test_ids_and_keeps_the_study_subtest(tmp_path: Path) -> None:
    root = _two_class_study(
        tmp_path,
        [
            _test(f"{TF}/svd_test.py::SvdTest::test_session", "passed"),
            _test(f"{TF}/svd_test.py::SvdTest::testSvd", "passed"),
            _test(f"{TF}/svd_test.py::SvdGradTest::test_session", "passed"),
        ],
    )
    built = build_reference(root)
    every = pd.concat([frame for frame, _ in built.values()], ignore_index=True)
    assert not every.duplicated(["run_id", "test_id", "repeat"]).any()
    gpu = _rows(built, "mince2023-tensorflow-t4_vm-gpu")
    session = gpu[gpu["subtest"] == "test_session"]
    assert sorted(set(session["test_id"])) == [
        f"{TF}/svd_test.py::SvdGradTest::test_session",
        f"{TF}/svd_test.py::SvdTest::test_session",
    ]
    assert len(session) == 4 and set(session["subtest"]) == {"test_session"}  # the study's key, no class
    # the uncovered CPU run has no node id: the class-less id, unique as the timing key is
    cpu = _rows(built, "mince2023-tensorflow-t4_vm-cpu")
    assert list(cpu["test_id"]) == [f"{TF}/svd_test.py::test_session"]


def test_rows_that_cannot_be_told_apart_stop_the_import(tmp_path: Path) -> None:
    """A report listing one node id twice gives two rows with one (run_id, test_id, repeat): the
    importer names the file and the key instead of writing both."""
    node = f"{TF}/svd_test.py::SvdTest::test_session"
    root = _two_class_study(tmp_path, [_test(node, "passed"), _test(node, "failed", "AssertionError: x")])
    with pytest.raises(
        ValueError, match=r"t4_vm/gpu/test_failure_report\.json: key 'svd_test\.py:test_session'"
    ):
        build_reference(root)


def test_jax_report_covers_the_gpu_only_and_harness_failures_are_marked(mini_built: dict) -> None:
    gpu = _rows(mini_built, "mince2023-jax-t4_vm-gpu")
    cos1 = gpu[gpu["subtest"] == "testCos1"].iloc[0]
    assert (cos1["outcome"], cos1["failure_category"], cos1["failure_rule"]) == (
        "failed",
        "harness",
        "harness_partial_timed",
    )
    assert list(gpu[gpu["subtest"] == "testCos2"]["op_latencies_ms"].iloc[0]) == []
    tpu = _rows(mini_built, "mince2023-jax-tpu_vm-tpu")
    assert set(tpu["outcome"]) == {"unknown"} and set(tpu["device_model"]) == {"TPU v3-8"}
    assert "testCos2" not in set(tpu["subtest"])  # report rows are not borrowed by an uncovered run


def test_import_writes_valid_identical_files(mini: Path, tmp_path: Path) -> None:
    first = import_reference(mini, tmp_path / "a" / "results" / "mince2023").written
    second = import_reference(
        mini, tmp_path / "b" / "results" / "mince2023", runs_out=tmp_path / "b" / "runs"
    ).written
    assert [p.name for p in first] == [p.name for p in second]
    for one, two in zip(first, second):
        assert hashlib.sha256(one.read_bytes()).digest() == hashlib.sha256(two.read_bytes()).digest()
    results = read_table("results", tmp_path / "a" / "results")
    runs = read_table("runs", tmp_path / "a" / "runs" / "mince2023")  # default: data/runs/<source>
    assert len(runs) == len(first) // 2 == 7
    assert runs.set_index("run_id")["n_results"].to_dict() == results.groupby("run_id").size().to_dict()
    assert len(read_table("runs", tmp_path / "b" / "runs")) == 7


# --------------------------------------------------------------------------- written once


def _files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under the folder: its bytes and its modification time (a rewrite changes it)."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_an_import_run_again_writes_nothing_and_says_already_imported(mini: Path, tmp_path: Path) -> None:
    out = tmp_path / "data" / "results" / "mince2023"
    first = import_reference(mini, out)
    assert len(first.written) == 14 and first.unchanged == []
    before = _files(tmp_path / "data")
    again = import_reference(mini, out)
    assert again.written == [] and len(again.unchanged) == 14
    assert again.summary("files").startswith("already imported, nothing written: the 14 files")
    assert _files(tmp_path / "data") == before


def test_a_shard_written_under_an_older_schema_counts_as_imported(mini: Path, tmp_path: Path) -> None:
    """The committed shards predate columns added since (null for the study): same rows, so the
    import leaves the file as it is rather than rewriting it to add null columns."""
    import pyarrow.parquet as pq

    from portability_data.tables.tableio import added_since

    out = tmp_path / "results" / "mince2023"
    import_reference(mini, out)
    shard = out / "mince2023-torch-t4_vm-gpu.parquet"
    table = pq.read_table(shard)
    older = table.drop_columns([c for c in added_since("results", 1) if c in table.column_names])
    metadata = {**table.schema.metadata, b"schema_version": b"1"}
    pq.write_table(older.replace_schema_metadata(metadata), shard)
    assert len(older.column_names) < len(table.column_names)
    before = shard.read_bytes()
    again = import_reference(mini, out)
    assert again.written == [] and shard in again.unchanged
    assert shard.read_bytes() == before


def test_an_import_that_differs_refuses_naming_the_file_and_writes_nothing(
    mini: Path, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from portability_data.pipeline.import_once import ImportConflictError

    out = tmp_path / "data" / "results" / "mince2023"
    import_reference(mini, out)
    shard = out / "mince2023-torch-t4_vm-gpu.parquet"
    table = pq.read_table(shard)
    messages = table["error_message"].to_pylist()
    messages[0] = "edited by hand"
    column = table.schema.get_field_index("error_message")
    pq.write_table(table.set_column(column, "error_message", pa.array(messages, pa.string())), shard)
    (out / "mince2023-jax-t4_vm-gpu.parquet").unlink()  # missing: an import may write it, not here
    before = _files(tmp_path / "data")
    with pytest.raises(ImportConflictError) as refused:
        import_reference(mini, out)
    text = str(refused.value)
    assert f"{shard}: error_message in 1 row(s)" in text and "nothing written" in text
    assert "fix: to see what this import makes, import into a scratch folder" in text
    assert _files(tmp_path / "data") == before


def test_the_cli_names_a_missing_or_wrong_folder_and_a_refusal(
    mini: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from portability_data.cli import main

    out = ["--out", str(tmp_path / "results" / "mince2023"), "--runs-out", str(tmp_path / "runs")]
    missing = tmp_path / "no-such-folder"
    with pytest.raises(SystemExit, match=rf"error: {missing}: does not exist; give the folder of the study"):
        main(["reference", "import", str(missing), *out])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match=r"empty: no study_function_map\.json in it; .*_timings/<machine>/"):
        main(["reference", "import", str(tmp_path / "empty"), *out])
    assert not (tmp_path / "results").exists() and not (tmp_path / "runs").exists()
    main(["reference", "import", str(mini), *out])
    assert "14 shard(s) and runs row(s) written" in capsys.readouterr().out
    main(["reference", "import", str(mini), *out])
    assert "already imported, nothing written" in capsys.readouterr().out


def test_an_unreadable_raw_file_is_named(mini: Path, tmp_path: Path) -> None:
    import shutil

    from portability_data.pipeline.reference import ReferenceImportError

    copy = tmp_path / "study"
    shutil.copytree(mini, copy)
    run_file = sorted(p for p in copy.rglob("*.json") if re.fullmatch(r"(cpu|gpu|tpu)_\d+\.json", p.name))[0]
    run_file.write_text('{"argsort_test.py:test_a": ')
    with pytest.raises(ReferenceImportError, match=rf"{run_file}: cannot be read as JSON"):
        import_reference(copy, tmp_path / "results" / "mince2023")
    assert not (tmp_path / "results").exists()


# --------------------------------------------------------------------------- the study's real data

needs_reference = pytest.mark.skipif(not REFERENCE_DIR.is_dir(), reason=f"study data not at {REFERENCE_DIR}")


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, pd.DataFrame]:
    out = tmp_path_factory.mktemp("real")
    import_reference(REFERENCE_DIR, out / "results" / "mince2023")
    return read_table("results", out / "results"), read_table("runs", out / "runs")


@needs_reference
def test_importing_the_study_again_never_rewrites_the_committed_shards(tmp_path: Path) -> None:
    """Issue 59: run on the study's folder, the import rewrote the 20 committed shards and their
    runs rows. Into a copy of them now it writes nothing, whether it makes what is committed
    ("already imported") or refuses (today's failure rules read some of the study's messages
    otherwise), and every file stays byte for byte as committed."""
    import shutil

    from portability_data.pipeline.import_once import ImportConflictError

    repo = Path(__file__).resolve().parents[1]
    for kind in ("results", "runs"):
        shutil.copytree(repo / "data" / kind / "mince2023", tmp_path / kind / "mince2023")
    before = _files(tmp_path)
    assert len(before) == 40
    try:
        imported = import_reference(REFERENCE_DIR, tmp_path / "results" / "mince2023")
        assert imported.written == [] and len(imported.unchanged) == 40
    except ImportConflictError as refused:
        assert all(line.startswith(str(tmp_path)) for line in refused.conflicts)
    assert _files(tmp_path) == before


@needs_reference
def test_report_coverage_evidence() -> None:
    """The JAX reports are one file; TF reports name the accelerator they ran on."""
    digests = {
        hashlib.sha256((REFERENCE_DIR / rel).read_bytes()).hexdigest()
        for rel in REPORT_COVERAGE
        if rel.startswith("jax_timings")
    }
    assert len(digests) == 1
    for rel, covered in REPORT_COVERAGE.items():
        if rel.startswith("tensorflow_timings"):
            text = (REFERENCE_DIR / rel).read_text()
            assert {"gpu": "device:GPU:0", "tpu": "device:TPU:0"}[next(iter(covered))] in text
    used = {rs.report_rel for rs in find_run_sets(REFERENCE_DIR) if rs.report_rel}
    assert used <= set(REPORT_COVERAGE)


@needs_reference
def test_real_import_counts(real: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    results, runs = real
    assert len(runs) == 20
    t4 = results[results["run_id"] == "mince2023-torch-t4_vm-gpu"]
    timed = t4[[len(v) > 0 for v in t4["op_latencies_ms"]]]
    assert timed["function"].nunique() == 60  # counted by hand from the raw gpu_1..3.json files
    assert t4["function"].nunique() == 63
    jax_tpu = results[results["run_id"] == "mince2023-jax-tpu_vm-tpu"]
    assert set(jax_tpu["outcome"]) == {"unknown"}
    eig = results[
        (results["run_id"] == "mince2023-jax-t4_vm-gpu") & (results["function"] == "jax.numpy.linalg.eig")
    ]
    assert set(eig["failure_category"]) == {"not_implemented"}
    harness = results[results["failure_category"] == "harness"]
    assert set(harness["function"]) == {"jax.vjp", "jax.numpy.ones", "jax.numpy.zeros"}
    assert len(harness) == 130 * 3


@needs_reference
def test_real_import_keys_are_unique_and_keep_the_class(
    real: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    results, _ = real
    assert not results.duplicated(["run_id", "test_id", "repeat"]).any()
    session = results[(results["framework"] == "tensorflow") & (results["subtest"] == "test_session")]
    covered = session[session["outcome"] != "unknown"]
    # every report node id is path::Class::test; only flush_test.py, which postdates the reports
    # (module doc), has no node id and keeps the class-less id
    classless = {t for t in covered["test_id"] if t.count("::") == 1}
    assert len(covered) > 0 and classless == {f"{TF}/flush_test.py::test_session"}
    assert covered.duplicated(["run_id", "case_id", "subtest", "repeat"]).any()  # the study's key is shared


@needs_reference
def test_real_latencies_of_three_functions(real: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    """Paired T4 / TPU v3-8 latencies (ms), each recomputed by hand from the raw timing files."""
    results, runs = real
    _, latencies = aggregate(results, runs)
    paired = latencies[
        (latencies["device_model"] == "TPU v3-8") & (latencies["reference_device_model"] == "T4")
    ]
    got = paired.set_index("function")
    expected = {  # function: (T4, TPU v3-8, subtests)
        "torch.argsort": (0.157161, 948.21021, 1),
        "tensorflow.linalg.svd": (0.930974, 112.843289, 2),
        "jax.numpy.cos": (172.002499, 26.101574, 10),
    }
    for function, (t4, tpu, n) in expected.items():
        row = got.loc[function]
        assert row["reference_latency_ms"] == pytest.approx(t4, rel=1e-5)
        assert row["latency_ms"] == pytest.approx(tpu, rel=1e-5)
        assert row["ratio"] == pytest.approx(tpu / t4, rel=1e-5)
        assert row["n_subtests"] == n
    # the study's 155 tabled functions all pair; three more do (documented in the module)
    assert len(paired) == 158
