"""The export paths (issue 51): onnxruntime (torch.onnx / tf2onnx / jax2onnx, run by ONNX Runtime's
CPU execution provider) and openvino (torch.compile's OpenVINO backend, convert_model for
TensorFlow). Each runs a curated-style case end to end through the real runner: a function that
exports and matches the framework's eager result, and one that fails at a named stage (or, on
OpenVINO's torch backend, runs partly in PyTorch: host_fallback with the op named). Compiled mode
only: eager is refused with what to do. A missing package says what to install.

The packages are the `onnx` and `openvino` extras, in `.[all]` (CI installs them): a test here is
skipped only where its package is not installed, and says which."""

from __future__ import annotations

import importlib
import json
import sys

import pyarrow.parquet as pq
import pytest

from portability_data.runner import devices
from portability_data.runner.backends import DeviceUnavailableError
from portability_data.tables import contracts

PACKAGES = {
    ("torch", "onnxruntime"): ("onnx", "onnxruntime", "onnxscript"),
    ("tensorflow", "onnxruntime"): ("onnx", "onnxruntime", "tf2onnx"),
    ("jax", "onnxruntime"): ("onnx", "onnxruntime", "jax2onnx"),
    ("torch", "openvino"): ("openvino",),
    ("tensorflow", "openvino"): ("openvino",),
    ("torch", "openvino_f32"): ("openvino",),
    ("tensorflow", "openvino_f32"): ("openvino",),
}


def _needs(framework: str, device: str) -> None:
    for name in PACKAGES[(framework, device)]:
        pytest.importorskip(name, reason=f"{name} is not installed (the {device} path's extra)")


def test_the_paths_are_registered_compiled_only_with_their_runtime() -> None:
    assert {"onnxruntime", "openvino"} <= set(contracts.DEVICES)
    onnx, openvino = devices.path_named("onnxruntime"), devices.path_named("openvino")
    assert (onnx.runtime, openvino.runtime) == ("onnxruntime", "openvino")
    assert devices.compiler_of("torch", "onnxruntime", "compiled") == "torch.onnx"
    assert devices.compiler_of("tensorflow", "onnxruntime", "compiled") == "tf2onnx"
    assert devices.compiler_of("jax", "onnxruntime", "compiled") == "jax2onnx"
    assert devices.compiler_of("torch", "openvino", "compiled") == "openvino"
    assert devices.compiler_of("tensorflow", "openvino", "compiled") == "openvino.convert_model"
    # openvino_f32: the same converters and runtime, another precision (so another setting)
    f32 = devices.path_named("openvino_f32")
    assert f32.runtime == "openvino" and set(f32.backends) == set(openvino.backends)
    assert all(f32.compiler(f, "compiled") == openvino.compiler(f, "compiled") for f in f32.backends)
    for path in (onnx, openvino, f32):
        assert all(backend.modes == ("compiled",) for backend in path.backends.values())
    with pytest.raises(DeviceUnavailableError, match="OpenVINO converts JAX"):
        devices.backend_for("jax", "openvino")


@pytest.mark.parametrize(("framework", "device"), sorted(PACKAGES))
def test_eager_mode_is_refused_with_what_to_do(framework: str, device: str, monkeypatch) -> None:
    _needs(framework, device)
    monkeypatch.setenv("PORTABILITY_MODE", "eager")
    with pytest.raises(DeviceUnavailableError, match=r"compiled mode only .*use --mode compiled"):
        devices.backend_for(framework, device)


@pytest.mark.parametrize(
    ("framework", "device", "missing", "extra"),
    [
        ("torch", "onnxruntime", "onnxruntime", "onnx"),
        ("tensorflow", "onnxruntime", "tf2onnx", "onnx"),
        ("jax", "onnxruntime", "jax2onnx", "onnx"),
        ("torch", "openvino", "openvino", "openvino"),
    ],
)
def test_a_missing_package_names_what_to_install(framework, device, missing, extra, monkeypatch) -> None:
    importlib.import_module(framework)  # the framework itself is pinned: only the path's package is absent
    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    monkeypatch.setitem(sys.modules, missing, None)  # `import <missing>` raises ImportError
    with pytest.raises(
        DeviceUnavailableError, match=rf"{missing} is missing .*pip install -e \"\.\[{extra}\]\""
    ):
        devices.backend_for(framework, device)


