"""The case harness: a pytest plugin that pins every case to one device and times its call.

A case never decides its own device or mode. It asks for the `device` fixture (the framework's
own handle for the device under test) and the `timed` fixture (runs the function under test
through the mode, with a warm-up and the framework's sync point before the clock stops), in the
manner of PyTorch's device-generic tests: written once, instantiated per device by the harness.

Configuration comes from the environment, as in the study (one device per run):
PORTABILITY_DEVICE (cpu, gpu, tpu, mps), PORTABILITY_MODE (eager, compiled),
PORTABILITY_WARMUP (warm-up calls before the timed one, default 1).

Only the framework under test, pytest and NumPy are imported here (DESIGN.md "The runner").
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

FRAMEWORKS = ("torch", "tensorflow", "jax")
DEVICES = ("cpu", "gpu", "tpu", "mps")
MODES = ("eager", "compiled")


class DevicePlacementError(AssertionError):
    """An output of the timed call lives on another device than the one under test."""


class DeviceUnavailableError(RuntimeError):
    """The requested device is not present for this framework on this machine."""


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
        if device not in DEVICES:
            raise pytest.UsageError(
                f"PORTABILITY_DEVICE={device!r} is not a known device; use one of {', '.join(DEVICES)}"
            )
        if mode not in MODES:
            raise pytest.UsageError(
                f"PORTABILITY_MODE={mode!r} is not a known mode; use one of {', '.join(MODES)}"
            )
        if not warmup.isdigit():
            raise pytest.UsageError(f"PORTABILITY_WARMUP={warmup!r} must be a non-negative integer")
        return cls(device=device, mode=mode, warmup=int(warmup))


def framework_of(path: Path) -> str:
    """A case's framework is the name of its folder: cases/<framework>/test_x.py."""
    name = Path(path).parent.name
    if name not in FRAMEWORKS:
        raise pytest.UsageError(
            f"{path}: a case file must live in cases/<framework>/ with framework one of "
            f"{', '.join(FRAMEWORKS)}; found folder {name!r}"
        )
    return name


# --------------------------------------------------------------------------- framework backends


class Backend:
    """What the harness needs of a framework: a device handle, pinning, sync, placement, compile."""

    name = ""

    def __init__(self, device: str) -> None:
        self.device = device

    def handle(self) -> Any:
        raise NotImplementedError

    @contextlib.contextmanager
    def pinned(self, mode: str) -> Iterator[None]:
        yield

    def start_test(self, mode: str) -> None:
        """Called before each subtest: compiled caches start empty, so subtests are independent."""

    def sync(self, result: Any) -> None:
        """Block until the device finished computing `result`."""

    def check_placement(self, result: Any) -> None:
        """Raise DevicePlacementError if any array in `result` lives elsewhere."""

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        """`fn` through the framework's compiler; the result says how its calls really ran."""
        raise NotImplementedError

    def is_array(self, value: Any) -> bool:
        """Whether compiled mode passes `value` as a traced argument (else it is a constant)."""
        raise NotImplementedError

    def describe(self) -> str:
        """The hardware model of the device, for the results table."""
        return self.device


class CompiledCall:
    """A compiled function and how its calls ran (results.execution).

    jax.jit and tf.function(jit_compile=True) compile the whole function or raise (tests show it:
    tests/test_harness.py), so their calls are `compiled`. torch.compile may split a function at
    graph breaks or run it eagerly without a word; `_TorchCompiled` finds out."""

    def __init__(self, compiled: Callable[..., Any]) -> None:
        self.compiled = compiled
        self.execution = "compiled"
        self.graph_breaks = 0

    def __call__(self, *args: Any) -> Any:
        return self.compiled(*args)


