"""The framework backends of the harness: what each framework does the same way on every device
path (pinning, placement checks, compiling, which values are arrays), and how a compiled call says
whether it really compiled. What differs per device (its handle, its sync, what it counts, how it is
found) is a device path's: a subclass in runner/devices/<path>.py.

Imported in the case worker only: the framework under test, pytest-free, NumPy at most. These
bytes are part of the shared core of every path's harness digest (runner/provenance.py CORE_FILES).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class DevicePlacementError(AssertionError):
    """An output of the timed call lives on another device than the one under test."""


class HostPlacementError(DevicePlacementError):
    """An output of the timed call came back on the host while the device under test is not the
    host: the call (or its last op) ran there. Recorded as host fallback, not as a failure."""


@dataclass
class DeviceEvents:
    """What the device said about a subtest's timed calls, warm-ups included: the ops that ran on
    the host instead (name -> executions) and the graph compilations, all and during timed calls.
    Only a backend whose device can tell fills it (`Backend.counts_device_events`)."""

    fallback_ops: Counter[str] = field(default_factory=Counter)
    compiles: int = 0
    compiles_timed: int = 0


class DeviceUnavailableError(RuntimeError):
    """The requested device is not present for this framework on this machine."""


class Backend:
    """What the harness needs of a framework: a device handle, pinning, sync, placement, compile.
    A device path subclasses a framework's backend below with what its device does differently."""

    name = ""
    # Whether `observe` counts host fallbacks and compilations (else those results columns are null).
    counts_device_events = False
    # The compiler of compiled mode on this path (runs.compiler).
    compiler = ""

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

    # Whether the device under test is the host CPU (the reference every other path is compared with).
    runs_on_host = True

    def check_placement(self, result: Any, host_asked: bool = False) -> None:
        """Raise DevicePlacementError if any array in `result` lives elsewhere (HostPlacementError
        where it lives on the host and the device under test is not the host). `host_asked`: the
        call itself asked for its output on the host (a `device=` argument naming the CPU, as
        torch's `*_like` samples do), so an output there is what was asked, not a fallback."""

    def names_host(self, value: Any) -> bool:
        """Whether a `device=` argument names the host CPU."""
        return False

    @contextlib.contextmanager
    def building_samples(self) -> Iterator[None]:
        """Where a census builds its samples the way the framework's own tests do (runner/
        device_oracle.py): as the test body runs, unless the framework says otherwise."""
        yield

    @contextlib.contextmanager
    def on_host(self) -> Iterator[None]:
        """The framework's own eager execution on the host CPU (the differential oracle's twin)."""
        yield

    def host_copy(self, value: Any) -> Any:
        """`value` with every array leaf copied to the host CPU, and every `device=` argument naming
        the device under test renamed to the host: the same call, for the host to run."""
        return value

    @contextlib.contextmanager
    def observe(self, events: DeviceEvents, timed: bool) -> Iterator[None]:
        """Around one call of the function under test (its sync included): add what the device
        reports of it to `events` (`timed`: the timed call, not a warm-up)."""
        yield

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        """`fn` through the framework's compiler; the result says how its calls really ran."""
        raise NotImplementedError

    def is_array(self, value: Any) -> bool:
        """Whether compiled mode passes `value` as a traced argument (else it is a constant)."""
        raise NotImplementedError

    def describe(self) -> str:
        """The hardware model of the device, for the results table."""
        return self.device

    def driver(self) -> str | None:
        """The accelerator runtime version, where the framework tells it (runs.driver)."""
        return None

    def device_facts(self) -> dict[str, Any]:
        """Build facts of the device's own stack (runs.build, beside the framework's)."""
        return {}


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
    made no graph at all (eager fallback). That includes an exception raised while dynamo traced
    the function on fake tensors: a graph-break limitation (torch.geqrf's data-dependent output)
    reads that way too, and with breaks allowed dynamo runs the op outside the graph. Only if the
    retry fails as well is the error the function's; one the function itself raised (bad input
    rejected) is re-raised as itself, not as dynamo's wrapper, so a documented rejection reads the
    same in both modes."""

    def __init__(self, torch: Any, fn: Callable[..., Any], backend: str = "inductor") -> None:
        super().__init__(torch.compile(fn, fullgraph=True, backend=backend))
        self.torch, self.fn, self.backend = torch, fn, backend
        self.partial: Callable[..., Any] | None = None

    def __call__(self, *args: Any) -> Any:
        from torch._dynamo import exc as dynamo_exc

        if self.partial is None:
            try:
                return self.compiled(*args)
            except Exception as error:
                if not _dynamo_raised(error, dynamo_exc):
                    raise
                # No single graph: nothing ran yet (fullgraph fails while tracing), so retrying is safe.
                self.partial = self.torch.compile(self.fn, backend=self.backend)
                first = True
        else:
            first = False
        counters = self.torch._dynamo.utils.counters
        breaks, graphs = sum(counters["graph_break"].values()), counters["stats"]["unique_graphs"]
        ran = False
        try:
            result = _unwrapped(self.partial, args)
            ran = True
            return result
        finally:
            new_breaks = sum(counters["graph_break"].values()) - breaks
            new_graphs = counters["stats"]["unique_graphs"] - graphs
            self.graph_breaks += new_breaks
            if first and ran:  # a retry that raised too ran nothing: the call stays `compiled`
                self.execution = "graph_breaks" if new_graphs > 0 else "eager_fallback"
                self.graph_breaks = max(self.graph_breaks, 1) if new_graphs > 0 else self.graph_breaks


def _dynamo_raised(error: BaseException, dynamo_exc: Any) -> bool:
    """Whether fullgraph compilation failed in dynamo (no single graph, or an op failed on fake
    tensors while tracing), not in the compiled code's run: then nothing ran and a retry with graph
    breaks allowed is safe."""
    return isinstance(error, (dynamo_exc.Unsupported, dynamo_exc.UserError)) or (
        type(error).__module__.startswith("torch._dynamo") and _user_exception(error) is not None
    )


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


def _mapped(obj: Any, leaf_fn: Callable[..., Any], key: Any = None) -> Any:
    """`obj` rebuilt with `leaf_fn(leaf, key)` for every leaf of its nested tuples, lists and dicts
    (`key`: the dict key the leaf is under, so a `device=` argument can be told apart)."""
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a named tuple
        return type(obj)(*[_mapped(item, leaf_fn) for item in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)([_mapped(item, leaf_fn) for item in obj])
    if isinstance(obj, dict):
        return {k: _mapped(v, leaf_fn, k) for k, v in obj.items()}
    return leaf_fn(obj, key)


class TorchBackend(Backend):
    """PyTorch the same on every device: the path's device type is the default device while a
    test runs, every output must be there, torch.compile with the path's compiler."""

    name = "torch"
    device_type = "cpu"  # torch's device type of the path
    compiler = "inductor"

    def __init__(self, device: str) -> None:
        super().__init__(device)
        import torch

        self.torch = torch
        self.find_device()

    def find_device(self) -> None:
        """Raise DeviceUnavailableError where this machine has no such device."""

    def handle(self) -> str:
        return self.device_type

    @contextlib.contextmanager
    def pinned(self, mode: str) -> Iterator[None]:
        previous = self.torch.get_default_device()
        self.torch.set_default_device(self.handle())
        try:
            yield
        finally:
            self.torch.set_default_device(previous)

    @property
    def runs_on_host(self) -> bool:  # type: ignore[override]
        return self.device_type == "cpu"

    def check_placement(self, result: Any, host_asked: bool = False) -> None:
        for leaf in _leaves(result):
            if isinstance(leaf, self.torch.Tensor) and leaf.device.type != self.device_type:
                if host_asked and leaf.device.type == "cpu":
                    continue
                error = HostPlacementError if leaf.device.type == "cpu" else DevicePlacementError
                raise error(f"output tensor on {leaf.device}, expected device type {self.device_type!r}")

    def names_host(self, value: Any) -> bool:
        if not isinstance(value, (str, self.torch.device)):
            return False
        try:
            return self.torch.device(value).type == "cpu"
        except RuntimeError:
            return False

    @contextlib.contextmanager
    def building_samples(self) -> Iterator[None]:
        """torch's own tests build samples with no default device: the generator puts each input
        where its `device` argument says, and keeps on the CPU what it builds there on purpose
        (tensor_split's indices). A default device around it would move those too."""
        with self.on_host():
            yield

    @contextlib.contextmanager
    def on_host(self) -> Iterator[None]:
        previous = self.torch.get_default_device()
        self.torch.set_default_device("cpu")
        try:
            yield
        finally:
            self.torch.set_default_device(previous)

    def host_copy(self, value: Any) -> Any:
        torch = self.torch

        def moved(leaf: Any, key: Any = None) -> Any:
            if isinstance(leaf, torch.Tensor):
                return leaf.detach().to("cpu", copy=True)
            renamed = (key == "device" and isinstance(leaf, str)) or isinstance(leaf, torch.device)
            return torch.device("cpu") if renamed and not self.names_host(leaf) else leaf

        return _mapped(value, moved)

    def start_test(self, mode: str) -> None:
        if mode == "compiled":
            import torch._dynamo

            torch._dynamo.reset()
            # Past the recompile limit torch.compile silently runs eager: make that an error instead.
            torch._dynamo.config.recompile_limit = 64
            torch._dynamo.config.fail_on_recompile_limit_hit = True

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _TorchCompiled(self.torch, fn, self.compiler)

    def is_array(self, value: Any) -> bool:
        return isinstance(value, self.torch.Tensor)

    def driver(self) -> str | None:
        return f"cuda {self.torch.version.cuda}" if self.torch.version.cuda else None


