"""Fresh case workers made by fork, for confirmations: one subtest alone, without paying the
framework's import each time.

A failing subtest counts as the framework's failure once it fails again alone in a fresh worker
(supervisor `confirm_failures`). A spawned worker spends most of such a confirmation importing:
here 1.3 s for jax, 2.6 s for torch, 8.7 s for tensorflow, against a fraction of a second for most
subtests. This process does what a worker does before it touches the device (imports pytest, the
harness and the framework) and nothing more: no device, no op, no case. Then, per request, it
forks; the child is the fresh worker: it runs `worker.main` on that one request (device, timer
floor, ready, the subtest, done) and exits, and this process says how it ended (`exited`, the exit
status, negative for a signal). Nothing ran here that a spawned worker would not have done before
its first case, so the child is alone as a spawned one is; no compiled code, cache or earlier
case can be inherited, because none exists yet.

Forking is safe only where no other thread can hold a lock at the fork: the process refuses
(`fatal`) when a Python thread besides the main one exists, and reports its native thread count
(OpenBLAS's server thread, jemalloc's background thread: both libraries re-arm themselves at fork)
in `ready`, which the confirmation journals. The supervisor then falls back to spawned workers.

Before forking it also reads what every child would read first and never changes (`preload`): the
framework's census manifests (parsed once, ~0.5 s each time otherwise); where no CUDA driver can
be reached (a CPU-only build, or every CUDA device hidden, as the runner does for XLA's CPU backend)
the framework's own test databases the census modules collect from (torch's OpInfo, ModuleInfo and
OptimizerInfo: ~5 s per child otherwise); and on XLA's CPU backend the torch_xla modules the device
setup imports (~3.5 s per child otherwise), before the databases, as in a spawned worker: importing
torch_xla rebinds some torch.nn classes, which the ModuleInfo database then holds. A spawned worker
imports the same before its subtest, at its device setup and its collection; nothing of the device
or of any case runs here (torch_xla makes its PJRT client at the first device call, in the child).
It also imports this repository's modules every census case imports (RUNNER_MODULES), the
device path registry and pytest's builtin plugins (0.1-0.2 s per child otherwise), and on an
export path the path's own packages that every child imports at its first compile and that start
no thread and touch no device at import (PATH_MODULES: onnx and jax2onnx for JAX on ONNX Runtime,
1.2-1.6 s per child otherwise on a loaded host; onnx and tf2onnx for TensorFlow, ~0.5 s), but
none that starts a thread at import (ONNX Runtime, OpenVINO) or runs on the device (jax2onnx's
plugins); PORTABILITY_FORK_PRELOAD_MORE=0 leaves all these to the children (as before issue 57,
for benchmarks/bench_confirmations.py's comparison). The census
test modules are not preloaded: the child's worker drops every module under cases/ before its
pytest session (worker._forget_case_modules), so pytest would import them again anyway.
Last it freezes what is alive (as a worker does before its first case), so no child walks the
framework's objects in its own collection again.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

# The framework's test databases its census modules import, read here once instead of once per
# child. Only where no CUDA driver can be reached: torch's test utilities ask CUDA whether it is
# there at import, and a CUDA driver initialised before a fork is unusable in the child.
# (Importing them starts scipy's OpenBLAS server thread, which re-arms at fork like the others.)
TEST_DATABASES = {
    "torch": (
        "torch.testing._internal.common_methods_invocations",
        "torch.testing._internal.common_modules",
        "torch.testing._internal.common_optimizers",
    ),
}
# What the xla device's setup imports (runner.backends.TorchBackend); no thread starts at import.
XLA_MODULES = ("torch_xla", "torch_xla.core.xla_model", "torch_xla.debug.metrics")
# A device path's packages its children import at their first compile, per path and framework;
# kept here, not in devices/<path>.py, whose source is in every shard's harness digest (provenance).
# Only what starts no thread and touches no device at import (issue 57, measured): not onnxruntime
# (its pybind module starts a native thread), not openvino (its telemetry starts a Python thread,
# which makes this process refuse to fork), not jax2onnx's plugins (importing them runs JAX
# computations: XLA's CPU client and its ~20 threads; 13-17 s per child, left to the child).
PATH_MODULES: dict[str, dict[str, tuple[str, ...]]] = {
    "onnxruntime": {
        "jax": ("onnx", "jax2onnx"),
        "tensorflow": ("onnx", "tf2onnx", "tf2onnx.convert"),
    },
}
# This repository's modules every census case imports (its oracles, samples, dtype ledger) and the
# device path registry the child's backend reads: numpy and the standard library only.
RUNNER_MODULES = (
    "portability_data.runner.oracle",
    "portability_data.runner.device_oracle",
    "portability_data.runner.generator",
    "portability_data.runner.promotion",
    "portability_data.runner.nn_samples",
)
REGISTRY = "portability_data.runner.devices.registry"  # its name in `preloaded`
# pytest's builtin plugins, which each child's pytest session imports (~0.06 s; cacheprovider is
# blocked by the worker's arguments) and tomllib, with which it reads pyproject.toml.
PYTEST_PLUGINS = "_pytest.config.default_plugins"  # their name in `preloaded`
PRELOAD_MORE_ENV = "PORTABILITY_FORK_PRELOAD_MORE"  # "0": leave issue 57's preloads to the children


def _emit(stream: TextIO, event: dict[str, Any]) -> None:
    stream.write(json.dumps(event, default=str) + "\n")
    stream.flush()


def native_threads() -> int:
    """Threads of this process as the kernel counts them (Python's and the libraries' own)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1