class _TorchCompiled(CompiledCall):
    """torch.compile, first with fullgraph=True: if that traces, the function ran as one graph.
    If dynamo cannot make one graph (it raises before running anything), the call is retried
    with graph breaks allowed and dynamo's own counters say how many breaks it took, or that it
    made no graph at all (eager fallback). An exception the function itself raised while dynamo
    traced it (bad input rejected on fake tensors) is re-raised as itself, not as dynamo's
    wrapper, so a documented rejection reads the same in both modes."""

    def __init__(self, torch: Any, fn: Callable[..., Any]) -> None:
        super().__init__(torch.compile(fn, fullgraph=True))
        self.torch, self.fn = torch, fn
        self.partial: Callable[..., Any] | None = None

    def __call__(self, *args: Any) -> Any:
        from torch._dynamo import exc as dynamo_exc

        if self.partial is None:
            try:
                return _unwrapped(self.compiled, args)
            except (dynamo_exc.Unsupported, dynamo_exc.UserError):
                # No single graph: nothing ran yet (fullgraph fails while tracing), so retrying is safe.
                self.partial = self.torch.compile(self.fn)
                first = True
        else:
            first = False
        counters = self.torch._dynamo.utils.counters
        breaks, graphs = sum(counters["graph_break"].values()), counters["stats"]["unique_graphs"]
        try:
            return _unwrapped(self.partial, args)
        finally:
            new_breaks = sum(counters["graph_break"].values()) - breaks
            new_graphs = counters["stats"]["unique_graphs"] - graphs
            self.graph_breaks += new_breaks
            if first:
                self.execution = "graph_breaks" if new_graphs > 0 else "eager_fallback"
                self.graph_breaks = max(self.graph_breaks, 1) if new_graphs > 0 else self.graph_breaks


_DYNAMO_MODULES = ("torch._dynamo", "torch._inductor", "torch.fx", "torch._subclasses", "torch._functorch")


def _unwrapped(compiled: Callable[..., Any], args: tuple) -> Any:
    """Call a torch.compile'd function; if dynamo wraps an exception that the traced code itself
    raised on fake tensors (TorchRuntimeError "when making fake tensor call"), raise that one."""
    try:
        return compiled(*args)
    except Exception as error:
        inner = _user_exception(error)
        if inner is None:
            raise
        raise inner.with_traceback(inner.__traceback__) from None


def _user_exception(error: BaseException) -> BaseException | None:
    """The built-in exception (ValueError, RuntimeError, ...) an op raised under dynamo's fake
    tensors, where dynamo reports one; None for dynamo's own limits (no such inner exception)."""
    if not type(error).__module__.startswith("torch._dynamo"):
        return None
    if "when making fake tensor call" not in str(error) and "fake tensors" not in str(error):
        return None
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        module = type(current).__module__
        if module == "builtins" and current is not error:
            return current
        if not module.startswith(_DYNAMO_MODULES) and module != "builtins":
            return None
        current = current.__cause__ or current.__context__
    return None


