"""The timer of the harness: routes the call under test through the mode (eager, or the
framework's compiler with every non-array argument bound as a constant), warms up, syncs, records
milliseconds and how each call really ran (results.execution).

Part of the shared core of the harness digest (runner/provenance.py CORE_FILES).
"""

from __future__ import annotations

import contextlib
import functools
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from portability_data.runner.backends import Backend, CompiledCall, DeviceEvents


@dataclass
class Timer:
    """Times the call under test: routes it through the mode, warms up, syncs, records ms."""

    backend: Backend
    mode: str
    warmup: int
    timings_ms: list[float] = field(default_factory=list)
    executions: list[str] = field(default_factory=list)
    graph_breaks: dict[int, int] = field(default_factory=dict)  # per compiled target: its breaks
    device_events: DeviceEvents = field(default_factory=DeviceEvents)  # host fallbacks, compiles
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
                with self.backend.observe(self.device_events, timed=False):
                    self.backend.sync(target(*call_args))
            return self._timed(target, call_args, self._asks_for_host(kwargs))
        finally:
            self._note(target)

    def once(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Like calling the timer, without warm-up: for calls with side effects (optimizer steps)."""
        target, call_args = self.routed(fn, args, kwargs)
        try:
            return self._timed(target, call_args, self._asks_for_host(kwargs))
        finally:
            self._note(target)

    def _asks_for_host(self, kwargs: dict) -> bool:
        """Whether the call names the host CPU as its output's device (`torch.zeros_like(x,
        device='cpu')`): an output there is what it asked for, not a host fallback."""
        return "device" in kwargs and self.backend.names_host(kwargs["device"])

    @property
    def differential(self) -> bool:
        """Whether each sample is also run on the host CPU and compared (runner/device_oracle.py):
        in eager mode on every device that is not the host (compiled mode compares with eager on
        the same device instead)."""
        return self.mode == "eager" and not self.backend.runs_on_host

    def host_twin(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], Any] | None:
        """The same call for the host CPU to run eagerly, its inputs copied there now (before the
        call under test can change them in place) and copied again for each run of the twin (an
        in-place op must not feed its output to the next run); None where there is no
        differential oracle."""
        if not self.differential:
            return None
        pristine = self.backend.host_copy((args, kwargs))

        def on_host() -> Any:
            host_args, host_kwargs = self.backend.host_copy(pristine)
            with self.backend.on_host():
                return fn(*host_args, **host_kwargs)

        return on_host

    @contextlib.contextmanager
    def building_samples(self) -> Iterator[None]:
        """Build a census's samples as the framework's own tests do (Backend.building_samples)."""
        with self.backend.building_samples():
            yield

    def _note(self, target: Callable[..., Any]) -> None:
        """Record how the routed call ran (after it ran, or raised)."""
        if isinstance(target, CompiledCall):
            self.executions.append(target.execution)
            self.graph_breaks[id(target)] = target.graph_breaks
        else:
            self.executions.append("eager")

    def _timed(self, target: Callable[..., Any], args: tuple, host_asked: bool = False) -> Any:
        with self.backend.observe(self.device_events, timed=True):
            start = time.perf_counter()
            result = target(*args)
            self.backend.sync(result)
            self.timings_ms.append((time.perf_counter() - start) * 1e3)
        self.backend.check_placement(result, host_asked)
        return result

    @contextlib.contextmanager
    def region(self) -> Iterator[_Region]:
        """Time a block without mode routing: set `region.result` inside so the sync waits for it.
        In compiled mode the subtest is then recorded as `not_routed`: the block ran eagerly."""
        self.executions.append("eager" if self.mode == "eager" else "not_routed")
        region = _Region()
        with self.backend.observe(self.device_events, timed=True):
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
