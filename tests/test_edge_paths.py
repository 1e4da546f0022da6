"""The edge paths (issue 52): litert (TensorFlow's TFLite converter with builtin ops only, and
litert-torch, run by LiteRT's interpreter), litert_flex (the converter with Select TF ops: Flex nodes
named and counted), executorch (torch.export -> edge -> .pte on the portable kernels) and
executorch_xnnpack (the same with the XNNPACK delegate: ops it does not take counted by name). Each
runs a curated-style case end to end through the real runner: a function that converts and matches
the framework's eager result, and one that needs Flex / is not delegated (counted by name) or fails
with its stage. Compiled mode only: eager is refused with what to do; a missing package says what to
install.

The litert and executorch extras are in `.[all]`; PyTorch on litert needs litert-torch's own
environment (.venv-litert: its pins move packages of the pinned stack), so that case is skipped here
unless litert_torch is importable, and says so: run this file with .venv-litert/bin/python (CI does,
with PORTABILITY_REQUIRE_LITERT_TORCH=1: no skip there)."""

from __future__ import annotations

import importlib
import os
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest

from portability_data.runner import devices
from portability_data.runner.backends import DeviceUnavailableError
from portability_data.tables import contracts

PACKAGES = {
    ("tensorflow", "litert"): ("ai_edge_litert",),
    ("tensorflow", "litert_flex"): ("ai_edge_litert",),
    ("torch", "litert"): ("ai_edge_litert", "litert_torch"),
    ("torch", "executorch"): ("executorch",),
    ("torch", "executorch_xnnpack"): ("executorch",),
}
EDGE = ("litert", "litert_flex", "executorch", "executorch_xnnpack")


def _needs(framework: str, device: str) -> None:
    if (framework, device) == ("torch", "litert") and os.environ.get("PORTABILITY_REQUIRE_LITERT_TORCH"):
        return  # CI's litert-torch environment (.ci/run): a missing package fails instead
    for name in PACKAGES[(framework, device)]:
        where = "the litert-torch environment (.venv-litert)" if name == "litert_torch" else "its extra"
        pytest.importorskip(name, reason=f"{name} is not installed ({device} path: {where})")


def test_the_paths_are_registered_compiled_only_with_their_runtime() -> None:
    assert set(EDGE) <= set(contracts.DEVICES)
    assert [devices.path_named(name).runtime for name in EDGE] == [
        "litert",
        "litert",
        "executorch",
        "executorch",
    ]
    assert devices.compiler_of("tensorflow", "litert", "compiled") == "tflite_converter"
    assert devices.compiler_of("tensorflow", "litert_flex", "compiled") == "tflite_converter_select_tf_ops"
    assert devices.compiler_of("torch", "litert", "compiled") == "litert_torch"
    assert devices.compiler_of("torch", "executorch", "compiled") == "executorch"
    assert devices.compiler_of("torch", "executorch_xnnpack", "compiled") == "executorch_xnnpack"
    for name in EDGE:
        assert all(backend.modes == ("compiled",) for backend in devices.path_named(name).backends.values())
    with pytest.raises(DeviceUnavailableError, match="ExecuTorch runs PyTorch programs only"):
        devices.backend_for("tensorflow", "executorch")


@pytest.mark.parametrize(("framework", "device"), sorted(PACKAGES))
def test_eager_mode_is_refused_with_what_to_do(framework: str, device: str, monkeypatch) -> None:
    _needs(framework, device)
    monkeypatch.setenv("PORTABILITY_MODE", "eager")
    with pytest.raises(DeviceUnavailableError, match=r"compiled mode only .*use --mode compiled"):
        devices.backend_for(framework, device)


@pytest.mark.parametrize(
    ("framework", "device", "missing", "install"),
    [
        ("tensorflow", "litert", "ai_edge_litert", r"pip install -e \"\.\[litert\]\""),
        ("tensorflow", "litert_flex", "ai_edge_litert", r"pip install -e \"\.\[litert\]\""),
        ("torch", "litert", "litert_torch", r"\.venv-litert/bin/pip install -e \"\.\[litert-torch\]\""),
        ("torch", "executorch", "executorch", r"pip install -e \"\.\[executorch\]\""),
        ("torch", "executorch_xnnpack", "executorch", r"pip install -e \"\.\[executorch\]\""),
    ],
)
def test_a_missing_package_names_what_to_install(framework, device, missing, install, monkeypatch) -> None:
    importlib.import_module(framework)
    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    monkeypatch.setitem(sys.modules, missing, None)  # `import <missing>` raises ImportError
    with pytest.raises(DeviceUnavailableError, match=rf"{missing} is missing .*{install}"):
        devices.backend_for(framework, device)


