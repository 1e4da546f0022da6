"""The IREE path (issue 53): the function under test lowered to MLIR by its framework's exporter,
compiled by IREE for the host CPU (llvm-cpu, `--iree-llvmcpu-target-cpu=host`) and run in the IREE
runtime (`local-task` driver). StableHLO is the portable layer here: JAX exports it natively, and
it outlives torch_xla (whose last release, 2.9, follows torch 2.9 only).

JAX: `jax.export.export(jax.jit(fn))` on the example arrays' shapes and dtypes gives a StableHLO
module (`Exported.mlir_module()`), compiled with `input_type="stablehlo"`.

torch: iree-turbine's AOT export: `torch.export.export` of the function (wrapped in a module whose
forward returns its outputs flat), then `iree.turbine.aot.export` of that program (turbine's
decompositions, its FX importer to the `torch` MLIR dialect), compiled with `input_type="torch"`
(IREE's own torch-dialect lowering). The second PyTorch route, through torch-mlir's StableHLO
lowering, is the `iree_torch_mlir` path (iree_torch_mlir.py), so the two can be compared.

Compiled mode only: `compile(fn)` returns a call that builds one IREE module per input signature
(the harness binds every other argument as a constant), runs its `main` and returns the framework's
own arrays, so the census compares each result with the framework's eager CPU result on the same
sample (the differential oracle). Eager mode runs nothing through IREE: refused.

A failure names its stage (results.error_type): `ExportError` (jax.export / torch.export could not
capture the function), `LowerError` (the capture could not be imported or lowered to the MLIR IREE
takes: turbine's importer, torch-mlir's StableHLO lowering), `CompileError` (iree-compile refused
the module; the ops it names, e.g. `'torch.aten.linalg_eig'` or a `stablehlo.custom_call` target,
come first in the message), `RuntimeLoadError` (the runtime refused the compiled module),
`RuntimeRunError` (invoking it raised, or its outputs could not come back). `device_compiles`
counts IREE modules built.

The packages are the `iree` extra (pip install -e ".[iree]": iree-base-compiler, iree-base-runtime,
iree-turbine, torch-mlir; they fit beside the pinned stack); their versions go in the runs row.
"""

from __future__ import annotations

import contextlib
import re
import signal
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from portability_data.runner.backends import (
    CompiledCall,
    DeviceEvents,
    JaxBackend,
    TorchBackend,
    cpu_model,
)
from portability_data.runner.devices import DevicePath
from portability_data.runner.devices.compiled_only import refuse_eager, require
from portability_data.runner.devices.jax_arrays import KeyedFunction
from portability_data.runner.devices.nothing_to_export import ON_HOST, on_host_or_raise
from portability_data.runner.devices.torch_arrays import DenseOnlyError, numpy_of, tensor_of
from portability_data.runner.devices.torch_exported import inputs_written, write_back

INSTALL = (
    'pip install -e ".[iree]" (iree-base-compiler, iree-base-runtime, iree-turbine, torch-mlir; '
    "pinned in pyproject.toml)"
)
TARGET = "llvm-cpu"
TARGET_CPU = "host"
DRIVER = "local-task"
COMPILE_FLAGS = (f"--iree-llvmcpu-target-cpu={TARGET_CPU}",)
DISTRIBUTIONS = ("iree-base-compiler", "iree-base-runtime", "iree-turbine", "torch-mlir")
COMPILED_ONLY = (
    "the {device} path compiles the function with IREE and runs it in the IREE runtime: it has "
    "compiled mode only (eager mode would run nothing through IREE); use --mode compiled"
)


class StageError(RuntimeError):
    """A stage of the path failed; the message names the stage, its tool and its own error."""

    stage = ""

    def __init__(
        self, tool: str, error: BaseException | str, source: str = "", diagnostics: tuple[str, ...] = ()
    ) -> None:
        text = _summary(error, source, diagnostics) if isinstance(error, BaseException) else error
        super().__init__(f"{self.stage} ({tool}): {text}")


class ExportError(StageError):
    """The framework's exporter (jax.export, torch.export) could not capture the function."""

    stage = "export failed"


class LowerError(StageError):
    """The captured program could not be imported or lowered to the MLIR dialect IREE takes."""

    stage = "lowering to MLIR failed"


class CompileError(StageError):
    """iree-compile refused the module (an op or dtype it cannot lower for llvm-cpu)."""

    stage = "iree-compile failed"