CASES = {
    ("torch", "onnxruntime"): """\
        import torch

        def test_exports(device, timed):
            x = torch.linspace(-2, 2, 12).reshape(3, 4).flip(1)
            out = timed(torch.sort, x, 1)
            want = torch.sort(x, 1)
            assert torch.equal(out.values, want.values) and torch.equal(out.indices, want.indices)
            assert torch.allclose(timed(torch.fft.fft, x), torch.fft.fft(x), atol=1e-5)  # complex output

        def test_no_lowering(device, timed):
            timed(torch.linalg.eig, torch.eye(3) + 1)
        """,
    ("tensorflow", "onnxruntime"): """\
        import tensorflow as tf

        def test_exports(device, timed):
            x = tf.reshape(tf.linspace(2.0, -2.0, 12), (3, 4))
            out = timed(tf.math.top_k, x, k=2)
            want = tf.math.top_k(x, k=2)
            assert out.values.numpy().tolist() == want.values.numpy().tolist()
            assert out.indices.numpy().tolist() == want.indices.numpy().tolist()
            # a 0-d input: its .numpy() is a NumPy scalar, which ONNX Runtime took for no array
            assert float(timed(tf.math.abs, tf.constant(-2.0))) == 2.0

        def test_no_lowering(device, timed):
            timed(tf.math.bessel_i0, tf.ones((3, 4)))
        """,
    ("jax", "onnxruntime"): """\
        import jax.numpy as jnp
        import numpy as np

        def test_exports(device, timed):
            x = jnp.linspace(2.0, -2.0, 12).reshape(3, 4)
            np.testing.assert_array_equal(timed(jnp.sort, x, axis=1), jnp.sort(x, axis=1))

        def test_no_lowering(device, timed):
            timed(jnp.linalg.eig, jnp.eye(3) + 1)
        """,
    ("torch", "openvino"): """\
        import torch

        def test_exports(device, timed):
            x = torch.linspace(-2, 2, 12).reshape(3, 4).flip(1)
            out = timed(torch.sort, x, 1)
            want = torch.sort(x, 1)
            assert torch.equal(out.values, want.values) and torch.equal(out.indices, want.indices)

        def test_no_lowering(device, timed):
            x = torch.linspace(-2, 2, 12).reshape(3, 4)
            assert torch.allclose(timed(torch.fft.fft, x), torch.fft.fft(x), atol=1e-5)

        """,
    ("tensorflow", "openvino"): """\
        import tensorflow as tf

        def test_exports(device, timed):
            x = tf.reshape(tf.linspace(2.0, -2.0, 12), (3, 4))
            out = timed(tf.math.top_k, x, k=2)
            assert out.values.numpy().tolist() == tf.math.top_k(x, k=2).values.numpy().tolist()

        def test_no_lowering(device, timed):
            timed(tf.math.bessel_i0, tf.ones((3, 4)))
        """,
    # float32 held to float32's tolerance: on a CPU with bf16 instructions the openvino path's
    # default precision misses it (bmm: ~3e-3 relative here), the f32 path must not
    ("torch", "openvino_f32"): """\
        import torch

        def test_exports(device, timed):
            torch.manual_seed(0)
            x, y = torch.randn(5, 5, 5), torch.randn(5, 5, 5)
            torch.testing.assert_close(timed(torch.bmm, x, y), torch.bmm(x, y), rtol=1.3e-6, atol=1e-5)

        def test_no_lowering(device, timed):
            x = torch.linspace(-2, 2, 12).reshape(3, 4)
            assert torch.allclose(timed(torch.fft.fft, x), torch.fft.fft(x), atol=1e-5)
        """,
    ("tensorflow", "openvino_f32"): """\
        import numpy as np
        import tensorflow as tf

        def test_exports(device, timed):
            rng = np.random.default_rng(0)
            x, y = (tf.constant(rng.standard_normal((5, 5, 5)).astype("float32")) for _ in range(2))
            out, want = timed(tf.linalg.matmul, x, y), tf.linalg.matmul(x, y)
            np.testing.assert_allclose(out, want, rtol=1.3e-6, atol=1e-5)

        def test_no_lowering(device, timed):
            timed(tf.math.bessel_i0, tf.ones((3, 4)))
        """,
}

