"""A case worker: one process that imports the framework once and runs many case files.

The runner starts it with the device and mode in the environment and talks to it in JSON lines:
requests on stdin ({"file": ..., "deselect": [...]}, or {"select": [node id]} to run one subtest
alone), events on the file descriptor named by
PORTABILITY_EVENTS_FD (ready, start, result, done). Its own stdout and stderr (pytest's and the
framework's chatter) go to a log file, so nothing a case prints can corrupt the event stream.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sys
import traceback
from typing import Any, TextIO


def _emit(stream: TextIO, event: dict[str, Any]) -> None:
    stream.write(json.dumps(event, default=str) + "\n")
    stream.flush()


def main() -> int:
    events = os.fdopen(int(os.environ["PORTABILITY_EVENTS_FD"]), "w", buffering=1)
    framework = os.environ["PORTABILITY_FRAMEWORK"]
    rootdir = os.environ["PORTABILITY_ROOTDIR"]

    import pytest

    from portability_data.runner import harness

    try:
        backend = harness.backend_for(framework)
        floor = harness.Timer(backend, os.environ.get("PORTABILITY_MODE", "eager"), 0).floor_ms()
        version = _framework_version(framework)
        _emit(
            events,
            {
                "event": "ready",
                "device_model": backend.describe(),
                "framework_version": version,
                "timer_floor_ms": floor,
                "driver": backend.driver(),
                "build": _build_facts(framework, backend),
            },
        )
    except Exception as exc:  # the device is absent or the framework broken: say so and stop
        _emit(events, {"event": "fatal", "error": f"{type(exc).__name__}: {exc}"})
        return 3

    harness.set_sink(lambda record: _emit(events, record))
    for line in sys.stdin:
        request = json.loads(line)
        targets = request.get("select") or [request["file"]]
        args = [
            *targets,
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            rootdir,
            "--import-mode=importlib",
            "-o",
            "addopts=",
            "-W",
            "ignore::DeprecationWarning",
        ]
        for node in request.get("deselect", []):
            args += ["--deselect", node]
        _forget_case_modules(rootdir)
        # Every pytest session ends with a full garbage collection (pytest's unraisable-exception
        # hook), which with a framework loaded walks millions of objects: 0.15 s per case file for
        # torch, more than many cases take. So what is alive between requests (the framework, pytest
        # and its plugins), after the earlier cases' garbage is gone, is frozen: the collector skips
        # it from then on, while everything a case makes stays collectable.
        gc.collect()
        gc.freeze()
        try:
            code = pytest.main(args)
        except BaseException:
            _emit(events, {"event": "internal", "error": traceback.format_exc()[-2000:]})
            code = -1
        _emit(events, {"event": "done", "exit_code": int(code)})
    return 0


_OUTSIDE_CASES: dict[str, int] = {}  # module name -> id of a module object known not to be a case's


def _forget_case_modules(rootdir: str) -> None:
    """Drop case modules (and conftests) of earlier requests, so every repeat imports its case file
    afresh: a module whose import failed must fail again, not come back half-initialised."""
    # Compared as text (the root as given and resolved): resolving every module's path would cost
    # an lstat per path component of thousands of framework modules, per case file.
    cases = tuple(
        {
            os.path.join(os.path.abspath(rootdir), "cases") + os.sep,
            os.path.join(os.path.realpath(rootdir), "cases") + os.sep,
        }
    )
    for name, module in list(sys.modules.items()):
        if _OUTSIDE_CASES.get(name) == id(module):
            continue
        path = getattr(module, "__file__", None) or ""
        if path and os.path.abspath(path).startswith(cases):
            del sys.modules[name]
        else:
            _OUTSIDE_CASES[name] = id(module)


def _framework_version(framework: str) -> str:
    module = __import__(framework)
    return str(getattr(module, "__version__", "unknown"))


def _build_facts(framework: str, backend: Any) -> dict[str, Any]:
    """What the framework says of its own build: BLAS, oneDNN/MKL, CUDA, XLA (for the runs table:
    two machines that disagree may differ here, not in the framework version)."""
    facts: dict[str, Any] = {}
    try:
        if framework == "torch":
            import torch

            facts["config"] = torch.__config__.show()
            facts["parallel"] = torch.__config__.parallel_info()
            facts["mkldnn"] = bool(torch.backends.mkldnn.is_available())
            facts["mkl"] = bool(torch.backends.mkl.is_available())
            facts["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
            facts["num_threads"] = torch.get_num_threads()
        elif framework == "tensorflow":
            import tensorflow as tf

            facts["build_info"] = {k: str(v) for k, v in tf.sysconfig.get_build_info().items()}
            facts["compile_flags"] = tf.sysconfig.get_compile_flags()
            facts["onednn"] = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default (on for x86 builds)")
            facts["git_version"] = tf.version.GIT_VERSION
        elif framework == "jax":
            import jax
            import jaxlib

            facts["jaxlib"] = jaxlib.__version__
            facts["backend"] = jax.default_backend()
            facts["platform_version"] = jax.devices()[0].client.platform_version
            facts["x64"] = bool(jax.config.jax_enable_x64)
        facts.update(backend.device_facts())  # the device path's own stack (torch_xla, PJRT)
        import numpy as np

        with contextlib.suppress(TypeError):  # NumPy < 1.25 has no mode="dicts"
            facts["numpy_blas"] = str(np.show_config(mode="dicts").get("Build Dependencies", {}))
    except Exception as exc:  # a build fact missing is not a reason to refuse the run
        facts["error"] = f"{type(exc).__name__}: {exc}"
    return facts


if __name__ == "__main__":
    sys.exit(main())