_TF_CONVERTS = """\
        import tensorflow as tf

        def test_converts(device, timed):
            x = tf.reshape(tf.linspace(2.0, -2.0, 12), (3, 4))
            y = tf.fill((3, 4), 0.5)
            assert timed(tf.math.subtract, x, y).numpy().tolist() == (x - y).numpy().tolist()  # input order
            out = timed(tf.math.top_k, x, k=2)
            want = tf.math.top_k(x, k=2)
            assert out.values.numpy().tolist() == want.values.numpy().tolist()
            assert out.indices.numpy().tolist() == want.indices.numpy().tolist()

        def test_no_lowering(device, timed):
            timed(tf.linalg.det, tf.eye(3) + 1)
        """
_TORCH_CONVERTS = """\
        import torch

        def test_converts(device, timed):
            x = torch.linspace(-2, 2, 12).reshape(3, 4)
            y = torch.full((3, 4), 0.5)
            assert torch.equal(timed(torch.sub, x, y), x - y)  # input order
            assert torch.allclose(timed(torch.tanh, x), torch.tanh(x), atol=1e-6)

        def test_no_lowering(device, timed):
            x = torch.linspace(-2, 2, 12).reshape(3, 4)
            {body}
        """
CASES = {
    ("tensorflow", "litert"): _TF_CONVERTS,
    ("tensorflow", "litert_flex"): _TF_CONVERTS,
    ("torch", "litert"): _TORCH_CONVERTS.format(body="timed(torch.cumprod, x, 1)"),
    ("torch", "executorch"): _TORCH_CONVERTS.format(body="timed(torch.sort, x, 1)"),
    ("torch", "executorch_xnnpack"): _TORCH_CONVERTS.format(
        body="assert torch.allclose(timed(lambda a: a @ a.T, x), x @ x.T, atol=1e-5)"
    ),
}

# What the subtest that cannot go all the way records: (outcome, error_type, words of its message,
# host_fallback_ops).
NO_LOWERING = {
    ("tensorflow", "litert"): ("failed", "ConvertError", "TF Select ops: MatrixDeterminant", []),
    ("tensorflow", "litert_flex"): (
        "failed",
        "RuntimeLoadError",
        "needs the Flex delegate (Select TF ops: FlexMatrixDeterminant x1)",
        ["FlexMatrixDeterminant"],
    ),
    ("torch", "litert"): ("failed", "ConvertError", "Lowering not found: aten.cumprod.default", []),
    ("torch", "executorch"): ("failed", "RuntimeLoadError", "OperatorMissing", []),
    ("torch", "executorch_xnnpack"): (
        "host_fallback",
        "HostFallback",
        "aten_mm_default",
        ["aten_mm_default"],
    ),
}


@pytest.mark.parametrize(("framework", "device"), sorted(PACKAGES))
def test_a_case_runs_end_to_end_on_the_path(framework: str, device: str, case_repo) -> None:
    """Through the real runner (worker, harness, supervisor): the runs row names the path, its
    compiler and runtime and their versions; a function that converts matches eager and passes as
    `compiled`; one the path cannot take all the way is recorded with its stage and ops."""
    _needs(framework, device)
    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.supervisor import run

    case_repo.add(framework, "edge_path", CASES[(framework, device)])
    paths = Paths.under(case_repo.root)
    spec = RunSpec(framework=framework, device=device, mode="compiled", repeats=1, timeout_s=600)
    run_id = run(spec, paths, log=lambda message: None)
    row = pq.read_table(paths.runs_dir / "portability" / f"{run_id}.parquet").to_pylist()[0]
    path = devices.path_named(device)
    assert (row["device"], row["mode"], row["status"]) == (device, "compiled", "complete")
    assert (row["compiler"], row["runtime"]) == (path.compiler(framework, "compiled"), path.runtime)
    assert row["driver"].startswith(f"{path.runtime} ")  # litert 2.3.0 (...), executorch 1.5.1 (...)
    shard = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
    results = {r["subtest"]: r for r in shard}
    converted = results["test_converts"]
    assert (converted["outcome"], converted["execution"]) == ("passed", "compiled"), converted[
        "error_message"
    ]
    assert converted["device_compiles"] >= 2 and converted["host_fallback_ops"] == []
    assert (converted["compiler"], converted["runtime"]) == (row["compiler"], row["runtime"])
    outcome, error_type, words, ops = NO_LOWERING[(framework, device)]
    failed = results["test_no_lowering"]
    assert (failed["outcome"], failed["error_type"]) == (outcome, error_type), failed["error_message"]
    assert words in failed["error_message"]
    assert failed["host_fallback_ops"] == ops