def cuda_unreachable(framework: str) -> bool:
    """True where asking CUDA whether it is there cannot initialise a driver a child would inherit:
    a build without an accelerator runtime, or a CUDA build whose devices are all hidden
    (CUDA_VISIBLE_DEVICES empty, which worker_process sets for XLA's CPU backend)."""
    if framework != "torch":
        return False
    import torch

    if getattr(torch.version, "hip", None) is not None:
        return False
    return torch.version.cuda is None or os.environ.get("CUDA_VISIBLE_DEVICES") == ""


def xla_on_cpu(device: str, environ: Mapping[str, str]) -> bool:
    """The run's device is XLA on its CPU backend (PJRT_DEVICE=CPU), as on this project's CI: one
    test for the runner, which hides the GPUs from such workers (worker_process.worker_environment),
    and for this process, which then preloads torch_xla. Here, beside the fork server's stdlib-only
    imports, so that neither process imports more to ask it."""
    return device == "xla" and environ.get("PJRT_DEVICE", "").upper() == "CPU"


def preload_more(environ: Mapping[str, str]) -> bool:
    """Whether to preload the runner's case modules and the path's packages (issue 57); off with
    PORTABILITY_FORK_PRELOAD_MORE=0, for benchmarks/bench_confirmations.py's comparison."""
    return environ.get(PRELOAD_MORE_ENV, "1") != "0"


def path_modules(framework: str, device: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """The device path's packages this process imports for its children (none where
    PORTABILITY_FORK_PRELOAD_MORE is 0)."""
    if not preload_more(environ):
        return ()
    return PATH_MODULES.get(device, {}).get(framework, ())


def preload(framework: str, rootdir: str) -> list[str]:
    """Read the framework's census manifests, torch_xla's modules on XLA's CPU backend, (no CUDA
    driver reachable) the framework's test databases, and the device path's packages; the names of
    what was loaded, for `ready`. What fails to load is left to the child, which loads it again and
    reports the failure where it belongs, as a spawned worker would."""
    from portability_data.runner.census_rows import CensusManifestError, manifest_paths, read_manifest

    loaded = []
    for path in manifest_paths(Path(rootdir) / "cases", framework):
        try:
            read_manifest(path)
            loaded.append(path.name)
        except CensusManifestError:
            continue
    on_xla_cpu = xla_on_cpu(os.environ.get("PORTABILITY_DEVICE", ""), os.environ)
    modules: tuple[str, ...] = XLA_MODULES if framework == "torch" and on_xla_cpu else ()
    if cuda_unreachable(framework):  # after torch_xla, which rebinds classes the databases hold
        modules += TEST_DATABASES.get(framework, ())
    if preload_more(os.environ):
        from portability_data.runner import devices

        devices.registry()  # imports every path module (no framework), as the child's backend would
        loaded.append(REGISTRY)
        modules += RUNNER_MODULES
        with contextlib.suppress(Exception):  # else the child imports them, as a spawned one does
            from _pytest.config import default_plugins

            for name in (*(n for n in default_plugins if n != "cacheprovider"), "tomllib"):
                importlib.import_module(name if name == "tomllib" else f"_pytest.{name}")
            loaded.append(PYTEST_PLUGINS)
    modules += path_modules(framework, os.environ.get("PORTABILITY_DEVICE", ""), os.environ)
    for module in modules:
        try:
            importlib.import_module(module)
            loaded.append(module)
        except Exception:  # the child's own import says why
            continue
    return loaded


def main() -> int:
    events = os.fdopen(int(os.environ["PORTABILITY_EVENTS_FD"]), "w", buffering=1)
    framework = os.environ["PORTABILITY_FRAMEWORK"]
    try:
        import pytest  # noqa: F401 (imported here once, inherited by every child)

        from portability_data.runner import harness, worker  # noqa: F401

        __import__(framework)
        preloaded = preload(framework, os.environ["PORTABILITY_ROOTDIR"])
    except Exception as exc:  # the framework does not import: the spawned path will say why
        _emit(events, {"event": "fatal", "error": f"{type(exc).__name__}: {exc}"})
        return 3
    if threading.active_count() != 1:
        names = ", ".join(thread.name for thread in threading.enumerate())
        _emit(events, {"event": "fatal", "error": f"not fork-safe: Python threads running ({names})"})
        return 3
    # What is alive now (pytest, the harness, the framework) is what a worker freezes before its
    # first case (worker.main: gc.collect, gc.freeze) and outlives every child: frozen here, each
    # child's own collection skips it instead of walking the framework's objects again (a full
    # collection here: 0.29 s with tensorflow loaded, 0.32 s with torch and its test databases,
    # 0.07 s with jax), and the children share those pages instead of copying them.
    gc.collect()
    gc.freeze()
    _emit(events, {"event": "ready", "native_threads": native_threads(), "preloaded": preloaded})
    for line in sys.stdin:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the fresh worker: this one request, then gone
            code = 70
            try:
                sys.stdin = io.StringIO(line)
                code = worker.main()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        _emit(events, {"event": "exited", "returncode": os.waitstatus_to_exitcode(status)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