class TensorFlowBackend(Backend):
    """TensorFlow the same on every device: ops pinned with tf.device and soft placement off (the
    study's pinning: no silent fallback to another device), tf.function(jit_compile=True)."""

    name = "tensorflow"
    device_type = "CPU"  # TensorFlow's logical device type of the path
    compiler = "xla"

    def __init__(self, device: str) -> None:
        super().__init__(device)
        import tensorflow as tf

        self.tf = tf
        self.connect()
        if not tf.config.list_logical_devices(self.device_type):
            raise DeviceUnavailableError(
                f"device {device} requested but TensorFlow sees no {self.device_type} device"
            )
        # The study's pinning: no silent fallback to another device.
        tf.config.set_soft_device_placement(False)

    def connect(self) -> None:
        """Whatever must happen before the device is listed (a TPU system's initialisation)."""

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

    @property
    def runs_on_host(self) -> bool:  # type: ignore[override]
        return self.device_type == "CPU"

    @contextlib.contextmanager
    def on_host(self) -> Iterator[None]:
        with self.tf.device("/device:CPU:0"):
            yield

    def host_copy(self, value: Any) -> Any:
        tf = self.tf

        def moved(leaf: Any, key: Any = None) -> Any:
            if isinstance(leaf, (tf.Tensor, tf.Variable)) and self._is_eager(leaf):
                with tf.device("/device:CPU:0"):
                    return tf.identity(leaf)
            return leaf

        return _mapped(value, moved)

    def check_placement(self, result: Any, host_asked: bool = False) -> None:
        expected = self.handle().removeprefix("/")  # device:CPU:0
        for leaf in _leaves(result):
            if isinstance(leaf, (self.tf.Tensor, self.tf.Variable)):
                try:
                    where = leaf.device or ""
                except (AttributeError, RuntimeError):  # symbolic tensors have no runtime device
                    continue
                if where and not where.endswith(expected):
                    on_host = "device:CPU:" in where and self.device_type != "CPU"
                    if on_host and host_asked:
                        continue
                    error = HostPlacementError if on_host else DevicePlacementError
                    raise error(f"output tensor on {where!r}, expected {expected!r}")

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
        details = self.tf.config.experimental.get_device_details(
            self.tf.config.list_physical_devices(self.device_type)[0]
        )
        return str(details.get("device_name", self.device))


