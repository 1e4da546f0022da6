"""The IREE paths (issue 53): iree (JAX through jax.export's StableHLO, PyTorch through iree-turbine's
AOT export; compiled by IREE for llvm-cpu and run in its runtime) and iree_torch_mlir (PyTorch through
torch-mlir's StableHLO lowering, the same compiler and runtime). Each runs a curated-style case end
to end through the real runner: a function that compiles and matches the framework's eager result,
and one that fails with its stage and the op refused named. Compiled mode only: eager is refused
with what to do; a missing package says what to install.

The packages are the `iree` extra, in `.[all]`: a test here is skipped only where its package is not
installed, and says which; under CI (CI=true, .ci/run) a missing package fails instead."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

import pyarrow.parquet as pq
import pytest

from portability_data.runner import devices
from portability_data.runner.backends import DeviceUnavailableError
from portability_data.tables import contracts

PACKAGES = {
    ("jax", "iree"): ("iree.compiler", "iree.runtime"),
    ("torch", "iree"): ("iree.compiler", "iree.runtime", "iree.turbine.aot"),
    ("torch", "iree_torch_mlir"): ("iree.compiler", "iree.runtime", "torch_mlir.fx"),
}


def _needs(framework: str, device: str) -> None:
    """Skip (fail under CI) where the path's packages are not installed. Looked up, not imported:
    torch-mlir's MLIR bindings abort the process (SIGABRT in _site_initialize) when another MLIR
    binding (jaxlib's, IREE's) is already loaded, as it is in this test process; the path's own
    worker imports them alone."""
    for name in PACKAGES[(framework, device)]:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found and os.environ.get("CI"):
            pytest.fail(f"{name} is not installed: CI installs .[all], which holds the iree extra")
        if not found:
            pytest.skip(f"{name} is not installed (the {device} path's iree extra)")


def test_the_paths_are_registered_compiled_only_with_their_runtime() -> None:
    assert {"iree", "iree_torch_mlir"} <= set(contracts.DEVICES)
    iree, torch_mlir = devices.path_named("iree"), devices.path_named("iree_torch_mlir")
    assert (iree.runtime, torch_mlir.runtime) == ("iree", "iree")
    assert devices.compiler_of("jax", "iree", "compiled") == "jax.export"
    assert devices.compiler_of("torch", "iree", "compiled") == "iree.turbine"
    assert devices.compiler_of("torch", "iree_torch_mlir", "compiled") == "torch_mlir"
    for path in (iree, torch_mlir):
        assert all(backend.modes == ("compiled",) for backend in path.backends.values())
    with pytest.raises(DeviceUnavailableError, match="JAX exports StableHLO itself"):
        devices.backend_for("jax", "iree_torch_mlir")
    with pytest.raises(DeviceUnavailableError, match="TensorFlow"):
        devices.backend_for("tensorflow", "iree")


@pytest.mark.parametrize(("framework", "device"), sorted(PACKAGES))
def test_eager_mode_is_refused_with_what_to_do(framework: str, device: str, monkeypatch) -> None:
    _needs(framework, device)
    monkeypatch.setenv("PORTABILITY_MODE", "eager")
    with pytest.raises(DeviceUnavailableError, match=r"compiled mode only .*use --mode compiled"):
        devices.backend_for(framework, device)


@pytest.mark.parametrize(
    ("framework", "device", "missing"),
    [
        ("jax", "iree", "iree.compiler"),
        ("torch", "iree", "iree.turbine.aot"),
        ("torch", "iree_torch_mlir", "torch_mlir.fx"),
    ],
)
def test_a_missing_package_names_what_to_install(framework, device, missing, monkeypatch) -> None:
    importlib.import_module(framework)  # the framework itself is pinned: only the path's package is absent
    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    monkeypatch.setitem(sys.modules, missing, None)  # `import <missing>` raises ImportError
    # and never its parent package: torch-mlir's bindings abort beside jaxlib's (see _needs)
    if missing.startswith("torch_mlir"):
        monkeypatch.setitem(sys.modules, "torch_mlir", None)
    with pytest.raises(
        DeviceUnavailableError, match=rf"{missing} is missing .*pip install -e \"\.\[iree\]\""
    ):
        devices.backend_for(framework, device)


CASES = {
    ("jax", "iree"): """\
        import jax.numpy as jnp
        import numpy as np

        def test_compiles(device, timed):
            x = jnp.linspace(2.0, -2.0, 12).reshape(3, 4)
            np.testing.assert_array_equal(timed(jnp.sort, x, axis=1), jnp.sort(x, axis=1))
            values, indices = timed(lambda a: (jnp.cumsum(a, 0), jnp.argmax(a, 1)), x)
            np.testing.assert_allclose(values, jnp.cumsum(x, 0), rtol=1e-6)
            np.testing.assert_array_equal(indices, jnp.argmax(x, 1))

        def test_no_lowering(device, timed):
            timed(jnp.linalg.eig, jnp.eye(3) + 1)

        def test_nothing_to_export(device, timed):
            assert timed(lambda a: str(a.dtype), jnp.ones(3)) == "float32"

        def test_unused_input(device, timed):
            x = jnp.linspace(2.0, -2.0, 12).reshape(3, 4)
            np.testing.assert_array_equal(timed(jnp.zeros_like, x), jnp.zeros((3, 4)))
        """,
    ("torch", "iree"): """\
        import torch

        def test_compiles(device, timed):
            x = torch.linspace(-2, 2, 12).reshape(3, 4).flip(1)
            out = timed(torch.sort, x, 1)
            want = torch.sort(x, 1)
            assert torch.equal(out.values, want.values) and torch.equal(out.indices, want.indices)
            assert torch.allclose(timed(torch.cumprod, x, 0), torch.cumprod(x, 0))

        def test_no_lowering(device, timed):
            timed(torch.linalg.eig, torch.eye(3) + 1)

        def test_nothing_to_export(device, timed):
            assert timed(lambda a: a.size(), torch.ones(3)) == torch.Size([3])
        """,
    ("torch", "iree_torch_mlir"): """\
        import torch

        def test_compiles(device, timed):
            x = torch.linspace(-2, 2, 12).reshape(3, 4).flip(1)
            out = timed(torch.sort, x, 1)
            want = torch.sort(x, 1)
            assert torch.equal(out.values, want.values) and torch.equal(out.indices, want.indices)

        def test_no_lowering(device, timed):
            x = torch.linspace(-2, 2, 12).reshape(3, 4)
            assert torch.allclose(timed(torch.cumprod, x, 0), torch.cumprod(x, 0))
        """,
}

# What the subtest that cannot go all the way records: (error_type, words of its message). The two
# PyTorch routes part on cumprod: IREE's torch-dialect lowering has it, torch-mlir's StableHLO has not.
NO_LOWERING = {
    ("jax", "iree"): ("CompileError", "op(s) stablehlo.custom_call @lapack_sgeev_ffi"),
    ("torch", "iree"): ("CompileError", "op(s) torch.aten.linalg_eig"),
    ("torch", "iree_torch_mlir"): ("LowerError", "op(s) torch.aten.cumprod"),
}


@pytest.mark.parametrize(("framework", "device"), sorted(PACKAGES))
def test_a_case_runs_end_to_end_on_the_path(framework: str, device: str, case_repo) -> None:
    """Through the real runner (worker, harness, supervisor): the runs row names the path, its
    compiler, runtime and IREE's versions; a function that compiles matches eager and passes as
    `compiled` with its modules counted; one the path cannot take is recorded with its stage and op;
    one with nothing to export runs on the host, `not_routed`."""
    _needs(framework, device)
    from importlib import metadata

    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.supervisor import run

    case_repo.add(framework, "iree_path", CASES[(framework, device)])
    paths = Paths.under(case_repo.root)
    spec = RunSpec(framework=framework, device=device, mode="compiled", repeats=1, timeout_s=600)
    run_id = run(spec, paths, log=lambda message: None)
    row = pq.read_table(paths.runs_dir / "portability" / f"{run_id}.parquet").to_pylist()[0]
    path = devices.path_named(device)
    assert (row["device"], row["mode"], row["status"]) == (device, "compiled", "complete")
    assert (row["compiler"], row["runtime"]) == (path.compiler(framework, "compiled"), "iree")
    versions = metadata.version("iree-base-compiler"), metadata.version("iree-base-runtime")
    assert row["driver"] == f"iree compiler {versions[0]} runtime {versions[1]} (llvm-cpu, local-task)"
    assert "llvm-cpu" in row["device_model"]
    shard = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
    results = {r["subtest"]: r for r in shard}
    compiled = results["test_compiles"]
    assert (compiled["outcome"], compiled["execution"]) == ("passed", "compiled"), compiled["error_message"]
    assert compiled["device_compiles"] >= 1 and compiled["host_fallback_ops"] == []
    assert (compiled["compiler"], compiled["runtime"]) == (row["compiler"], row["runtime"])
    error_type, words = NO_LOWERING[(framework, device)]
    failed = results["test_no_lowering"]
    assert (failed["outcome"], failed["error_type"]) == ("failed", error_type), failed["error_message"]
    assert words in failed["error_message"]
    assert failed["failure_category"] == "not_implemented"
    if device == "iree_torch_mlir":
        return  # torch-mlir lowers a function of Python scalars too (they come back as 0-d tensors)
    # a call with nothing to export runs on the host (runner/devices/nothing_to_export.py)
    host = results["test_nothing_to_export"]
    assert (host["outcome"], host["execution"]) == ("passed", "not_routed"), host["error_message"]
    if framework == "jax":  # an input the function does not read stays in the module's signature
        unused = results["test_unused_input"]  # (jax.jit drops it: IREE refused 49 census pairs so)
        assert (unused["outcome"], unused["execution"]) == ("passed", "compiled"), unused["error_message"]


def test_the_op_refused_is_named_not_the_constant_iree_reports() -> None:
    """iree-compile reports the torch constant an unlowered op consumes ("failed to legalize
    operation 'torch.constant.int'"); the message names the op that uses it, found in the source."""
    from portability_data.runner.devices.iree import _ops_named

    source = """module @module {
  func.func @main(%arg0: !torch.vtensor<[3,4],f32>) -> !torch.vtensor<[3,4],complex<f32>> {
    %none = torch.constant.none
    %int-1 = torch.constant.int -1
    %0 = torch.aten.fft_fft %arg0, %none, %int-1, %none : !torch.vtensor<[3,4],f32>
    return %0 : !torch.vtensor<[3,4],complex<f32>>
  }
}"""
    diagnostics = "<stdin>:4:14: error: failed to legalize operation 'torch.constant.int': %0 = ..."
    assert _ops_named(diagnostics, source) == ["torch.aten.fft_fft"]
    custom = (
        "error: failed to legalize operation 'stablehlo.custom_call': %6:5 = "
        '"stablehlo.custom_call"(%arg0) <{call_target_name = "lapack_sgeev_ffi"}>'
    )
    assert _ops_named(custom) == ["stablehlo.custom_call @lapack_sgeev_ffi"]


def test_the_reports_xla_section_says_torch_xla_ends_at_2_9_and_which_path_follows(repo_root) -> None:
    """The XLA section of the report (report/host_fallback.py) states plainly where torch_xla ends
    and names the path that follows PyTorch past it; its link reaches the docs' section."""
    import re

    from portability_data.report.host_fallback import TORCH_XLA_ENDS

    assert TORCH_XLA_ENDS.startswith("torch_xla ends at 2.9")
    assert "`iree` device" in TORCH_XLA_ENDS and "iree-turbine" in TORCH_XLA_ENDS
    anchor = re.search(r"DEVICE_PATHS\.md#([\w-]+)\)", TORCH_XLA_ENDS).group(1)
    headings = (repo_root / "docs" / "DEVICE_PATHS.md").read_text().splitlines()
    slugs = {
        re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in headings
        if line.startswith("#")
    }
    assert anchor in slugs


def test_jax_arrays_reach_iree_as_jax_runs_them_and_iree_s_demotion_is_its_own(monkeypatch) -> None:
    """Real jax.export and IREE. Without x64, JAX runs a float64 or int64 NumPy array as 32-bit and
    exports the function so: the array is fed as JAX runs it (before 2026-12-07 it was fed as given
    and the module refused it, a failure of our feed). With x64 on, a float64 function exports as
    float64 and iree-compile demotes it to float32 by default (its ConvertTypesPass): IREE's own
    type failure, rule iree_input_demoted."""
    _needs("jax", "iree")
    import jax
    import jax.numpy as jnp
    import numpy as np

    from portability_data.runner import failures
    from portability_data.runner.devices import iree

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for("jax", "iree")
    was = bool(jax.config.jax_enable_x64)
    try:
        jax.config.update("jax_enable_x64", False)
        take = backend.compile(lambda a, i: jnp.sin(a)[i])
        a, i = np.linspace(0.5, 3.0, 6), np.asarray(4, np.int64)  # float64, int64: NumPy's defaults
        got, want = take(a, i), jnp.sin(a)[i]
        assert take.execution == "compiled" and got.dtype == want.dtype == jnp.float32
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
        jax.config.update("jax_enable_x64", True)
        wide = backend.compile(jnp.sin)
        with pytest.raises(iree.RuntimeRunError, match=r"expected f32 .* but have f64") as raised:
            wide(jnp.linspace(0.5, 3.0, 6, dtype=jnp.float64))
        detail = failures.classify_failure_detail("jax", "RuntimeRunError", str(raised.value))
        assert detail == ("type_failure", "iree_input_demoted", "export_unsupported_dtype")
    finally:
        jax.config.update("jax_enable_x64", was)


@pytest.mark.parametrize("device", ["iree", "onnxruntime"])
def test_a_prng_key_array_reaches_a_jax_export_path_as_its_key_data(device: str, monkeypatch) -> None:
    """Real jax.export + IREE and jax2onnx + ONNX Runtime: a PRNG key argument (key<fry>) goes to the
    model as its key data and a key result comes back a key of the same implementation, as
    jax.export lowers them (before 2026-12-07 the harness typed the key as a plain dtype and raised
    "canonicalize_dtype called on extended dtype" before exporting: 66 subtests of JAX's curated
    cases on onnxruntime). Where the exporter has no rule for the key's ops, that is its own failure."""
    if device == "iree":
        _needs("jax", device)
    else:  # the onnxruntime path's packages (tests/test_export_paths.py PACKAGES)
        for name in ("onnx", "onnxruntime", "jax2onnx"):
            pytest.importorskip(name, reason=f"{name} is not installed (the onnxruntime path's extra)")
    import jax
    import numpy as np

    from portability_data.runner import failures

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    backend = devices.backend_for("jax", device)
    key = jax.random.key(3)

    def path_s_own(call: Any, *args: Any) -> Any:
        """The call's result, or None where it raised the path's own failure (never a harness
        rule's): jax2onnx writes jax.random.normal as ONNX RandomNormal, which ignores the key and
        which ONNX Runtime 1.2x has no kernel for; it has no rule for random_split."""
        try:
            return call(*args)
        except Exception as error:
            category, rule, _ = failures.classify_failure_detail("jax", type(error).__name__, str(error))
            assert device == "onnxruntime" and category != "harness", (rule, error)
            assert "canonicalize_dtype" not in str(error)
            return None

    draw = backend.compile(lambda k, scale: jax.random.normal(k, (4,)) * scale)
    got = path_s_own(draw, key, np.float32(2.0))
    if got is not None:
        assert draw.execution == "compiled"
        want = jax.random.normal(key, (4,)) * 2.0
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    second = path_s_own(backend.compile(lambda k: jax.random.split(k)[1]), key)
    if device == "iree":  # IREE runs both: the key data went in and came back as a key
        assert got is not None and second is not None
    if second is not None:
        assert jax.dtypes.issubdtype(second.dtype, jax.dtypes.prng_key)
        assert jax.random.key_impl(second) == jax.random.key_impl(key)
        want_key = jax.random.split(key)[1]
        np.testing.assert_array_equal(jax.random.key_data(second), jax.random.key_data(want_key))


WRITES_BACK = """
import json, os, sys
import torch
from portability_data.runner import devices

os.environ["PORTABILITY_MODE"] = "compiled"
backend = devices.backend_for("torch", sys.argv[1])
seen = {}
x = torch.zeros(3)
added = backend.compile(lambda t: t.add_(1))
seen["add_"] = [added(x).tolist(), x.tolist(), added.execution]
out = torch.zeros(3, dtype=torch.int64)
negated = backend.compile(lambda t, o: torch.bitwise_not(t, out=o))
seen["out="] = [negated(torch.tensor([1, 2, 3]), out).tolist(), out.tolist(), negated.execution]
transposed = backend.compile(lambda t: t.mT * 2)
seen["mT"] = [transposed(torch.arange(6.0).reshape(2, 3)).tolist(), None, transposed.execution]
mixed = backend.compile(lambda t: (t * 2, t.dim() == 1, t.shape[0]))  # two outputs are constants
got = mixed(torch.ones(3))
seen["constants"] = [got[0].tolist(), got[1], got[2], mixed.execution]
grad = backend.compile(lambda: torch.is_grad_enabled())  # nothing for the device to compute
seen["is_grad_enabled"] = [grad(), grad.execution]
if sys.argv[1] == "iree_torch_mlir":  # two running statistics written, beside the function's output
    import torch.nn.functional as F

    norm = backend.compile(lambda x, mean, var: F.instance_norm(x, mean, var, use_input_stats=True))
    x, mean, var = torch.randn(2, 3, 4), torch.zeros(3), torch.ones(3)
    want_mean, want_var = mean.clone(), var.clone()
    want = F.instance_norm(x, want_mean, want_var, use_input_stats=True)
    got = norm(x, mean, var)
    seen["instance_norm"] = [
        bool(torch.allclose(got, want, atol=1e-5)),
        bool(torch.allclose(mean, want_mean) and torch.allclose(var, want_var)),
        bool(torch.equal(var, torch.ones(3))),  # the statistics did change
    ]
print(json.dumps(seen))
"""


@pytest.mark.parametrize("device", ["iree", "iree_torch_mlir"])
def test_an_input_the_function_writes_is_written_back_and_turbine_s_decompositions_run(
    device: str, tmp_path
) -> None:
    """In place on the IREE paths (runner/devices/torch_exported.py): torch-mlir's module returns
    the written input as an output of its own, iree-turbine's writes the argument's buffer; either
    way the caller's tensor changes as eagerly, and the function's result is its own. The turbine
    route decomposes the program as turbine's own `aot.export(module)` does, so an op it decomposes
    (aten.mT) compiles. Before 2026-12-07: a treespec length mismatch (torch-mlir), the write lost
    and in-place ops and mT refused by iree-compile (turbine). Outputs that are not tensors are the
    trace's constants, returned as such (torch-mlir gave `tensor(True)`, turbine refused the module),
    and a result with no tensor runs on the host. In a process of its own: torch-mlir's MLIR
    bindings abort beside another (see _needs)."""
    import json
    import subprocess

    _needs("torch", device)
    script = tmp_path / "writes_back.py"
    script.write_text(WRITES_BACK)
    done = subprocess.run(
        [sys.executable, str(script), device], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["add_"] == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], "compiled"]
    assert seen["out="] == [[-2, -3, -4], [-2, -3, -4], "compiled"]
    assert seen["mT"] == [[[0.0, 6.0], [2.0, 8.0], [4.0, 10.0]], None, "compiled"]
    # the traced constants come back as the function returns them, not as tensors of the route
    assert seen["constants"] == [[2.0, 2.0, 2.0], True, 3, "compiled"]
    assert seen["is_grad_enabled"] == [True, "not_routed"]
    if device == "iree_torch_mlir":
        assert seen["instance_norm"] == [True, True, False]


def test_a_bfloat16_tensor_reaches_iree_turbine_s_module_and_comes_back(monkeypatch) -> None:
    """torch's `Tensor.numpy()` and `torch.from_numpy` refuse bfloat16, which IREE's runtime takes
    and gives (ml_dtypes' bfloat16): the same bits cross both ways (runner/devices/torch_arrays.py;
    before 2026-12-07 torch's TypeError was read as the runtime's failure)."""
    _needs("torch", "iree")
    import torch

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    call = devices.backend_for("torch", "iree").compile(lambda t: torch.relu(t) * 2)
    result = call(torch.tensor([-1.0, 2.0, 3.5], dtype=torch.bfloat16))
    assert call.execution == "compiled"
    assert result.dtype == torch.bfloat16 and result.tolist() == [0.0, 4.0, 7.0]
    total = devices.backend_for("torch", "iree").compile(lambda t: t.sum())(
        torch.tensor([1.5, 2.0], dtype=torch.bfloat16)
    )
    assert total.shape == () and total.dtype == torch.bfloat16 and total.item() == 3.5  # 0-d stays 0-d