# What the subtest that cannot go all the way records: (outcome, error_type, words of its message).
NO_LOWERING = {
    ("torch", "onnxruntime"): (
        "failed",
        "ExportError",
        "No ONNX function found for <OpOverload(op='aten.linalg_eig'",
    ),
    ("tensorflow", "onnxruntime"): (
        "failed",
        "ExportError",
        "no ONNX conversion for TensorFlow op(s) BesselI0",
    ),
    ("jax", "onnxruntime"): ("failed", "ExportError", "export failed (jax2onnx): NotImplementedError: eig"),
    ("torch", "openvino"): ("host_fallback", "HostFallback", "aten::_fft_r2c"),
    ("tensorflow", "openvino"): (
        "failed",
        "ExportError",
        "No conversion rule found for operations: BesselI0",
    ),
}
NO_LOWERING[("torch", "openvino_f32")] = NO_LOWERING[("torch", "openvino")]
NO_LOWERING[("tensorflow", "openvino_f32")] = NO_LOWERING[("tensorflow", "openvino")]


@pytest.mark.parametrize(("framework", "device"), sorted(PACKAGES))
def test_a_case_runs_end_to_end_on_the_path(framework: str, device: str, case_repo) -> None:
    """Through the real runner (worker, harness, supervisor): the runs row names the path, its
    compiler and runtime; a function that exports matches eager and passes as `compiled` with its
    exports counted; one the path cannot take is recorded with its stage."""
    _needs(framework, device)
    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.supervisor import run

    case_repo.add(framework, "export_path", CASES[(framework, device)])
    paths = Paths.under(case_repo.root)
    spec = RunSpec(framework=framework, device=device, mode="compiled", repeats=1, timeout_s=600)
    run_id = run(spec, paths, log=lambda message: None)
    row = pq.read_table(paths.runs_dir / "portability" / f"{run_id}.parquet").to_pylist()[0]
    path = devices.path_named(device)
    assert (row["device"], row["mode"], row["status"]) == (device, "compiled", "complete")
    assert (row["compiler"], row["runtime"]) == (path.compiler(framework, "compiled"), path.runtime)
    assert row["driver"].startswith(f"{path.runtime} ")  # onnxruntime 1.32.0 (CPUExecutionProvider), ...
    if path.runtime == "openvino":
        build = json.loads(row["build"])
        pinned = {"INFERENCE_PRECISION_HINT": "f32"} if device == "openvino_f32" else {}
        assert build["openvino_config"] == pinned
        assert device != "openvino_f32" or build["inference_precision"] == "f32"
    shard = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
    results = {r["subtest"]: r for r in shard}
    exported = results["test_exports"]
    assert (exported["outcome"], exported["execution"]) == ("passed", "compiled"), exported["error_message"]
    assert exported["device_compiles"] >= 1 and exported["host_fallback_ops"] == []
    assert (exported["compiler"], exported["runtime"]) == (row["compiler"], row["runtime"])
    outcome, error_type, words = NO_LOWERING[(framework, device)]
    failed = results["test_no_lowering"]
    assert (failed["outcome"], failed["error_type"]) == (outcome, error_type), failed["error_message"]
    assert words in failed["error_message"]