@pytest.mark.parametrize(
    ("framework", "device"), [("torch", "executorch"), ("torch", "litert"), ("tensorflow", "litert")]
)
def test_a_call_with_nothing_to_export_runs_on_the_host_and_says_not_routed(
    framework, device, monkeypatch
) -> None:
    """Real exporters and converters (runner/devices/nothing_to_export.py): a call whose export or
    conversion fails and whose result holds no tensor, with no input changed in place, runs in the
    host's Python and says not_routed, the same signature again too; one that fails and returns a
    tensor, or changes its input in place, keeps its stage's error; one that converts is compiled."""
    _needs(framework, device)
    from portability_data.runner.devices import executorch, litert

    module = executorch if device == "executorch" else litert
    stage_errors = (module.ExportError, module.ConvertError)
    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for(framework, device)
    if framework == "torch":
        import torch

        x = torch.tensor([3.0, 1.0, 2.0])
        host_only = {
            "size": (lambda t: t.size(), torch.Size([3])),
            "grad": (lambda t: torch.is_grad_enabled(), True),
        }

        def doubled_if_positive(t: torch.Tensor) -> torch.Tensor:  # data-dependent: torch.export refuses
            return t * 2 if t.sum().item() > 0 else t

        def added_if_positive(t: torch.Tensor) -> None:  # the same, in place: returns None
            if t.sum().item() > 0:
                t.add_(1)

        refused = [doubled_if_positive, added_if_positive]
        converted, expected = (lambda t: torch.sin(t) + 1), torch.sin(x) + 1
    else:
        import tensorflow as tf

        x = tf.constant([3.0, 1.0, 2.0])
        # .numpy() does not trace: tf.function raises, the host returns a list of floats
        host_only = {"numpy": (lambda t: t.numpy().tolist(), [3.0, 1.0, 2.0])}
        refused = [lambda t: tf.constant(t.numpy() * 2)]
        converted, expected = (lambda t: tf.sin(t) + 1), tf.sin(x) + 1
    for name, (fn, value) in host_only.items():
        call = backend.compile(fn)
        assert call(x) == value and call.execution == "not_routed", name
        assert call(x) == value and call.execution == "not_routed", name  # the same signature, on the host
    for fn in refused:
        call = backend.compile(fn)
        sample = x.clone() if framework == "torch" else x
        with pytest.raises(stage_errors):
            call(sample)
        assert call.execution == "compiled"
    call = backend.compile(converted)
    np.testing.assert_allclose(np.asarray(call(x)), np.asarray(expected), rtol=1e-5)
    assert call.execution == "compiled"


KEEPS_ITS_PROGRAM = """
import gc, sys
import torch
from portability_data.runner import devices

backend = devices.backend_for("torch", sys.argv[1])
x = torch.tensor([3.0, 1.0, 2.0])
weight = torch.arange(9.0).reshape(3, 3)
calls = [backend.compile(lambda t: torch.sin(t) + 1.5), backend.compile(lambda t: t @ weight + 2)]
expected = [torch.sin(x) + 1.5, x @ weight + 2]
for round in range(20):
    for call, want in zip(calls, expected):
        got = call(x)  # built once, then run from what the call keeps
        assert call.execution == "compiled"
        assert torch.allclose(got, want), (round, got, want)
    gc.collect()  # what the call does not hold is freed, and overwritten here
    churn = [bytes([255]) * size for size in (512, 1024, 2048, 4096, 8192) for _ in range(40)]
print("kept")
"""