def _leaves(obj: Any) -> Iterator[Any]:
    """Walk nested tuples, lists and dicts; yield everything else."""
    if isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _leaves(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _leaves(item)
    else:
        yield obj


class TorchBackend(Backend):
    name = "torch"
    _types: ClassVar[dict[str, str]] = {"cpu": "cpu", "gpu": "cuda", "mps": "mps", "tpu": "xla"}

    def __init__(self, device: str) -> None:
        super().__init__(device)
        import torch

        self.torch = torch
        if device == "gpu" and not torch.cuda.is_available():
            raise DeviceUnavailableError("device gpu requested but torch.cuda.is_available() is False")
        if device == "mps" and not torch.backends.mps.is_available():
            raise DeviceUnavailableError("device mps requested but torch.backends.mps is not available")
        if device == "tpu":
            try:
                import torch_xla.core.xla_model as xm  # noqa: F401
            except ImportError as exc:
                raise DeviceUnavailableError(
                    f"device tpu requested but torch_xla is missing: {exc}"
                ) from None
        self.device_type = self._types[device]

    def handle(self) -> str:
        if self.device == "tpu":
            import torch_xla.core.xla_model as xm

            return str(xm.xla_device())
        return self.device_type

    @contextlib.contextmanager
    def pinned(self, mode: str) -> Iterator[None]:
        previous = self.torch.get_default_device()
        self.torch.set_default_device(self.handle())
        try:
            yield
        finally:
            self.torch.set_default_device(previous)

    def sync(self, result: Any) -> None:
        if self.device == "gpu":
            self.torch.cuda.synchronize()
        elif self.device == "mps":
            self.torch.mps.synchronize()
        elif self.device == "tpu":
            import torch_xla.core.xla_model as xm

            xm.mark_step()

    def check_placement(self, result: Any) -> None:
        for leaf in _leaves(result):
            if isinstance(leaf, self.torch.Tensor) and leaf.device.type != self.device_type:
                raise DevicePlacementError(
                    f"output tensor on {leaf.device}, expected device type {self.device_type!r}"
                )

    def start_test(self, mode: str) -> None:
        if mode == "compiled":
            import torch._dynamo

            torch._dynamo.reset()
            # Past the recompile limit torch.compile silently runs eager: make that an error instead.
            torch._dynamo.config.recompile_limit = 64
            torch._dynamo.config.fail_on_recompile_limit_hit = True

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _TorchCompiled(self.torch, fn)

    def is_array(self, value: Any) -> bool:
        return isinstance(value, self.torch.Tensor)

    def describe(self) -> str:
        if self.device == "gpu":
            return self.torch.cuda.get_device_name(0)
        return _cpu_model() if self.device == "cpu" else self.device


class TensorFlowBackend(Backend):
    name = "tensorflow"
    _types: ClassVar[dict[str, str]] = {"cpu": "CPU", "gpu": "GPU", "tpu": "TPU", "mps": "GPU"}

    def __init__(self, device: str) -> None:
        super().__init__(device)
        import tensorflow as tf

        self.tf = tf
        self.device_type = self._types[device]
        if not tf.config.list_logical_devices(self.device_type):
            raise DeviceUnavailableError(
                f"device {device} requested but TensorFlow sees no {self.device_type} device"
            )
        # The study's pinning: no silent fallback to another device.
        tf.config.set_soft_device_placement(False)

    def handle(self) -> str:
        return f"/device:{self.device_type}:0"

    @contextlib.contextmanager
    def pinned(self, mode: str) -> Iterator[None]:
        with self.tf.device(self.handle()):
            yield

    @contextlib.contextmanager
    def graph(self) -> Iterator[Any]:
        """A tf.Graph whose every op is pinned to the device (graph-mode cases use this).

        The graph's own device stack holds the device for the whole test, so ops made under any
        later `as_default()` (and under `tf.init_scope`, which optimizers use) land there too."""
        graph = self.tf.Graph()
        with graph.as_default(), graph.device(self.handle()):
            yield graph

    def session(self, graph: Any = None) -> Any:
        """A tf.compat.v1.Session with soft placement off, as the study pinned sessions."""
        config = self.tf.compat.v1.ConfigProto(allow_soft_placement=False, log_device_placement=False)
        return self.tf.compat.v1.Session(graph=graph, config=config)

    def sync(self, result: Any) -> None:
        """`.numpy()` on every eager output (the study's sync); graph tensors have nothing to wait for."""
        for leaf in _leaves(result):
            if self._is_eager(leaf):
                leaf.numpy()

    def _is_eager(self, leaf: Any) -> bool:
        if isinstance(leaf, self.tf.Variable):
            return not self.tf.is_symbolic_tensor(leaf.handle)
        return isinstance(leaf, self.tf.Tensor) and not self.tf.is_symbolic_tensor(leaf)

    def check_placement(self, result: Any) -> None:
        expected = self.handle().removeprefix("/")  # device:CPU:0
        for leaf in _leaves(result):
            if isinstance(leaf, (self.tf.Tensor, self.tf.Variable)):
                try:
                    where = leaf.device or ""
                except (AttributeError, RuntimeError):  # symbolic tensors have no runtime device
                    continue
                if where and not where.endswith(expected):
                    raise DevicePlacementError(f"output tensor on {where!r}, expected {expected!r}")

    def compile(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        tf = self.tf

        def without_operations(*args: Any) -> Any:
            # tf.function cannot return an Operation (tf.print, assign ops): it becomes None, so the
            # compiled call fails (or not) on its own merits rather than on the return value.
            result = fn(*args)
            return tf.nest.map_structure(lambda v: None if isinstance(v, tf.Operation) else v, result)

        return CompiledCall(tf.function(without_operations, jit_compile=True))

    def is_array(self, value: Any) -> bool:
        return isinstance(value, (self.tf.Tensor, self.tf.Variable))

    def describe(self) -> str:
        if self.device == "cpu":
            return _cpu_model()
        details = self.tf.config.experimental.get_device_details(
            self.tf.config.list_physical_devices(self.device_type)[0]
        )
        return str(details.get("device_name", self.device))


class JaxBackend(Backend):
    name = "jax"
    _platforms: ClassVar[dict[str, str]] = {"cpu": "cpu", "gpu": "gpu", "tpu": "tpu", "mps": "METAL"}

    def __init__(self, device: str) -> None:
        super().__init__(device)
        import jax

        self.jax = jax
        try:
            devices = jax.devices(self._platforms[device])
        except RuntimeError as exc:
            raise DeviceUnavailableError(f"device {device} requested but JAX has none: {exc}") from None
        self._device = devices[0]

    def handle(self) -> Any:
        return self._device

    @contextlib.contextmanager
    def pinned(self, mode: str) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.jax.default_device(self._device))
            if mode == "eager":
                # The study ran JAX with jit disabled.
                stack.enter_context(self.jax.disable_jit())
            yield

    def sync(self, result: Any) -> None:
        self.jax.block_until_ready(result)

    def check_placement(self, result: Any) -> None:
        for leaf in _leaves(result):
            if isinstance(leaf, self.jax.Array):
                try:
                    where = leaf.devices()
                except Exception:  # tracers and deleted arrays have no devices
                    continue
                if where != {self._device}:
                    raise DevicePlacementError(f"output array on {where}, expected {self._device}")

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return CompiledCall(self.jax.jit(fn))

    def is_array(self, value: Any) -> bool:
        import numpy as np

        return isinstance(value, (self.jax.Array, np.ndarray))

    def describe(self) -> str:
        if self.device == "cpu":
            return _cpu_model()
        return str(getattr(self._device, "device_kind", self.device))


BACKENDS: dict[str, type[Backend]] = {
    "torch": TorchBackend,
    "tensorflow": TensorFlowBackend,
    "jax": JaxBackend,
}


def _cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "cpu"


# --------------------------------------------------------------------------- the timer


@dataclass
class Timer:
    """Times the call under test: routes it through the mode, warms up, syncs, records ms."""

    backend: Backend
    mode: str
    warmup: int
    timings_ms: list[float] = field(default_factory=list)
    executions: list[str] = field(default_factory=list)
    graph_breaks: dict[int, int] = field(default_factory=dict)  # per compiled target: its breaks
    _compiled: dict[Any, CompiledCall] = field(default_factory=dict)

    def routed(self, fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple[Callable[..., Any], tuple]:
        """The call as the mode runs it: `fn` itself in eager mode; in compiled mode a compiled
        function of the array arguments only, with every other argument bound as a constant
        (axes, shapes and flags must be static for jax.jit and XLA)."""
        if self.mode == "eager":
            return functools.partial(fn, **kwargs), args
        traced = self._traced
        array_positions = tuple(i for i, a in enumerate(args) if traced(a))
        array_names = tuple(sorted(k for k, v in kwargs.items() if traced(v)))
        static_args = {i: a for i, a in enumerate(args) if i not in array_positions}
        static_kwargs = {k: v for k, v in kwargs.items() if k not in array_names}
        key = (
            id(fn),
            len(args),
            array_positions,
            array_names,
            tuple((i, _constant_key(a)) for i, a in static_args.items()),
            tuple((k, _constant_key(v)) for k, v in sorted(static_kwargs.items())),
        )
        if key not in self._compiled:

            def with_constants(*arrays: Any) -> Any:
                full = dict(static_args)
                full.update(zip(array_positions, arrays[: len(array_positions)]))
                named = dict(zip(array_names, arrays[len(array_positions) :]))
                return fn(*(full[i] for i in range(len(args))), **static_kwargs, **named)

            self._compiled[key] = self.backend.compile(_fresh_function(with_constants, len(self._compiled)))
        arrays = tuple(args[i] for i in array_positions) + tuple(kwargs[k] for k in array_names)
        return self._compiled[key], arrays

    def _traced(self, value: Any) -> bool:
        """An array, or a non-empty list or tuple of arrays (torch.cat's input): compiled-mode inputs."""
        if isinstance(value, (list, tuple)):
            return bool(value) and all(self.backend.is_array(v) for v in value)
        return self.backend.is_array(value)

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run fn(*args, **kwargs) through the mode with warm-up; time one call; return its result."""
        target, call_args = self.routed(fn, args, kwargs)
        try:
            for _ in range(self.warmup):
                self.backend.sync(target(*call_args))
            return self._timed(target, call_args)
        finally:
            self._note(target)

    def once(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Like calling the timer, without warm-up: for calls with side effects (optimizer steps)."""
        target, call_args = self.routed(fn, args, kwargs)
        try:
            return self._timed(target, call_args)
        finally:
            self._note(target)

    def _note(self, target: Callable[..., Any]) -> None:
        """Record how the routed call ran (after it ran, or raised)."""
        if isinstance(target, CompiledCall):
            self.executions.append(target.execution)
            self.graph_breaks[id(target)] = target.graph_breaks
        else:
            self.executions.append("eager")

    def _timed(self, target: Callable[..., Any], args: tuple) -> Any:
        start = time.perf_counter()
        result = target(*args)
        self.backend.sync(result)
        self.timings_ms.append((time.perf_counter() - start) * 1e3)
        self.backend.check_placement(result)
        return result

    @contextlib.contextmanager
    def region(self) -> Iterator[_Region]:
        """Time a block without mode routing: set `region.result` inside so the sync waits for it.
        In compiled mode the subtest is then recorded as `not_routed`: the block ran eagerly."""
        self.executions.append("eager" if self.mode == "eager" else "not_routed")
        region = _Region()
        start = time.perf_counter()
        yield region
        self.backend.sync(region.result)
        self.timings_ms.append((time.perf_counter() - start) * 1e3)
        self.backend.check_placement(region.result)

    def floor_ms(self, samples: int = 200) -> float:
        """Median time of an empty timed block with the sync point: the timer's own floor."""
        values = []
        for _ in range(samples):
            start = time.perf_counter()
            self.backend.sync(None)
            values.append((time.perf_counter() - start) * 1e3)
        values.sort()
        return values[len(values) // 2]


_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _constant_key(value: Any) -> Any:
    """How a constant argument identifies a compiled target: plain values (and tuples/lists of
    them) by value, anything else by identity. A repr would not do: NumPy abbreviates large
    arrays and a tf.data.Dataset prints only its spec, so two different constants could share a
    compiled function. Identity is safe because the target's closure keeps the object alive."""
    if isinstance(value, _PLAIN):
        return (type(value).__name__, value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, _PLAIN) for v in value):
        return (type(value).__name__, tuple(value))
    dtype_like = type(value).__module__.split(".")[0] in (
        "torch",
        "tensorflow",
        "jax",
        "numpy",
    ) and not hasattr(value, "shape")
    if dtype_like:  # dtypes, devices, enums of the frameworks: compare by value
        return (type(value).__name__, repr(value))
    return ("id", id(value))


def _fresh_function(fn: Callable[..., Any], serial: int) -> Callable[..., Any]:
    """A copy of `fn` with a code object of its own. torch.compile caches compiled frames per code
    object: without this, every target of a test would share one cache (and one recompile budget),
    and a later target could run what was compiled for an earlier one."""
    code = fn.__code__.replace(co_name=f"{fn.__code__.co_name}_{serial}")
    return types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, fn.__closure__)


@dataclass
class _Region:
    result: Any = None


# Worst first: a subtest is as compiled as the least compiled of its timed calls.
_EXECUTION_RANK = ("not_routed", "eager_fallback", "graph_breaks", "compiled", "eager")


def subtest_execution(mode: str, executions: list[str]) -> str:
    """How a subtest ran, from its timed calls: in compiled mode, a subtest whose function under
    test never went through the timer (no timed call) is `not_routed`."""
    if not executions:
        return "eager" if mode == "eager" else "not_routed"
    return min(executions, key=_EXECUTION_RANK.index)


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
        _backends[framework] = BACKENDS[framework](config.device)
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
    return (yield)


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
    return report


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
