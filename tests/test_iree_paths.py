"""The IREE paths (issue 53): iree (JAX through jax.export's StableHLO, PyTorch through iree-turbine's
AOT export; compiled by IREE for llvm-cpu and run in its runtime) and iree_torch_mlir (PyTorch through
torch-mlir's StableHLO lowering, the same compiler and runtime). Each runs a curated-style case end
to end through the real runner: a function that compiles and matches the framework's eager result,
and one that fails with its stage and the op refused named. Compiled mode only: eager is refused
with what to do; a missing package says what to install.

The packages are the `iree` extra, in `.[all]`: a test here is skipped only where its package is not
installed, and says which; under CI (CI=true, .ci/run) a missing package fails instead."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import subprocess
import sys
import textwrap

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
    `compiled` with its modules counted; one the path cannot take is recorded with its stage and op."""
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


@pytest.mark.parametrize(("framework", "device"), [("jax", "iree"), ("torch", "iree")])
def test_a_call_with_nothing_to_export_runs_on_the_host_and_says_not_routed(framework, device) -> None:
    """Real jax.export and iree-turbine, in a worker of their own (as the path runs them;
    runner/devices/nothing_to_export.py): a call that fails to export and returns no array runs on
    the host and says not_routed; one that fails and returns an array keeps its ExportError; a
    function that ignores its input (jnp.zeros_like, t.shape) compiles, its unused input kept in the
    module's signature (it was dropped, and IREE refused the call: 49 JAX census pairs until
    2026-12-06); one that exports is compiled."""
    _needs(framework, device)
    script = textwrap.dedent(
        f"""
        import os
        os.environ["PORTABILITY_MODE"] = "compiled"
        from portability_data.runner import devices
        from portability_data.runner.devices import iree
        backend = devices.backend_for({framework!r}, {device!r})

        def outcome(fn, x):
            call = backend.compile(fn)
            try:
                result = call(x)
            except iree.StageError as error:
                return type(error).__name__, call.execution
            return repr(result if not hasattr(result, "shape") else result.tolist()), call.execution
        """
    )
    if framework == "jax":
        script += textwrap.dedent(
            """
            import jax.numpy as jnp
            x = jnp.array([3.0, 1.0, 2.0])
            print(outcome(lambda t: str(t.dtype), x))
            print(outcome(lambda t: t * 2 if t.sum() > 0 else t, x))
            print(outcome(jnp.zeros_like, x))
            print(outcome(lambda t: jnp.sin(t) * 0 + 1, x))
            """
        )
        expected = [
            ("'float32'", "not_routed"),
            ("ExportError", "compiled"),
            ("[0.0, 0.0, 0.0]", "compiled"),
            ("[1.0, 1.0, 1.0]", "compiled"),
        ]
    else:
        script += textwrap.dedent(
            """
            import torch
            x = torch.tensor([3.0, 1.0, 2.0])
            print(outcome(lambda t: t.size(), x))
            print(outcome(lambda t: t * 2 if t.sum().item() > 0 else t, x))
            print(outcome(torch.zeros_like, x))
            print(outcome(lambda t: torch.sin(t) * 0 + 1, x))
            """
        )
        expected = [
            ("torch.Size([3])", "not_routed"),
            ("ExportError", "compiled"),
            ("[0.0, 0.0, 0.0]", "compiled"),
            ("[1.0, 1.0, 1.0]", "compiled"),
        ]
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [ast.literal_eval(line) for line in done.stdout.splitlines() if line.startswith("(")]
    assert lines == expected, done.stdout