@pytest.mark.parametrize("device", ["executorch", "executorch_xnnpack"])
def test_a_built_program_outlives_the_build_and_runs_again(device: str) -> None:
    """ExecuTorch's loaded Program holds the .pte bytes its Method reads from: a call that kept only
    the Method read freed memory on its later runs (SIGSEGV in CI). In a fresh process, so a crash
    fails this test with its exit status instead of ending the suite."""
    _needs("torch", device)
    import subprocess

    env = {**os.environ, "PORTABILITY_MODE": "compiled"}
    ran = subprocess.run(
        [sys.executable, "-c", KEEPS_ITS_PROGRAM, device],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert ran.returncode == 0 and ran.stdout.strip().endswith("kept"), (ran.returncode, ran.stderr[-3000:])


@pytest.mark.parametrize("device", ["litert", "litert_flex"])
def test_a_trace_error_keeps_its_cause(device: str, monkeypatch) -> None:
    """Real tf.function: a trace error reads "in user code:", the user's frames, then the cause;
    the export stage's message keeps the cause (it kept only the first line before 2026-12-06)."""
    _needs("tensorflow", device)
    import tensorflow as tf

    from portability_data.runner.devices import litert

    def branches_on_a_tensor(t):
        if t > 0:  # a Python if on a 3-element tensor: autograph refuses the condition
            return t
        return -t

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for("tensorflow", device)
    call = backend.compile(branches_on_a_tensor)
    with pytest.raises(litert.ExportError) as raised:
        call(tf.constant([1.0, -2.0, 3.0]))
    message = str(raised.value)
    assert message.startswith("export failed (tf.function): ValueError: condition of if statement"), message
    assert "in user code" not in message and "File " not in message


@pytest.mark.parametrize("device", ["litert", "litert_flex"])
def test_a_trace_error_before_where_a_variable_was_defined_keeps_its_cause(device: str, monkeypatch) -> None:
    """Real tf.function in a TF1 graph: get_variable in a variable scope fails its trace, and TF
    follows the cause with "Originally defined at:" and the frames where the variable was made
    (after a blank line); the message is the cause, not those frames (it was before 2026-12-07)."""
    _needs("tensorflow", device)
    import tensorflow as tf

    from portability_data.runner.devices import litert

    def layer(x):
        with tf.compat.v1.variable_scope("layer", initializer=tf.compat.v1.constant_initializer(0.5)):
            w = tf.compat.v1.get_variable("w", shape=(3, 2))
        return tf.matmul(x, w)

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    call = devices.backend_for("tensorflow", device).compile(layer)
    with tf.Graph().as_default(), pytest.raises(litert.ExportError) as raised:
        call(tf.ones((2, 3)))
    message = str(raised.value)
    cause = "ValueError: Variable layer/w already exists"
    assert message.startswith(f"export failed (tf.function): {cause}"), message
    assert "Originally defined" not in message and "File " not in message


def test_an_input_the_function_writes_is_written_back_from_the_executorch_program(monkeypatch) -> None:
    """An ExecuTorch program returns each input the function changes in place (`out=`) as an output
    of its own, before the function's, and leaves the caller's tensor as it was: the harness writes
    it back and returns the function's own result (before 2026-12-07: a treespec length mismatch,
    torch.bitwise_not and torch.lt's `out=` subtests)."""
    _needs("torch", "executorch")
    import torch

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    call = devices.backend_for("torch", "executorch").compile(lambda t, out: torch.bitwise_not(t, out=out))
    out = torch.zeros(3, dtype=torch.int64)
    returned = call(torch.tensor([1, 2, 3]), out)
    assert call.execution == "compiled"
    assert out.tolist() == [-2, -3, -4] and returned.tolist() == [-2, -3, -4]


@pytest.mark.parametrize(("framework", "device"), [("torch", "litert")])
def test_a_bfloat16_tensor_reaches_the_interpreter_and_comes_back(framework, device, monkeypatch) -> None:
    """torch's `Tensor.numpy()` refuses bfloat16, which LiteRT's interpreter takes (as ml_dtypes'
    bfloat16): the harness feeds the same bits and reads the model's outputs back whatever their
    type (runner/devices/torch_arrays.py; before 2026-12-07 torch's TypeError was the harness's own
    failure on 156 subtests). A sparse tensor is refused as the runtime's limit, named."""
    _needs(framework, device)
    import torch

    from portability_data.runner.devices import litert

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    call = devices.backend_for(framework, device).compile(lambda t: torch.relu(t) * 2)
    x = torch.tensor([-1.0, 2.0, 3.5], dtype=torch.bfloat16)
    result = call(x)
    assert call.execution == "compiled"
    assert result.float().tolist() == [0.0, 4.0, 7.0]  # LiteRT's own result dtype is data (float32 here)
    total = devices.backend_for(framework, device).compile(lambda t: t.sum())(x)
    assert total.shape == () and total.float().item() == 4.5  # a 0-d result stays 0-d
    sparse = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    with pytest.raises((litert.RuntimeRunError, litert.ExportError, litert.ConvertError)):
        devices.backend_for(framework, device).compile(lambda t: t * 2)(sparse)