class JaxBackend(Backend):
    """JAX the same on every device: jax.default_device, jit disabled in eager mode (as the study
    ran JAX), jax.block_until_ready, jax.jit."""

    name = "jax"
    platform = "cpu"  # JAX's platform name of the path
    compiler = "xla"

    def __init__(self, device: str) -> None:
        super().__init__(device)
        import jax

        self.jax = jax
        try:
            devices = jax.devices(self.platform)
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

    @property
    def runs_on_host(self) -> bool:  # type: ignore[override]
        return self.platform == "cpu"

    @contextlib.contextmanager
    def on_host(self) -> Iterator[None]:
        with self.jax.default_device(self.jax.devices("cpu")[0]), self.jax.disable_jit():
            yield

    def host_copy(self, value: Any) -> Any:
        host = self.jax.devices("cpu")[0]

        def moved(leaf: Any, key: Any = None) -> Any:
            return self.jax.device_put(leaf, host) if isinstance(leaf, self.jax.Array) else leaf

        return _mapped(value, moved)

    def check_placement(self, result: Any, host_asked: bool = False) -> None:
        for leaf in _leaves(result):
            if isinstance(leaf, self.jax.Array):
                try:
                    where = leaf.devices()
                except Exception:  # tracers and deleted arrays have no devices
                    continue
                if where != {self._device}:
                    on_host = self._device.platform != "cpu" and all(d.platform == "cpu" for d in where)
                    if on_host and host_asked:
                        continue
                    error = HostPlacementError if on_host else DevicePlacementError
                    raise error(f"output array on {where}, expected {self._device}")

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return CompiledCall(self.jax.jit(fn))

    def is_array(self, value: Any) -> bool:
        import numpy as np

        return isinstance(value, (self.jax.Array, np.ndarray))

    def describe(self) -> str:
        return str(getattr(self._device, "device_kind", self.device))


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "cpu"
