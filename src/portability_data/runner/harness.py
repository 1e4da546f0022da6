"""The case harness: a pytest plugin that pins every case to one device and times its call.

A case never decides its own device or mode. It asks for the `device` fixture (the framework's
own handle for the device under test) and the `timed` fixture (runs the function under test
through the mode, with a warm-up and the framework's sync point before the clock stops), in the
manner of PyTorch's device-generic tests: written once, instantiated per device by the harness.

Configuration comes from the environment, as in the study (one device per run):
PORTABILITY_DEVICE (a registered device path: runner/devices/), PORTABILITY_MODE (eager, compiled),
PORTABILITY_WARMUP (warm-up calls before the timed one, default 1).

Only the framework under test, pytest and NumPy are imported here (DESIGN.md "The runner").
The framework backends (backends.py), the device paths (devices/) and the timer (timing.py) live
beside it; with the worker they are the harness digest (the shared core and the path's module).

A case may report measures of a subtest beside its outcome with pytest's `record_property`
(the census records its oracle, sample counts and deviations): the names in MEASURES become
columns of the results table; any other name is a usage error, so nothing is dropped silently.

Host fallback is an outcome of its own: a subtest that passed although the device said some op of
its timed calls ran on the host (torch_xla's fallback counters), or whose output came back on the
host (HostPlacementError), is `host_fallback`, with the ops named, never `passed`.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from portability_data.runner import devices
from portability_data.runner.backends import (
    Backend,
    DeviceUnavailableError,
    HostPlacementError,
    TensorFlowBackend,
)
from portability_data.runner.timing import Timer, subtest_execution

FRAMEWORKS = ("torch", "tensorflow", "jax")
MODES = ("eager", "compiled")


@dataclass(frozen=True)
class HarnessConfig:
    device: str
    mode: str
    warmup: int

    @classmethod
    def from_env(cls) -> HarnessConfig:
        device = os.environ.get("PORTABILITY_DEVICE", "cpu")
        mode = os.environ.get("PORTABILITY_MODE", "eager")
        warmup = os.environ.get("PORTABILITY_WARMUP", "1")
        if device not in devices.path_names():
            raise pytest.UsageError(
                f"PORTABILITY_DEVICE={device!r} is not a known device; use one of "
                f"{', '.join(devices.path_names())}"
            )
        if mode not in MODES:
            raise pytest.UsageError(
                f"PORTABILITY_MODE={mode!r} is not a known mode; use one of {', '.join(MODES)}"
            )
        if not warmup.isdigit():
            raise pytest.UsageError(f"PORTABILITY_WARMUP={warmup!r} must be a non-negative integer")
        return cls(device=device, mode=mode, warmup=int(warmup))


def framework_of(path: Path) -> str:
    """A case's framework is the folder under cases/ that holds it: cases/<framework>/test_x.py,
    or a generated module in a subfolder of it (cases/<framework>/census/test_opinfo.py)."""
    for folder in Path(path).parents:
        if folder.parent.name == "cases" and folder.name in FRAMEWORKS:
            return folder.name
    name = Path(path).parent.name
    if name in FRAMEWORKS:
        return name
    raise pytest.UsageError(
        f"{path}: a case file must live in cases/<framework>/ (or a subfolder of it) with framework "
        f"one of {', '.join(FRAMEWORKS)}; found folder {name!r}"
    )


# What a case may report with record_property, and the type each is kept as (results columns).
MEASURES: dict[str, type] = {
    "oracle": str,  # what the result was compared with: reference, numpy, eager, cpu (joined by +)
    "samples": int,  # sample inputs the subtest ran
    "samples_failed": int,  # of those, how many failed (raised, or off the oracle)
    "samples_compared": int,  # of those, how many some oracle judged (works: all of them)
    "max_abs_error": float,  # largest absolute deviation from the oracle over the samples
    "max_rel_error": float,  # largest relative deviation from the oracle over the samples
    "result_dtype": str,  # the dtypes the function returned (runner/promotion.py)
    "oracle_dtype": str,  # the dtypes NumPy returned on the same inputs
    "dtype_mismatches": int,  # samples whose result dtypes differ from NumPy's
}


def measures_of(properties: list[tuple[str, Any]]) -> dict[str, Any]:
    """The subtest's reported measures, typed. An unknown name or a bad value raises ValueError,
    which fails the subtest (a case that reports what the table has no column for must say so,
    not lose it)."""
    found: dict[str, Any] = {}
    for name, value in properties:
        if name not in MEASURES:
            raise ValueError(
                f"record_property({name!r}, ...): not a measure the results table keeps; "
                f"use one of {', '.join(MEASURES)}"
            )
        try:
            found[name] = None if value is None else MEASURES[name](value)
        except (TypeError, ValueError):
            wanted = MEASURES[name].__name__
            raise ValueError(f"record_property({name!r}, {value!r}): not a {wanted}") from None
    return found


# --------------------------------------------------------------------------- the pytest plugin

_config: HarnessConfig | None = None
_backends: dict[str, Backend] = {}
_sink: Callable[[dict[str, Any]], None] | None = None


def set_sink(sink: Callable[[dict[str, Any]], None] | None) -> None:
    """Where finished subtest records go (the runner's worker sets this); None drops them."""
    global _sink
    _sink = sink


def backend_for(framework: str) -> Backend:
    """The backend of a framework for the configured device, created once per process."""
    config = _config or HarnessConfig.from_env()
    if framework not in _backends:
        _backends[framework] = devices.backend_for(framework, config.device)
    return _backends[framework]


def reset() -> None:
    """Forget the configuration and backends (a worker re-reads them for a new run)."""
    global _config
    _config = None
    _backends.clear()


def pytest_configure(config: pytest.Config) -> None:
    global _config
    _config = HarnessConfig.from_env()
    config.addinivalue_line("markers", "accelerator_only: runs on accelerators only (skipped on cpu)")
    config.addinivalue_line("markers", "devices(*names): devices the subtest applies to")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    assert _config is not None
    for item in items:
        if item.get_closest_marker("accelerator_only") and _config.device == "cpu":
            item.add_marker(pytest.mark.skip(reason="accelerator only: moves data between host and device"))
        only = item.get_closest_marker("devices")
        if only and _config.device not in only.args:
            item.add_marker(pytest.mark.skip(reason=f"runs on {', '.join(only.args)} only"))


@pytest.fixture
def harness_backend(request: pytest.FixtureRequest) -> Backend:
    """The backend of the case's framework (from its folder) for the configured device."""
    try:
        return backend_for(framework_of(request.path))
    except DeviceUnavailableError as exc:
        pytest.exit(str(exc), returncode=4)


@pytest.fixture
def device(harness_backend: Backend) -> Any:
    """The framework's handle of the device under test: 'cpu'/'cuda' (torch), '/device:CPU:0'
    (TensorFlow), a jax.Device (JAX). The test body runs pinned to it."""
    assert _config is not None
    with harness_backend.pinned(_config.mode):
        yield harness_backend.handle()


@pytest.fixture
def timed(request: pytest.FixtureRequest, harness_backend: Backend, device: Any) -> Timer:
    """The timer: `out = timed(fn, *args, **kwargs)` times one call after a warm-up."""
    assert _config is not None
    harness_backend.start_test(_config.mode)
    timer = Timer(harness_backend, _config.mode, _config.warmup)
    request.node.stash[_timings_key] = timer.timings_ms
    request.node.stash[_timer_key] = timer
    return timer


@pytest.fixture
def tf_graph(harness_backend: Backend, device: Any) -> Any:
    """A TensorFlow graph pinned to the device, for graph-mode (tf.compat.v1) cases."""
    if not isinstance(harness_backend, TensorFlowBackend):
        raise pytest.UsageError("tf_graph is for TensorFlow cases only")
    with harness_backend.graph() as graph:
        yield graph


@pytest.fixture
def tf_session(harness_backend: Backend, tf_graph: Any) -> Any:
    """A tf.compat.v1 session on the pinned graph with soft placement off."""
    assert isinstance(harness_backend, TensorFlowBackend)
    with harness_backend.session(tf_graph) as session:
        yield session


_timings_key = pytest.StashKey[list]()
_timer_key = pytest.StashKey[Timer]()
_start_key = pytest.StashKey[float]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    item.stash[_start_key] = time.perf_counter()
    try:
        return (yield)
    finally:
        release_subtest(item)


def release_subtest(item: pytest.Item) -> None:
    """Drop what a finished subtest still holds, so the next one starts on a clean device.
    On XLA a graph that failed to lower leaves its live tensors without data, and every later
    sync takes in all live tensors: while the failure's frames keep them alive, each following
    subtest fails with "Check failed: tensor_data" (tested: tests/test_xla_device.py). pytest keeps
    the last failure's traceback for post-mortem debugging (sys.last_*), and the item keeps its
    timer (compiled functions and the constants they captured) for the rest of the session."""
    if _timer_key in item.stash:
        del item.stash[_timer_key]
    held = [name for name in ("last_exc", "last_type", "last_value", "last_traceback") if hasattr(sys, name)]
    for name in held:
        delattr(sys, name)
    if held:
        gc.collect()  # the failure's frames and tensors reference each other


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    """Tell the runner which subtest is in flight, so a crash or hang is pinned on it."""
    if _sink is not None:
        _sink({"event": "start", "test_id": nodeid})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """A case file that fails to import or collect is an error of the whole case."""
    if _sink is not None and report.failed:
        text = str(report.longrepr)
        _sink(
            {
                "event": "result",
                "test_id": report.nodeid or "<collection>",
                "when": "collect",
                "outcome": "error",
                "error_type": _collect_error_type(text),
                "error_message": text[-2000:],
                "op_latencies_ms": [],
                "test_time_ms": None,
            }
        )


def _collect_error_type(text: str) -> str:
    """The exception name in a collection traceback ('E   ModuleNotFoundError: ...')."""
    for line in reversed(text.splitlines()):
        stripped = line.lstrip("E").strip()
        head = stripped.split(":", 1)[0]
        if head.isidentifier() and (head.endswith("Error") or head.endswith("Exception")):
            return head
    return "CollectionError"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Emit one record per subtest: its outcome (setup, call or teardown failure) and timings."""
    if _sink is None:
        return
    failed_outside_call = report.when in ("setup", "teardown") and report.failed
    if report.when == "call" or failed_outside_call or (report.when == "setup" and report.skipped):
        _sink(_record(report))


def _record(report: pytest.TestReport) -> dict[str, Any]:
    error_type = error_message = None
    if report.failed:
        error_type, error_message = _error_of(report)
    outcome = "passed" if report.passed else "skipped" if report.skipped else "failed"
    if report.failed and report.when != "call":
        outcome = "error"
    fallback = getattr(report, "portability_host_fallback", None)
    host_output = error_type == "HostPlacementError"
    if fallback is not None and report.when == "call" and (report.passed or host_output):
        outcome, error_type, error_message = "host_fallback", fallback[0], fallback[1]
    if report.skipped and isinstance(report.longrepr, tuple):
        error_message = str(report.longrepr[2])
    return {
        "event": "result",
        "test_id": report.nodeid,
        "when": report.when,
        "outcome": outcome,
        "error_type": error_type,
        "error_message": error_message,
        "op_latencies_ms": list(getattr(report, "portability_timings", [])),
        "test_time_ms": report.duration * 1e3,
        "execution": getattr(report, "portability_execution", None),
        "graph_breaks": getattr(report, "portability_graph_breaks", None),
        "measures": getattr(report, "portability_measures", {}),
        **getattr(report, "portability_device_events", {}),
    }


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    report.portability_timings = list(item.stash.get(_timings_key, []))
    timer = item.stash.get(_timer_key, None)
    mode = _config.mode if _config is not None else "eager"
    report.portability_execution = subtest_execution(mode, timer.executions if timer else [])
    report.portability_graph_breaks = (
        sum(timer.graph_breaks.values()) if timer and mode == "compiled" and timer.graph_breaks else None
    )
    if call.excinfo is not None:
        report.portability_error = (call.excinfo.type.__name__, str(call.excinfo.value))
    if call.when == "call" and timer is not None:
        report.portability_device_events, report.portability_host_fallback = _device_events(timer, call)
    report.portability_measures = {}
    if call.when == "call":  # a failing subtest keeps its measures too (how many samples failed)
        try:
            report.portability_measures = measures_of(item.user_properties)
        except ValueError as bad:
            if report.passed:
                report.outcome, report.longrepr = "failed", str(bad)
                report.portability_error = ("MeasureError", str(bad))
    return report


def _device_events(timer: Timer, call: pytest.CallInfo) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """(the subtest's device columns, (error type, message) if it fell back to the host). The
    columns are null where the device cannot tell (every device but XLA's)."""
    host_output = call.excinfo is not None and call.excinfo.errisinstance(HostPlacementError)
    fallback = ("HostPlacementError", str(call.excinfo.value)) if host_output and call.excinfo else None
    if not timer.backend.counts_device_events:
        return {}, fallback
    events = timer.device_events
    columns = {
        "host_fallback_ops": sorted(events.fallback_ops),
        "host_fallback_calls": sum(events.fallback_ops.values()),
        "device_compiles": events.compiles,
        "device_compiles_timed": events.compiles_timed,
    }
    if events.fallback_ops and fallback is None:
        ran = ", ".join(f"{name} x{count}" for name, count in sorted(events.fallback_ops.items()))
        fallback = ("HostFallback", f"ran on the host instead of {timer.backend.device}: {ran}")
    return columns, fallback


def _error_of(report: pytest.TestReport) -> tuple[str, str]:
    found = getattr(report, "portability_error", None)
    if found:
        return found[0], clip_message(found[1])
    text = str(report.longrepr)
    return "Error", text[-2000:]


def clip_message(text: str, limit: int = 2000) -> str:
    """A long error message as its head and its tail: wrapped errors (tf.function's "in user
    code", dynamo's hints) put the cause at one end or the other."""
    if len(text) <= limit:
        return text
    half = (limit - 7) // 2
    return f"{text[:half]}\n[...]\n{text[-half:]}"