def test_openvino_stage_errors_are_not_hidden_in_dynamos_wrapper(monkeypatch) -> None:
    """A graph OpenVINO's torch backend cannot take is ExportError, as itself (the census met one on
    addcdiv: dynamo's BackendCompilerFailed around it), never a silent inductor run."""
    _needs("torch", "openvino")
    import torch

    from portability_data.runner.devices import openvino

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for("torch", "openvino")

    def refusing(subgraph, example_inputs):
        raise openvino.ExportError("openvino torch.compile backend", RuntimeError("SymIntArrayRef expected"))

    backend.backend_fn = refusing
    backend.start_test("compiled")
    with pytest.raises(openvino.ExportError, match=r"openvino conversion failed .*SymIntArrayRef"):
        backend.compile(lambda x: torch.sin(x) + 1)(torch.ones(3))


def test_openvino_names_the_ops_of_a_partition_given_back_inside_another(monkeypatch) -> None:
    """A recompiled graph (a third shape of `mT`) has a partition OpenVINO gives back to PyTorch
    (perm_fallback) wrapped in another OpenVINOGraphModule: the harness once read `.gm.graph` of the
    wrapper and raised AttributeError (the torch openvino census of 2026-12-06: mT, mH, fft.*). Its
    ops are named as a fallback, and the rule table puts the old error on the harness."""
    _needs("torch", "openvino")
    import torch

    from portability_data.runner.failures import classify_failure_detail

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for("torch", "openvino")
    backend.start_test("compiled")
    transposed = backend.compile(lambda t: t.mT)
    for shape in [(5, 5), (5, 5, 5), (2, 5, 5)]:
        sample = torch.randn(shape)
        assert torch.equal(transposed(sample), sample.mT)
    assert backend.left_to_framework()["aten::transpose"] >= 3
    message = "'OpenVINOGraphModule' object has no attribute 'graph'"
    category, rule, _ = classify_failure_detail("torch", "AttributeError", message, outcome="failed")
    assert (category, rule) == ("harness", "harness_openvino_nested_partition")


def test_openvino_records_the_inference_precision_it_ran_float32_models_at(monkeypatch) -> None:
    """On a CPU with bf16 instructions OpenVINO runs a float32 model in bf16 unless told otherwise
    (this machine: bmm 0.14 relative error by default, 5e-7 with f32): the runs row says which."""
    _needs("torch", "openvino")
    import openvino

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    facts = devices.backend_for("torch", "openvino").device_facts()
    expected = openvino.Core().get_property("CPU", "INFERENCE_PRECISION_HINT")
    assert facts["inference_precision"] == expected.get_type_name()
    assert facts["inference_precision"] in ("bf16", "f32", "f16")


def test_a_call_with_nothing_to_export_runs_on_the_host_and_says_not_routed(monkeypatch) -> None:
    """Real torch.onnx: a call whose result holds no tensor and changes no input (Tensor.size(),
    torch.is_grad_enabled()) has nothing for a model to hold; it runs in the host's Python and the
    call says not_routed. An in-place op that fails to export (returning None), one that returns a
    tensor and fails, and one that raises when run keep their ExportError; one that exports is
    compiled."""
    _needs("torch", "onnxruntime")
    import torch

    from portability_data.runner.devices import onnxruntime

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for("torch", "onnxruntime")
    x = torch.tensor([3.0, 1.0, 2.0])

    size = backend.compile(lambda t: t.size())
    assert size(x) == torch.Size([3]) and size.execution == "not_routed"
    assert size(x) == torch.Size([3])  # the same signature again: on the host, no second export
    grad = backend.compile(lambda t: torch.is_grad_enabled())
    assert grad(x) is True and grad.execution == "not_routed"

    def sort_in_place(t: torch.Tensor) -> None:
        t.copy_(torch.sort(t, stable=True).values)  # aten.sort.stable: no ONNX function

    def sort_out(t: torch.Tensor) -> torch.Tensor:
        return torch.sort(t, stable=True).values

    for fn in (sort_in_place, sort_out):
        call = backend.compile(fn)
        with pytest.raises(onnxruntime.ExportError, match="sort"):
            call(x.clone())
        assert call.execution == "compiled"
    exported = backend.compile(lambda t: torch.sin(t) + 1)
    assert torch.allclose(exported(x), torch.sin(x) + 1) and exported.execution == "compiled"