class RuntimeLoadError(StageError):
    """The IREE runtime could not load the compiled module."""

    stage = "iree runtime could not load the module"


class RuntimeRunError(StageError):
    """The IREE runtime loaded the module, and invoking it raised."""

    stage = "iree runtime failed running the module"


# MLIR diagnostics name the op they refuse: "failed to legalize operation 'stablehlo.custom_call'"
# (its target: call_target_name = "lapack_sgeev_ffi"), "'torch.operator' ... name = "torch.aten.i0"",
# "error: 'stablehlo.fft' op ...".
_REFUSED = re.compile(
    r"failed to legalize (?:operation|unresolved materialization)[^']*'([\w.]+)'|error: '([\w.]+)' op"
)
_OPERATOR_NAME = re.compile(r'"torch\.operator"[^\n]*?name = "([\w.]+)"')
_CUSTOM_CALL = re.compile(r'call_target_name = "([\w.]+)"')
_STDIN_LINE = re.compile(r"<stdin>:(\d+):\d+: error: failed to legalize operation '(torch\.constant\.\w+)'")
_LOCATION = re.compile(
    r'(?:loc\([^\n]*?\)|"[^"\n]*\.py":\d+:\d+|[^\s"]+\.py:\d+:\d+|<stdin>:\d+:\d+|-:\d+:\d+):?\s*'
)


def _ops_named(text: str, source: str = "") -> list[str]:
    """The ops a failure's diagnostics name, in order of first mention: `torch.operator` by the op it
    stands for, a custom call with its target; a torch constant left behind (IREE names the
    constant, not the op that would have consumed it) by the ops of `source` that use it."""
    found: dict[str, None] = {}
    for line in text.splitlines():
        for match in _REFUSED.finditer(line):
            op = match.group(1) or match.group(2)
            if op == "torch.operator" and (name := _OPERATOR_NAME.search(line)):
                op = name.group(1)
            elif op == "stablehlo.custom_call" and (target := _CUSTOM_CALL.search(line)):
                op = f"stablehlo.custom_call @{target.group(1)}"
            found.setdefault(op, None)
    if source and found and all(op.startswith("torch.constant.") for op in found):
        users = _constant_users(text, source) or _torch_ops_left(source)
        if users:
            return users
    return list(found)


def _constant_users(text: str, source: str) -> list[str]:
    """The torch ops of `source` (the module given to iree-compile) that consume a constant the
    diagnostics name by its line (`<stdin>:4:14`): the op IREE could not lower."""
    lines = source.splitlines()
    users: dict[str, None] = {}
    for match in _STDIN_LINE.finditer(text):
        number = int(match.group(1)) - 1
        if not 0 <= number < len(lines) or "=" not in lines[number]:
            continue
        value = lines[number].split("=", 1)[0].strip()
        for line in lines[number + 1 :]:
            op = re.search(r"= (torch\.aten\.[\w.]+)", line)
            if op and re.search(re.escape(value) + r"\b", line):
                users.setdefault(op.group(1), None)
    return list(users)


def _torch_ops_left(source: str) -> list[str]:
    """The torch ops still in a module a lowering gave up on (torch-mlir leaves it half converted):
    those it could not convert."""
    return list(dict.fromkeys(re.findall(r"= (torch\.aten\.[\w.]+)", source)))


def _summary(error: BaseException, source: str = "", diagnostics: tuple[str, ...] = ()) -> str:
    """The error's type, the ops its diagnostics name, and its first error lines (MLIR's source
    locations, the printed op and the compiler's command line dropped)."""
    text = "\n".join((str(error), *diagnostics))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [_LOCATION.sub("", line).split(": %", 1)[0] for line in lines if "error:" in line]
    errors = list(dict.fromkeys(errors))
    body = "; ".join(errors[:2]) if errors else " ".join(_LOCATION.sub("", line) for line in lines[:2])
    ops = _ops_named(text, source)
    named = f"op(s) {', '.join(ops[:4])}: " if ops else ""
    crashed = re.search(r"Error code: -(\d+)", text)
    if crashed and not errors:  # the compiler died of a signal, with no diagnostic before it
        number = int(crashed.group(1))
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        body = f"iree-compile crashed ({name}, no diagnostic)"
    return f"{type(error).__name__}: {named}{body[:500]}"


def _versions() -> dict[str, str]:
    from importlib import metadata

    found = {}
    for name in DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "missing"
    return found


