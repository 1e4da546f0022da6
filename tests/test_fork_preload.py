"""The confirmations' forking process preloads the runner's case modules and the device path's
packages (issue 57): a confirmation must stay alone and give the same verdict whether they were
preloaded or left to the child.

Each failing pair below is confirmed twice through the real AloneRunner (a child forked per pair):
once with PORTABILITY_FORK_PRELOAD_MORE=0 (what the forking process preloaded before issue 57),
once with them preloaded. Both must fail alike, the preloaded one must say what it preloaded
(`ready`, journaled with the verdict), and preloading must start no thread in the forking process
(its native thread count is the same in both)."""

from __future__ import annotations

from pathlib import Path

import pytest

from portability_data.runner import fork_worker
from tests.conftest import census_checkout

# A real failing census pair per framework on ONNX Runtime: (origin, entry, dtype), its verdict,
# and the path's packages its forking process preloads. Both reach their exporter (tf2onnx finds
# no conversion for the op; jax2onnx has no lowering for eig), so the preloaded exporter is used.
PAIRS = {
    "tensorflow": (("mapped", "linalg.slogdet", "float32"), ("failed", "ExportError")),
    "jax": (("numpy", "linalg.eigvals", "float32"), ("failed", "ExportError")),
}


def confirm(root: Path, framework: str, node: str, scratch: Path, preload: str, monkeypatch) -> dict:
    """The verdict of one forked confirmation of `node` on onnxruntime, with the path preload on
    ("1") or off ("0")."""
    from portability_data.runner.confirmation import AloneRunner
    from portability_data.runner.spec import Paths, RunSpec

    monkeypatch.setenv(fork_worker.PRELOAD_MORE_ENV, preload)
    spec = RunSpec(
        framework=framework, device="onnxruntime", mode="compiled", repeats=1, timeout_s=600, suite="census"
    )
    scratch.mkdir()
    alone = AloneRunner(spec, Paths.under(root), scratch, scratch / "confirm.log", "fork")
    try:
        return alone.run(node)
    finally:
        alone.close()


@pytest.mark.parametrize("framework", sorted(PAIRS))
def test_path_preload_keeps_the_confirmation_alone_and_its_verdict(
    framework: str, tmp_path: Path, monkeypatch
) -> None:
    for name in ("onnx", "onnxruntime", "tf2onnx" if framework == "tensorflow" else "jax2onnx"):
        pytest.importorskip(name, reason=f"{name} is not installed (the onnxruntime path's extra)")
    (origin, entry, dtype), verdict = PAIRS[framework]
    root = census_checkout(tmp_path / "repo", framework, {origin: {entry: [dtype]}})
    node = f"cases/{framework}/census/test_{origin}.py::test_entry[{entry}-{dtype}]"
    before = confirm(root, framework, node, tmp_path / "before", "0", monkeypatch)
    after = confirm(root, framework, node, tmp_path / "after", "1", monkeypatch)
    assert before["worker"] == after["worker"] == "fork"
    assert (before["outcome"], before["error_type"]) == verdict
    assert (after["outcome"], after["error_type"]) == verdict
    wanted = {
        *fork_worker.PATH_MODULES["onnxruntime"][framework],
        *fork_worker.RUNNER_MODULES,
        fork_worker.REGISTRY,
        fork_worker.PYTEST_PLUGINS,
    }
    assert wanted <= set(after["preloaded"]) and not wanted & set(before["preloaded"])
    assert after["native_threads"] == before["native_threads"]  # the preload started no thread


def test_path_modules_leave_out_what_starts_a_thread_or_touches_a_device() -> None:
    """Only the paths measured to be safe preload, none of the rejected packages, and the switch
    turns them off."""
    assert fork_worker.path_modules("jax", "onnxruntime", {}) == ("onnx", "jax2onnx")
    assert fork_worker.path_modules("jax", "onnxruntime", {fork_worker.PRELOAD_MORE_ENV: "0"}) == ()
    assert fork_worker.path_modules("tensorflow", "openvino", {}) == ()
    assert fork_worker.path_modules("torch", "cpu", {}) == ()
    named = {
        m for by_framework in fork_worker.PATH_MODULES.values() for ms in by_framework.values() for m in ms
    }
    # onnxruntime starts a native thread at import, openvino's telemetry a Python thread, and
    # jax2onnx's plugins run JAX computations (XLA's CPU client) at import
    assert not {m for m in named if m.split(".")[0] in ("onnxruntime", "openvino")}
    assert not {m for m in named if m.startswith("jax2onnx.plugins")}