def test_a_sparse_or_ragged_result_is_something_to_export(monkeypatch) -> None:
    """Real tf2onnx: tf.sets.intersection returns a SparseTensor and tf2onnx has no conversion for
    its op; that is a failure of the path, not a call with nothing to export."""
    _needs("tensorflow", "onnxruntime")
    import tensorflow as tf

    from portability_data.runner.devices import onnxruntime

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for("tensorflow", "onnxruntime")
    call = backend.compile(lambda a, b: tf.sets.intersection(a, tf.sparse.from_dense(b)))
    a, b = tf.constant([[1, 2, 3], [4, 5, 6]]), tf.constant([[2, 3, 9], [6, 7, 8]])
    with pytest.raises(onnxruntime.ExportError):
        call(a, b)
    assert call.execution == "compiled"


def test_a_bfloat16_array_is_fed_to_onnx_runtime_and_read_back(monkeypatch) -> None:
    """Real jax2onnx and ONNX Runtime: ONNX Runtime's `run` cannot bind ml_dtypes' bfloat16 (NumPy
    type 256), so the harness feeds bfloat16 as an OrtValue of ONNX's BFLOAT16 type and copies a
    bfloat16 output back out of its OrtValue. A model ONNX Runtime has bfloat16 kernels for runs and
    matches JAX bit for bit (transpose; casts in and out of bfloat16); one it has none for (Add) fails
    at load, ONNX Runtime's own failure, no longer our feed's."""
    _needs("jax", "onnxruntime")
    import jax.numpy as jnp
    import numpy as np

    from portability_data.runner.devices import onnxruntime

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for("jax", "onnxruntime")
    x = jnp.array([[1.5, 2.25, -3.0], [4.0, 5.0, 0.0078125]], dtype=jnp.bfloat16)
    for fn in (jnp.transpose, lambda a: (a.astype(jnp.float32) * 3).astype(jnp.bfloat16)):
        call = backend.compile(fn)
        got, want = call(x), fn(x)
        assert call.execution == "compiled" and got.dtype == want.dtype == jnp.bfloat16
        np.testing.assert_array_equal(np.asarray(got).view(np.uint16), np.asarray(want).view(np.uint16))
    widened = backend.compile(lambda a: a.astype(jnp.float32) / 3)
    np.testing.assert_allclose(np.asarray(widened(x)), np.asarray(x.astype(jnp.float32) / 3), rtol=1e-6)
    with pytest.raises(onnxruntime.RuntimeLoadError, match="Could not find an implementation for Add"):
        backend.compile(lambda a: a + a)(x)


def test_tf2onnx_writing_a_bfloat16_input_as_float16_is_an_export_failure(monkeypatch) -> None:
    """Real tf2onnx: it writes a bfloat16 tensor as FLOAT16 (tf_utils.py's dtype map), a model of
    another dtype than the function's; the export stage names the input and both dtypes, and rule
    export_input_retyped reads it as a type failure (the exporter's, not ONNX Runtime's)."""
    _needs("tensorflow", "onnxruntime")
    import tensorflow as tf

    from portability_data.runner import failures
    from portability_data.runner.devices import onnxruntime

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for("tensorflow", "onnxruntime")
    call = backend.compile(lambda a: tf.transpose(a))
    with pytest.raises(onnxruntime.ExportError, match="as float16 for a bfloat16 array") as raised:
        call(tf.constant([[1.5, 2.25], [-3.0, 4.0]], dtype=tf.bfloat16))
    detail = failures.classify_failure_detail("tensorflow", "ExportError", str(raised.value))
    assert detail == ("type_failure", "export_input_retyped", "export_unsupported_dtype")
    float32 = backend.compile(lambda a: tf.transpose(a))
    assert float32(tf.constant([[1.0, 2.0]])).numpy().tolist() == [[1.0], [2.0]]