def require_packages(device: str, *modules: str) -> None:
    """IREE's compiler and runtime, then the route's own packages, or what to install."""
    require(device, INSTALL, "iree.compiler", "iree.runtime", *modules)


class IreeModule:
    """One compiled IREE module, loaded in its own context, its `main` ready to invoke."""

    def __init__(self, tool: str, mlir: str, input_type: str, config: Any) -> None:
        import iree.compiler
        import iree.runtime

        try:
            self.vmfb = iree.compiler.compile_str(
                mlir, target_backends=[TARGET], input_type=input_type, extra_args=list(COMPILE_FLAGS)
            )
        except Exception as error:
            raise CompileError(tool, error, source=mlir) from error
        try:
            context = iree.runtime.SystemContext(config=config)
            module = iree.runtime.VmModule.copy_buffer(context.instance, self.vmfb)
            context.add_vm_module(module)
            self.main = context.modules[module.name]["main"]
        except Exception as error:
            raise RuntimeLoadError(tool, error) from error
        self.context = context

    def __call__(self, tool: str, inputs: list) -> list:
        """The module's outputs for the NumPy inputs, as NumPy arrays (copied off the runtime)."""
        import numpy as np

        try:
            result = self.main(*inputs)
            outputs = result if isinstance(result, (tuple, list)) else [result]
            return [np.array(o.to_host() if hasattr(o, "to_host") else o) for o in outputs]
        except Exception as error:
            raise RuntimeRunError(tool, error) from error


class _IreeCall(CompiledCall):
    """The path's compiled call: one IREE module per input signature. The whole function is one
    module or the call raises, so its execution is `compiled`."""

    tool = ""

    def __init__(self, backend: Any, fn: Callable[..., Any]) -> None:
        super().__init__(fn)
        self.backend, self.fn = backend, fn
        self.built: dict[Any, Any] = {}

    def __call__(self, *arrays: Any) -> Any:
        leaves, tree = self.flatten(arrays)
        key = str(tree), tuple((tuple(a.shape), str(a.dtype)) for a in leaves)
        if key not in self.built:
            self.backend.modules += 1
            try:
                self.built[key] = self.build(arrays)
            except (ExportError, LowerError, CompileError) as error:  # nothing to compile: on the host
                result = on_host_or_raise(self, self.backend, self.fn, arrays, error)
                self.built[key] = ON_HOST
                return result
        if self.built[key] is ON_HOST:
            return self.fn(*arrays)
        module, out_tree = self.built[key]
        fed = self.feeds(self.built[key], leaves)
        outputs = module(self.tool, fed)
        try:
            return self.unflatten(out_tree, [self.from_numpy(o) for o in outputs], leaves, fed)
        except Exception as error:
            raise RuntimeRunError(self.tool, error) from error

    def flatten(self, arrays: tuple) -> tuple[list, Any]:
        raise NotImplementedError

    def unflatten(self, tree: Any, leaves: list, inputs: list, fed: list) -> Any:
        """The function's result from the module's outputs (`inputs`: the function's flat arrays;
        `fed`: what the module was given for them)."""
        raise NotImplementedError

    def build(self, arrays: tuple) -> tuple[IreeModule, Any]:
        raise NotImplementedError

    def feeds(self, built: Any, leaves: list) -> list:
        """The input arrays as NumPy arrays of the module's input types."""
        raise NotImplementedError

    def from_numpy(self, array: Any) -> Any:
        raise NotImplementedError


class _IreeBackendMixin:
    counts_device_events = True
    modes = ("compiled",)  # `portability devices` shows it; the backend refuses eager (refuse_eager)
    modules = 0
    route = ""  # how the framework reaches IREE, for the runs row's build facts

    def runtime_config(self) -> Any:
        import iree.runtime

        if getattr(self, "_config", None) is None:
            self._config = iree.runtime.Config(DRIVER)
        return self._config

    @contextlib.contextmanager
    def observe(self, events: DeviceEvents, timed: bool) -> Iterator[None]:
        modules = self.modules
        try:
            yield
        finally:
            built = self.modules - modules
            events.compiles += built
            events.compiles_timed += built if timed else 0

    def describe(self) -> str:
        return f"{cpu_model()} (iree {TARGET}, {DRIVER})"

    def driver(self) -> str | None:
        versions = _versions()
        return (
            f"iree compiler {versions['iree-base-compiler']} runtime {versions['iree-base-runtime']} "
            f"({TARGET}, {DRIVER})"
        )

    def device_facts(self) -> dict[str, Any]:
        return {
            "runtime": "iree",
            **_versions(),
            "iree_target_backend": TARGET,
            "iree_target_cpu": TARGET_CPU,
            "iree_driver": DRIVER,
            "iree_compile_flags": list(COMPILE_FLAGS),
            "route": self.route,
        }


