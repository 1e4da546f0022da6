"""The framework backends of the harness: how each framework names, pins, syncs and compiles for
the device under test, and how a compiled call says whether it really compiled.

Imported in the case worker only: the framework under test, pytest-free, NumPy at most. These
bytes are part of the harness digest (runner/provenance.py HARNESS_FILES).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar


class DevicePlacementError(AssertionError):
    """An output of the timed call lives on another device than the one under test."""


class DeviceUnavailableError(RuntimeError):
    """The requested device is not present for this framework on this machine."""


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
        return cpu_model() if self.device == "cpu" else self.device


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
            return cpu_model()
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
            return cpu_model()
        return str(getattr(self._device, "device_kind", self.device))


BACKENDS: dict[str, type[Backend]] = {
    "torch": TorchBackend,
    "tensorflow": TensorFlowBackend,
    "jax": JaxBackend,
}


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