def test_jax2onnx_exports_a_function_in_its_own_precision_whatever_the_x64_mode(monkeypatch) -> None:
    """Real jax2onnx and ONNX Runtime, with JAX's x64 mode on (as many cases turn it on): a float32
    function exports as float32 and a float64 one as float64, each matching JAX; jax2onnx writes
    every float32 as double when its double precision is on (before 2026-12-07 the harness turned it
    on with x64, and every float32 input was refused its array), so a function mixing float32 with
    an int64 input is an export failure naming the retyped input (rule export_input_retyped)."""
    _needs("jax", "onnxruntime")
    import jax
    import jax.numpy as jnp
    import numpy as np

    from portability_data.runner import failures
    from portability_data.runner.devices import onnxruntime

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    was = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", True)
    try:
        backend = devices.backend_for("jax", "onnxruntime")
        for dtype in (jnp.float32, jnp.float64):
            x = jnp.linspace(0.5, 3.0, 6, dtype=dtype).reshape(2, 3)
            call = backend.compile(lambda a: jnp.sin(a) * 2 + a.sum())
            got, want = call(x), jnp.sin(x) * 2 + x.sum()
            assert call.execution == "compiled" and got.dtype == want.dtype == dtype
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        mixed = backend.compile(lambda a, i: a[i])
        with pytest.raises(onnxruntime.ExportError, match="as double for a float32 array") as raised:
            mixed(jnp.ones(4, jnp.float32), jnp.asarray(2, jnp.int64))
        detail = failures.classify_failure_detail("jax", "ExportError", str(raised.value))
        assert detail == ("type_failure", "export_input_retyped", "export_unsupported_dtype")
    finally:
        jax.config.update("jax_enable_x64", was)


def test_a_tensor_the_function_closes_over_is_fed_to_the_model_tf2onnx_made_of_it(monkeypatch) -> None:
    """Real tf2onnx and ONNX Runtime: the harness passes a structure of tensors and Python values as
    a constant, which the traced function closes over, and tf2onnx keeps each captured tensor as a
    model input (not a constant). The converted model is the function: it runs with the captured
    tensors fed and matches TensorFlow (before 2026-12-07: "Required inputs ... are missing")."""
    _needs("tensorflow", "onnxruntime")
    import collections

    import tensorflow as tf

    from portability_data.runner.timing import Timer

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    point = collections.namedtuple("point", "x y")
    s1 = [point(tf.constant([1.0, 2.0]), 3), {"k": tf.constant(4.0)}]
    s2 = [point(tf.constant([10.0, 20.0]), 30), {"k": tf.constant(40.0)}]
    timer = Timer(devices.backend_for("tensorflow", "onnxruntime"), "compiled", 0)
    out = timer(tf.nest.map_structure, lambda a, b: a + b, s1, s2)
    assert out[0].x.numpy().tolist() == [11.0, 22.0] and int(out[0].y) == 33 and float(out[1]["k"]) == 44.0
    assert timer.executions == ["compiled"]
    # a captured bfloat16 tensor tf2onnx writes as float16, as it does an argument: named at export
    from portability_data.runner.devices import onnxruntime

    half = [tf.constant([1.5, 2.5], dtype=tf.bfloat16), 1]
    with pytest.raises(onnxruntime.ExportError, match="as float16 for a bfloat16 array"):
        timer(tf.nest.map_structure, lambda a: a * 2, half)