# -------------------------------------------------------------------------------------------- JAX


class _JaxIreeCall(_IreeCall):
    tool = "jax.export"

    def flatten(self, arrays: tuple) -> tuple[list, Any]:
        return self.backend.jax.tree_util.tree_flatten(arrays)

    def unflatten(self, tree: Any, leaves: list, inputs: list, fed: list) -> Any:
        out_tree, flat = tree
        return self.backend.jax.tree_util.tree_unflatten(out_tree, flat.results(leaves))

    def feeds(self, built: Any, leaves: list) -> list:
        """The arrays as the exported module takes them (jax_arrays: as jax.jit does in this x64
        mode, a PRNG key as its data)."""
        _, (_, flat) = built
        return flat.feeds(leaves)

    def from_numpy(self, array: Any) -> Any:
        return self.backend.jax.device_put(array, self.backend.handle())

    def build(self, arrays: tuple) -> tuple[IreeModule, Any]:
        jax = self.backend.jax
        leaves, tree = jax.tree_util.tree_flatten(arrays)
        flat = KeyedFunction(jax, self.fn, leaves, tree)  # one array per input of the module's `main`
        try:
            exported = jax.export.export(jax.jit(flat, keep_unused=True))(*flat.specs(leaves))  # all inputs
            mlir = exported.mlir_module()
        except Exception as error:
            raise ExportError(self.tool, error) from error
        module = IreeModule(self.tool, mlir, "stablehlo", self.backend.runtime_config())
        return module, (exported.out_tree, flat)


class JaxIree(_IreeBackendMixin, JaxBackend):
    platform = "cpu"
    compiler = "jax.export"
    route = "jax.export (StableHLO) -> iree-compile --iree-input-type=stablehlo"

    def __init__(self, device: str) -> None:
        refuse_eager(device, COMPILED_ONLY.format(device=device))
        require_packages(device)
        super().__init__(device)

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _JaxIreeCall(self, fn)


# ------------------------------------------------------------------------------------------ torch


def _wrapped(torch: Any, fn: Callable[..., Any]) -> Any:
    """A torch.nn.Module whose forward is the function under test, returning its tensor outputs flat
    (a tuple of tensors); the structure is kept from the trace (`out_spec`), and so are the outputs
    that are not tensors (`constants`, by leaf position: a bool, an int, None), which torch.export
    bakes into the program as constants. A route that exports them returns them as tensors of its
    own (torch-mlir: `tensor(False)` for `torch.is_grad_enabled()`) or refuses the module (iree-turbine:
    `KeyError: True`); before 2026-12-07 torch-mlir's tensors reached the function's caller and
    failed its `is False` (117 curated subtests of 4 functions, rule harness_constant_output_as_tensor)."""
    from torch.utils import _pytree as pytree

    class FunctionUnderTest(torch.nn.Module):
        out_spec: Any = None
        constants: ClassVar[dict[int, Any]] = {}

        def forward(self, *args: Any) -> Any:
            leaves, spec = pytree.tree_flatten(fn(*args))
            type(self).out_spec = spec
            type(self).constants = {
                index: leaf for index, leaf in enumerate(leaves) if not isinstance(leaf, torch.Tensor)
            }
            return tuple(leaf for leaf in leaves if isinstance(leaf, torch.Tensor))

    return FunctionUnderTest().eval()


def _with_constants(tensors: list, constants: dict[int, Any], count: int) -> list:
    """The function's flat outputs: the module's tensors, in order, with the traced constants at
    their positions."""
    computed = iter(tensors)
    return [constants[index] if index in constants else next(computed) for index in range(count)]


