"""The ExecuTorch path (issue 52): PyTorch's edge runtime. The function under test is exported
(`torch.export`), lowered to the edge dialect (`executorch.exir.to_edge_transform_and_lower`, Core
ATen only, as ExecuTorch requires), serialised to a `.pte` program (`to_executorch`) and run by the
ExecuTorch runtime's portable CPU kernels (`executorch.runtime.Runtime`) on the host. The
`executorch_xnnpack` path is the same with the XNNPACK partitioner: ops it delegates run in XNNPACK,
the rest on the portable kernels, counted by name (`get_delegation_info`). Float paths only:
nothing is quantized.

Compiled mode only: `compile(fn)` returns a call that builds and loads the program per input
signature (the harness binds every other argument as a constant), runs its `forward` and returns
torch tensors, so the census compares each result with torch's eager CPU result on the same sample
(the differential oracle). Eager mode runs nothing through ExecuTorch: refused.

A failure names its stage (results.error_type): `ExportError` (torch.export), `ConvertError`
(to_edge / lowering / to_executorch: an op outside Core ATen, a delegate's refusal),
`RuntimeLoadError` (the runtime could not load the program or its method: a kernel missing for an op
and dtype), `RuntimeRunError` (execute raised). `device_compiles` counts programs built.

The package is the `executorch` extra (pip install -e ".[executorch]"; it fits beside the pinned
torch); its version goes in the runs row (driver, build).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from portability_data.runner.backends import (
    CompiledCall,
    DeviceEvents,
    DeviceUnavailableError,
    TorchBackend,
    cpu_model,
)
from portability_data.runner.devices import DevicePath
from portability_data.runner.devices.compiled_only import refuse_eager
from portability_data.runner.devices.nothing_to_export import ON_HOST, on_host_or_raise
from portability_data.runner.devices.torch_exported import inputs_written, write_back

INSTALL = 'pip install -e ".[executorch]" (executorch, pinned in pyproject.toml)'
COMPILED_ONLY = (
    "the {device} path exports the function to an ExecuTorch program and runs it in the ExecuTorch "
    "runtime: it has compiled mode only (eager mode would run nothing through ExecuTorch); "
    "use --mode compiled"
)


class StageError(RuntimeError):
    stage = ""

    def __init__(self, tool: str, error: BaseException | str) -> None:
        if isinstance(error, BaseException):
            lines = [line.strip() for line in str(error).splitlines() if line.strip()]
            text = f"{type(error).__name__}: {' '.join(lines[:2])}"
        else:
            text = error
        super().__init__(f"{self.stage} ({tool}): {text}")


class ExportError(StageError):
    """torch.export could not capture the function."""

    stage = "export failed"


class ConvertError(StageError):
    """The exported program could not be lowered to the edge dialect, delegated or serialised."""

    stage = "conversion to an ExecuTorch program failed"


class RuntimeLoadError(StageError):
    """The ExecuTorch runtime could not load the program or its method (a missing kernel)."""

    stage = "executorch could not load the program"


class RuntimeRunError(StageError):
    """The runtime loaded the program, and executing it raised."""

    stage = "executorch failed running the program"


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("executorch")
    except metadata.PackageNotFoundError:
        return "missing"


class _Module:
    """A torch.nn.Module whose forward is the function under test, returning its outputs flat (a
    tuple of tensors: torch.return_types and other pytrees do not serialise); the structure is kept
    from the trace (`out_spec`) and given back to the outputs."""

    @staticmethod
    def wrap(torch: Any, fn: Callable[..., Any]) -> Any:
        from torch.utils import _pytree as pytree

        class FunctionUnderTest(torch.nn.Module):
            out_spec: Any = None

            def forward(self, *args: Any) -> Any:
                leaves, spec = pytree.tree_flatten(fn(*args))
                type(self).out_spec = spec
                return tuple(leaves)

        return FunctionUnderTest().eval()


def _op_name(target: Any) -> str:
    """aten::sin for an edge op (its schema's name), else the target's own name."""
    schema = getattr(target, "_schema", None)
    if schema is not None:
        return schema.name
    return getattr(target, "__name__", str(target))


class _ExecuTorchCall(CompiledCall):
    tool = "executorch.exir"

    def __init__(self, backend: TorchExecuTorch, fn: Callable[..., Any]) -> None:
        super().__init__(fn)
        self.backend, self.fn = backend, fn
        self.built: dict[Any, Any] = {}

    def __call__(self, *arrays: Any) -> Any:
        from torch.utils import _pytree as pytree

        leaves, spec = pytree.tree_flatten(arrays)
        key = str(spec), tuple((tuple(a.shape), str(a.dtype)) for a in leaves)
        if key not in self.built:
            self.backend.programs += 1
            try:
                self.built[key] = self.build(arrays)
            except (ExportError, ConvertError) as error:  # nothing to export: on the host, or the error
                result = on_host_or_raise(self, self.backend, self.fn, arrays, error)
                self.built[key] = ON_HOST
                return result
        if self.built[key] is ON_HOST:
            return self.fn(*arrays)
        _program, method, out_spec, outside, written = self.built[key]
        self.backend.outside.update(outside)
        try:
            outputs = list(method.execute([leaf.contiguous() for leaf in leaves]))
        except Exception as error:
            raise RuntimeRunError("executorch.runtime", error) from error
        # The program returns each input the function changes in place, first (torch_exported.py)
        return pytree.tree_unflatten(write_back(written, outputs, leaves), out_spec)

    def build(self, arrays: tuple) -> Any:
        torch = self.backend.torch
        from executorch.devtools.backend_debug import get_delegation_info
        from executorch.exir import to_edge_transform_and_lower
        from executorch.runtime import Runtime

        module = _Module.wrap(torch, self.fn)
        try:
            exported = torch.export.export(module, tuple(arrays))
        except Exception as error:
            raise ExportError("torch.export", error) from error
        try:
            edge = to_edge_transform_and_lower(exported, partitioner=self.backend.partitioners())
            outside = self.backend.not_delegated(edge, get_delegation_info)
            program = edge.to_executorch()
        except Exception as error:
            raise ConvertError(self.tool, error) from error
        try:
            # The Program holds the .pte bytes its methods read from: a method whose Program is freed
            # reads freed memory (a segfault in CI), so the built entry keeps both.
            loaded = Runtime.get().load_program(program.buffer)
            method = loaded.load_method("forward")
        except Exception as error:
            ops = sorted(
                {
                    _op_name(n.target)
                    for n in edge.exported_program().graph_module.graph.nodes
                    if n.op == "call_function"
                }
                - {"getitem", "executorch_call_delegate", "alloc"}
            )
            missing = " (OperatorMissing: no kernel for an op and dtype)" if "0x:14" in str(error) else ""
            raise RuntimeLoadError(
                "executorch.runtime",
                f"{type(error).__name__}: {error}{missing}; the program's ops: {', '.join(ops)}",
            ) from error
        return loaded, method, module.out_spec, outside, inputs_written(program.exported_program())


class TorchExecuTorch(TorchBackend):
    device_type = "cpu"
    compiler = "executorch"  # torch.export -> edge dialect -> .pte on the portable kernels
    counts_device_events = True
    modes = ("compiled",)
    programs = 0
    delegate = "portable kernels"

    def find_device(self) -> None:
        refuse_eager(self.device, COMPILED_ONLY.format(device=self.device))
        try:
            import executorch.exir
            import executorch.runtime  # noqa: F401
        except ImportError as exc:
            raise DeviceUnavailableError(
                f"device {self.device} requested but executorch is missing ({exc}): {INSTALL}"
            ) from None
        self.outside: Counter[str] = Counter()

    def partitioners(self) -> list[Any]:
        return []

    def not_delegated(self, edge: Any, delegation_info: Callable[..., Any]) -> Counter[str]:
        """The ops a delegate did not take (none without one: the portable kernels are the path's)."""
        return Counter()

    @contextlib.contextmanager
    def observe(self, events: DeviceEvents, timed: bool) -> Iterator[None]:
        outside, programs = Counter(self.outside), self.programs
        try:
            yield
        finally:
            events.fallback_ops.update(self.outside - outside)
            built = self.programs - programs
            events.compiles += built
            events.compiles_timed += built if timed else 0

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _ExecuTorchCall(self, fn)

    def describe(self) -> str:
        return f"{cpu_model()} (executorch {self.delegate})"

    def driver(self) -> str | None:
        return f"executorch {_version()} ({self.delegate})"

    def device_facts(self) -> dict[str, Any]:
        return {
            "runtime": "executorch",
            "executorch": _version(),
            "kernels": self.delegate,
            "lowering": "executorch.exir.to_edge_transform_and_lower (Core ATen)",
            "quantization": "none (float program)",
        }


PATH = DevicePath(
    name="executorch",
    summary="exported to an ExecuTorch program (torch.export -> edge dialect -> .pte) and run by the "
    "ExecuTorch runtime's portable CPU kernels; float only, compiled mode only",
    backends={"torch": TorchExecuTorch},
    needs=f"the executorch extra: {INSTALL}",
    not_served={
        "tensorflow": "ExecuTorch runs PyTorch programs only",
        "jax": "ExecuTorch runs PyTorch programs only",
    },
    what_to_do=f"run it in compiled mode (--mode compiled) with executorch installed: {INSTALL}",
    runtime="executorch",
)