@pytest.mark.parametrize("device", ["onnxruntime", "openvino"])
def test_a_tensorflow_trace_error_on_an_export_path_is_its_cause(device: str, monkeypatch) -> None:
    """Real tf.function under tf2onnx and OpenVINO's TensorFlow frontend: a trace error reads "in
    user code:", the user's frames, then the cause; the export stage's message is the cause, named
    once (before 2026-12-07 it was the frames)."""
    _needs("tensorflow", device)
    import tensorflow as tf

    def branches_on_a_tensor(t):
        if t > 0:  # a Python if on a 3-element tensor: autograph refuses the condition
            return t
        return -t

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    call = devices.backend_for("tensorflow", device).compile(branches_on_a_tensor)
    with pytest.raises(Exception, match="failed") as raised:
        call(tf.constant([1.0, -2.0, 3.0]))
    message = str(raised.value)
    assert "): ValueError: condition of if statement" in message and message.count("ValueError") == 1, message
    assert "in user code" not in message and "File " not in message


@pytest.mark.parametrize(
    ("device", "function"),
    [("onnxruntime", "sets.intersection"), ("openvino", "linspace"), ("openvino_f32", "linspace")],
)
def test_a_tensorflow_result_comes_back_in_the_function_s_own_structure(device, function, monkeypatch):
    """Real tf2onnx / OpenVINO: a SparseTensor result comes back from its three component outputs
    (tf.sets.intersection on ONNX Runtime), and a model to which OpenVINO's frontend gave more
    outputs than the function has (tnp.linspace: 4 for 1) is read by the function's output names
    (before 2026-12-07 both failed packing the outputs: "The target structure is of type ...")."""
    _needs("tensorflow", device)
    import numpy as np
    import tensorflow as tf

    from portability_data.runner.timing import Timer

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    timer = Timer(devices.backend_for("tensorflow", device), "compiled", 0)
    if function == "sets.intersection":
        a = tf.constant([[1, 2, 3], [4, 5, 6]], tf.int64)
        b = tf.constant([[2, 3, 9], [6, 7, 4]], tf.int64)
        got = timer(tf.sets.intersection, a, b)
        assert isinstance(got, tf.SparseTensor)
        expected = tf.sparse.to_dense(tf.sets.intersection(a, b))
        assert tf.sparse.to_dense(got).numpy().tolist() == expected.numpy().tolist() == [[2, 3], [4, 6]]
    else:
        got = timer(lambda start: tf.experimental.numpy.linspace(start, 5.0, num=4), tf.constant(2.0))
        np.testing.assert_allclose(got.numpy(), [2.0, 3.0, 4.0, 5.0], rtol=1e-6)
    assert timer.executions == ["compiled"]


@pytest.mark.parametrize("device", ["openvino", "openvino_f32"])
def test_a_model_openvino_converted_without_the_function_s_outputs_is_its_conversion_failure(
    device, monkeypatch
):
    """Real OpenVINO: its TensorFlow frontend drops results that are constants (Normal.param_shapes
    of a Python list: a model of no output for the function's two). The conversion failed, named
    with the outputs lost, and is read as the path's (before 2026-12-07 the harness raised at run
    time that the model had no output of the name, read as its own: rule
    harness_openvino_merged_outputs). A function computing from its input keeps its outputs."""
    _needs("tensorflow", device)
    import numpy as np
    import tensorflow as tf

    from portability_data.runner import failures
    from portability_data.runner.devices import openvino
    from portability_data.runner.timing import Timer

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    timer = Timer(devices.backend_for("tensorflow", device), "compiled", 0)
    normal = tf.compat.v1.distributions.Normal
    with pytest.raises(
        openvino.ExportError, match=r"0 output\(s\) for the function's 2; lost: Identity"
    ) as raised:
        timer(normal.param_shapes, [2, 3])
    category, rule, _ = failures.classify_failure_detail("tensorflow", "ExportError", str(raised.value))
    assert (category, rule) == ("other", "export_failed")
    shapes = timer(normal.param_shapes, tf.constant([2, 3]))
    np.testing.assert_array_equal(shapes["loc"].numpy(), [2, 3])