class _TorchIreeCall(_IreeCall):
    """torch.export of the function, then the backend's lowering (`lower`) to MLIR for IREE."""

    def flatten(self, arrays: tuple) -> tuple[list, Any]:
        from torch.utils import _pytree as pytree

        return pytree.tree_flatten(arrays)

    def unflatten(self, tree: Any, leaves: list, inputs: list, fed: list) -> Any:
        """The function's result, and each input it changes in place written back (torch_exported.py),
        from where the route leaves it: torch-mlir's StableHLO returns the new value as a leading
        output of its own; iree-turbine writes it into the argument's buffer (fed as a device array,
        `feeds`). Before 2026-12-07 both were lost (a treespec length mismatch on torch-mlir)."""
        from torch.utils import _pytree as pytree

        out_spec, written, constants = tree
        if len(leaves) == len(written) + out_spec.num_leaves - len(constants):
            leaves = write_back(written, leaves, inputs)
        else:  # every written input was fed as a device array (`feeds`)
            for index in written:
                inputs[index].copy_(self.from_numpy(fed[index].to_host()))
        return pytree.tree_unflatten(_with_constants(leaves, constants, out_spec.num_leaves), out_spec)

    def feeds(self, built: Any, leaves: list) -> list:
        """NumPy arrays; an input the function changes in place as a device array of the module's
        device, whose buffer the module may write (iree-turbine's mutable arguments)."""
        import iree.runtime

        module, (_, written, _) = built
        try:
            arrays = [numpy_of(leaf) for leaf in leaves]
        except DenseOnlyError as error:
            raise RuntimeRunError(self.tool, error) from error
        for index in written:
            arrays[index] = iree.runtime.asdevicearray(module.context.config.device, arrays[index])
        return arrays

    def from_numpy(self, array: Any) -> Any:
        return tensor_of(array)

    def build(self, arrays: tuple) -> tuple[IreeModule, Any]:
        torch = self.backend.torch
        module = _wrapped(torch, self.fn)
        try:
            exported = torch.export.export(module, tuple(arrays))
        except Exception as error:
            raise ExportError("torch.export", error) from error
        if not exported.graph_signature.output_specs:  # no tensor out, none written: on the host
            raise ExportError("torch.export", "the result holds no tensor and no input is written")
        try:
            mlir, lowered = self.backend.lower(exported)
        except LowerError:
            raise
        except Exception as error:
            raise LowerError(self.backend.compiler, error) from error
        backend = self.backend
        compiled = IreeModule(backend.compiler, mlir, backend.input_type, backend.runtime_config())
        return compiled, (module.out_spec, inputs_written(lowered), module.constants)


class TorchIreeTurbine(_IreeBackendMixin, TorchBackend):
    device_type = "cpu"
    compiler = "iree.turbine"  # torch.export -> iree.turbine.aot.export (torch dialect) -> iree-compile
    input_type = "torch"
    route = "torch.export -> iree.turbine.aot.export (torch dialect) -> iree-compile --iree-input-type=torch"

    def find_device(self) -> None:
        refuse_eager(self.device, COMPILED_ONLY.format(device=self.device))
        require_packages(self.device, "iree.turbine.aot")

    def lower(self, exported: Any) -> tuple[str, Any]:
        """iree-turbine's MLIR of the program decomposed as turbine's own route does it, and that
        program (its signature says which inputs the module writes). Handed an
        nn.Module, `aot.export` runs torch.export and then `run_decompositions` with its AOT
        decomposition table; handed an ExportedProgram, it imports the program as it is. Before
        2026-12-07 the harness handed it torch.export's training IR undecomposed, and iree-compile
        refused ops that turbine's own route never gives it (aten.mT, divide.Tensor, detach_, an
        in-place add_: ~400 of the census's compile failures named such an op)."""
        from iree.turbine import aot
        from iree.turbine.aot import decompositions

        decomposed = exported.run_decompositions(decompositions.current_aot_decompositions())
        return str(aot.export(decomposed).mlir_module), decomposed

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _TorchIreeCall(self, fn)


PATH = DevicePath(
    name="iree",
    summary="compiled by IREE for the host CPU (llvm-cpu) and run in the IREE runtime: JAX through "
    "jax.export (StableHLO), PyTorch through iree-turbine's AOT export; compiled mode only",
    backends={"jax": JaxIree, "torch": TorchIreeTurbine},
    needs=f"the iree extra: {INSTALL}",
    not_served={
        "tensorflow": "TensorFlow reaches StableHLO through its XLA bridge (tf.mlir / tf2xla), not built "
        "here (issue 53)"
    },
    what_to_do=f"run it in compiled mode (--mode compiled) with IREE installed: {INSTALL}",
    runtime="iree",
)
