"""The ONNX export path (issue 51): the function under test exported to an ONNX model by its
framework's exporter and run by ONNX Runtime on the host CPU (its CPU execution provider).

Compiled mode only: `compile(fn)` returns a call that, per input signature (the shapes, dtypes and
nesting of the array arguments; the harness binds every other argument as a constant), exports
`fn` on the given arrays (torch: `torch.onnx.export(dynamo=True)`; TensorFlow: tf2onnx on the
tf.function's concrete function; JAX: jax2onnx), loads the model in an `onnxruntime.InferenceSession`
(CPUExecutionProvider), runs it and returns the framework's own arrays on the host, so the census
compares each result with the framework's eager result on the same sample (compiled mode's oracle:
here the differential oracle against the framework's eager CPU result). Eager mode has no meaning
here (nothing is exported): the backend refuses it, and the dry run says so.

A failure says which stage failed (results.error_type): `ExportError` (the exporter could not make a
model: an op without an ONNX lowering, named in the message, or a tracing limit), `RuntimeLoadError`
(ONNX Runtime refused the model: no kernel for an op and dtype, an invalid graph),
`RuntimeRunError` (the session raised while running). Each wraps the tool's own error and message
(runner/rules/failures.yaml reads them). Nothing runs on the host in place of the runtime (the
exporter raises instead), so `host_fallback_ops` stays empty; `device_compiles` counts the exports
(one per new input signature), warm-up included.

The packages are the `onnx` extra (pip install -e ".[onnx]"): onnx, onnxruntime, onnxscript (the
torch exporter's op library), tf2onnx, jax2onnx; their versions and each exporter's opset go in the
runs row (driver, build).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from portability_data.runner.backends import (
    CompiledCall,
    DeviceEvents,
    JaxBackend,
    TensorFlowBackend,
    TorchBackend,
    cpu_model,
)
from portability_data.runner.compile_cache import jax_cache_scope, plugin_cache_dir
from portability_data.runner.devices import DevicePath
from portability_data.runner.devices.compiled_only import refuse_eager, require
from portability_data.runner.devices.nothing_to_export import ON_HOST, on_host_or_raise
from portability_data.runner.devices.trace_errors import trace_error_cause

PROVIDER = "CPUExecutionProvider"
INSTALL = (
    'pip install -e ".[onnx]" (onnx, onnxruntime, onnxscript, tf2onnx, jax2onnx; pinned in pyproject.toml)'
)
COMPILED_ONLY = (
    "the onnxruntime path exports the function and runs the exported model: it has compiled mode only "
    "(eager mode would run nothing through ONNX Runtime); use --mode compiled"
)
# The opset each exporter writes: torch.onnx's default (dynamo exporter), the newest tf2onnx 1.17
# converts to, jax2onnx's default. In the runs row's build facts.
OPSETS = {"torch": 20, "tensorflow": 18, "jax": 23}


class ExportStageError(RuntimeError):
    """A stage of the export path failed; the message names the stage's tool and its own error."""

    stage = ""

    def __init__(self, tool: str, error: BaseException | str, detail: str = "") -> None:
        if isinstance(error, BaseException):
            inner = _innermost(error)
            cause = trace_error_cause(str(inner))  # a tf.function trace error: its cause, not its frames
            text = cause if cause is not None else f"{type(inner).__name__}: {inner}".strip()
        else:
            text = error
        super().__init__(f"{self.stage} ({tool}){': ' + detail if detail else ''}: {text}")


class ExportError(ExportStageError):
    """The exporter could not turn the function into an ONNX model."""

    stage = "export failed"


class RuntimeLoadError(ExportStageError):
    """ONNX Runtime could not load the exported model (no kernel for an op and dtype, invalid graph)."""

    stage = "onnxruntime could not load the exported model"


class RuntimeRunError(ExportStageError):
    """ONNX Runtime loaded the model, and running it raised."""

    stage = "onnxruntime failed running the exported model"


def _innermost(error: BaseException) -> BaseException:
    """The root of an exception's `raise ... from` chain (the exporter's own cause: torch.onnx's
    DispatchError naming the op without a lowering under two ConversionErrors of boilerplate)."""
    seen = {id(error)}
    while error.__cause__ is not None and id(error.__cause__) not in seen:
        error = error.__cause__
        seen.add(id(error))
    return error


def _session(tool: str, model: bytes) -> Any:
    """An ONNX Runtime session of the model on the CPU execution provider (RuntimeLoadError if not)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only
    try:
        return ort.InferenceSession(model, sess_options=options, providers=[PROVIDER])
    except Exception as error:
        raise RuntimeLoadError(tool, error) from error


def _unknown_ops(model: Any) -> list[str]:
    """Ops of the model (subgraphs included) in ONNX's own domain that ONNX does not define: what
    tf2onnx leaves in place of a TensorFlow op it cannot convert (it logs them and goes on)."""
    import onnx

    found: set[str] = set()

    def walk(graph: Any) -> None:
        for node in graph.node:
            if node.domain in ("", "ai.onnx") and not onnx.defs.has(node.op_type):
                found.add(node.op_type)
            for attribute in node.attribute:
                for sub in [*([attribute.g] if attribute.HasField("g") else []), *attribute.graphs]:
                    walk(sub)

    walk(model.graph)
    return sorted(found)


def _retyped_inputs(model: Any, dtypes: list[Any]) -> list[str]:
    """The model's inputs whose ONNX element type is not the dtype of the array fed there: tf2onnx
    writes a bfloat16 tensor as FLOAT16 (tf2onnx 1.17, tf_utils.py's dtype map), jax2onnx a float32
    one as DOUBLE beside 64-bit inputs (`_needs_64_bits`): a model of another dtype than the
    function's, which the function's array cannot be fed to."""
    import numpy as np
    from onnx import helper

    found = []
    for given, dtype in zip(model.graph.input, dtypes):
        declared = given.type.tensor_type.elem_type
        if declared != helper.np_dtype_to_tensor_dtype(np.dtype(dtype)):
            wrote = helper.tensor_dtype_to_string(declared).removeprefix("TensorProto.").lower()
            found.append(f"{given.name} as {wrote} for a {np.dtype(dtype).name} array")
    return found


def _needs_64_bits(arrays: list[Any]) -> bool:
    """jax2onnx's `enable_double_precision` for a function of these inputs and outputs: True where
    one is 64-bit (float64, complex128, int64, uint64). jax2onnx traces with JAX's x64 mode set to
    the flag and, when it is on, writes every float32 as double (its float policy, jax2onnx
    ir_utils.numpy_dtype_to_ir_with_float_policy); when it is off, a 64-bit input is traced as
    32-bit. So the flag follows the function's own types, not the process's x64 mode: a float32
    function exports as float32 even where a case turned x64 on (before 2026-12-07 it was the x64
    mode, and every float32 input of such a case was written as double and refused its array). A
    function mixing float32 with 64-bit types still gets its float32 inputs written as double:
    `_retyped_inputs` names them."""
    import numpy as np

    def wide(dtype: Any) -> bool:
        dtype = np.dtype(dtype)
        return (dtype.kind in "fiu" and dtype.itemsize == 8) or (dtype.kind == "c" and dtype.itemsize == 16)

    return any(wide(a.dtype) for a in arrays)


def _captured_feeds(concrete: Any, model: Any, n_arguments: int) -> list[Any]:
    """The values of the model's inputs beyond the function's arguments: tf2onnx's from_function
    keeps a tensor the function closes over (a constant argument of the case, as the harness passes
    a structure of tensors and Python values) as a model input named after its placeholder, not as
    a constant (tf2onnx 1.17; found 2026-12-07: tf.nest.map_structure, TensorArray.concat, ...,
    whose models ran with "Required inputs ... are missing from input feed"). The converted model is
    the function; it takes its captured tensors as inputs, so they are fed, in the model's order.
    A model input that is neither an argument nor an eager capture is left unfed (ONNX Runtime then
    names it)."""
    import numpy as np

    placeholders = [tensor.name for tensor in concrete.graph.inputs]
    captures = dict(
        zip(placeholders[len(placeholders) - len(concrete.captured_inputs) :], concrete.captured_inputs)
    )
    feeds = []
    for given in model.graph.input[n_arguments:]:
        value = captures.get(given.name)
        if value is None or not hasattr(value, "numpy") or value.dtype.name == "resource":
            break
        feeds.append(np.asarray(value.numpy()))
    return feeds


def _versions(*distributions: str) -> dict[str, str]:
    """The installed versions of the path's packages (jax2onnx has no __version__)."""
    from importlib import metadata

    found = {}
    for name in distributions:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "missing"
    return found


def _bfloat16(array: Any) -> bool:
    return str(getattr(array, "dtype", "")) == "bfloat16"


def _ort_run(session: Any, feeds: list[Any]) -> list[Any]:
    """The session run on NumPy feeds. `InferenceSession.run` binds NumPy's own dtypes only, and a
    bfloat16 array is ml_dtypes' user-defined type (NumPy type 256): where an input or output is
    bfloat16 the feeds go in as OrtValues (a bfloat16 one made from the array's bits with ONNX's
    BFLOAT16 element type) and each bfloat16 output's bits are copied out of its OrtValue (ONNX
    Runtime has no NumPy type for it) into an ml_dtypes bfloat16 array."""
    import ctypes
    import math

    import ml_dtypes
    import numpy as np
    import onnxruntime as ort

    inputs, outputs = session.get_inputs(), session.get_outputs()
    if not any(_bfloat16(a) for a in feeds) and all(o.type != "tensor(bfloat16)" for o in outputs):
        return list(session.run(None, {i.name: v for i, v in zip(inputs, feeds)}))
    from onnx import TensorProto

    def ort_value(array: Any) -> Any:
        if _bfloat16(array):
            bits = np.ascontiguousarray(array).view(np.uint16)
            return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, TensorProto.BFLOAT16)
        return ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(array))

    results = session.run_with_ort_values(
        [o.name for o in outputs], {i.name: ort_value(v) for i, v in zip(inputs, feeds)}
    )
    arrays = []
    for value in results:
        if value.is_tensor() and value.data_type() == "tensor(bfloat16)":
            shape = value.shape()
            count = math.prod(shape)
            bits = np.zeros(count, dtype=np.uint16)
            if count:
                bits[:] = np.ctypeslib.as_array((ctypes.c_uint16 * count).from_address(value.data_ptr()))
            arrays.append(bits.view(ml_dtypes.bfloat16).reshape(shape))
        else:
            arrays.append(value.numpy())
    return arrays


class _OnnxCall(CompiledCall):
    """The export path's compiled call: one exported model and session per input signature. The
    whole function is one ONNX graph or the call raises, so its execution is `compiled`."""

    tool = ""

    def __init__(self, backend: Any, fn: Callable[..., Any]) -> None:
        super().__init__(fn)
        self.backend, self.fn = backend, fn
        self.built: dict[Any, Any] = {}

    def __call__(self, *arrays: Any) -> Any:
        key = self.signature(arrays)
        if key not in self.built:
            self.backend.exports += 1
            try:
                self.built[key] = self.build(arrays)
            except ExportError as error:  # nothing to export: on the host, or the error
                result = on_host_or_raise(self, self.backend, self.fn, arrays, error)
                self.built[key] = ON_HOST
                return result
        if self.built[key] is ON_HOST:
            return self.fn(*arrays)
        try:
            return self.run(self.built[key], arrays)
        except ExportStageError:
            raise
        except Exception as error:
            raise RuntimeRunError(self.tool, error) from error

    def signature(self, arrays: tuple) -> Any:
        raise NotImplementedError

    def build(self, arrays: tuple) -> Any:
        raise NotImplementedError

    def run(self, built: Any, arrays: tuple) -> Any:
        raise NotImplementedError


class _OnnxBackendMixin:
    """What the three backends of the path share: the export count (device_compiles) and the
    runtime's description."""

    counts_device_events = True
    modes = ("compiled",)  # `portability devices` shows it; the backend refuses eager (refuse_eager)
    exports = 0
    framework_module = ""

    @contextlib.contextmanager
    def observe(self, events: DeviceEvents, timed: bool) -> Iterator[None]:
        before = self.exports
        try:
            yield
        finally:
            exported = self.exports - before
            events.compiles += exported
            events.compiles_timed += exported if timed else 0

    def describe(self) -> str:
        return f"{cpu_model()} (onnxruntime {PROVIDER})"

    def driver(self) -> str | None:
        import onnxruntime as ort

        return f"onnxruntime {ort.__version__} ({PROVIDER})"

    def facts(self, exporter: str, *modules: str) -> dict[str, Any]:
        import onnxruntime as ort

        return {
            "runtime": "onnxruntime",
            "execution_provider": PROVIDER,
            "available_providers": list(ort.get_available_providers()),
            "exporter": exporter,
            "opset": OPSETS[self.framework_module],
            **_versions("onnx", "onnxruntime", *modules),
        }


# ------------------------------------------------------------------------------------------ torch


class _TorchModule:
    """Made on first use: a torch.nn.Module whose forward is the function under test."""

    @staticmethod
    def wrap(torch: Any, fn: Callable[..., Any]) -> Any:
        class FunctionUnderTest(torch.nn.Module):
            def forward(self, *args: Any) -> Any:
                return fn(*args)

        return FunctionUnderTest()


class _TorchOnnxCall(_OnnxCall):
    tool = "torch.onnx"

    def signature(self, arrays: tuple) -> Any:
        from torch.utils import _pytree as pytree

        leaves, spec = pytree.tree_flatten(arrays)
        return str(spec), tuple((tuple(a.shape), str(a.dtype)) for a in leaves)

    def build(self, arrays: tuple) -> Any:
        torch = self.backend.torch
        try:
            program = torch.onnx.export(
                _TorchModule.wrap(torch, self.fn),
                tuple(arrays),
                dynamo=True,
                opset_version=OPSETS["torch"],
                optimize=True,
                verify=False,
                verbose=False,
                report=False,
            )
        except Exception as error:
            raise ExportError(self.tool, error) from error
        try:
            program.initialize_inference_session(lambda model: _session(self.tool, model))
        except ExportStageError:
            raise
        except Exception as error:  # serialising the model
            raise RuntimeLoadError(self.tool, error) from error
        return program

    def run(self, program: Any, arrays: tuple) -> Any:
        """Run the session (ONNXProgram.__call__: flattened inputs, complex ones as real pairs),
        then give the outputs torch's structure back: each exported output by its graph node's name,
        complex outputs as complex tensors again, an input the function mutated in place updated."""
        torch = self.backend.torch
        from torch.utils import _pytree as pytree

        values = dict(zip((v.name for v in program.model.graph.outputs), program(*arrays)))
        exported = program.exported_program
        signature = exported.graph_signature
        (returned,) = next(n for n in exported.graph.nodes if n.op == "output").args
        flat_inputs = pytree.tree_leaves(arrays)
        outputs = []
        for spec, node in zip(signature.output_specs, pytree.tree_leaves(returned)):
            if isinstance(node, torch.fx.Node):
                value = values[node.name]
                if node.meta["val"].is_complex():
                    value = torch.view_as_complex(value.contiguous())
            else:
                value = node  # a constant the function returned
            if spec.kind.name == "USER_INPUT_MUTATION":
                flat_inputs[signature.user_inputs.index(spec.target)].copy_(value)
            elif spec.kind.name == "USER_OUTPUT":
                outputs.append(value)
        return pytree.tree_unflatten(outputs, exported.call_spec.out_spec)


class TorchOnnxRuntime(_OnnxBackendMixin, TorchBackend):
    device_type = "cpu"
    compiler = "torch.onnx"  # torch.onnx.export(dynamo=True): torch.export, then onnxscript's torchlib
    framework_module = "torch"

    def find_device(self) -> None:
        refuse_eager(self.device, COMPILED_ONLY)
        require(self.device, INSTALL, "onnx", "onnxruntime", "onnxscript")

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _TorchOnnxCall(self, fn)

    def device_facts(self) -> dict[str, Any]:
        return self.facts("torch.onnx.export(dynamo=True)", "onnxscript")


# ------------------------------------------------------------------------------------- TensorFlow


class _TensorFlowOnnxCall(_OnnxCall):
    tool = "tf2onnx"

    def signature(self, arrays: tuple) -> Any:
        tf = self.backend.tf
        leaves = tf.nest.flatten(arrays)
        return str(tf.nest.map_structure(lambda _: 0, arrays)), tuple(
            (tuple(a.shape), a.dtype.name) for a in leaves
        )

    def build(self, arrays: tuple) -> Any:
        tf = self.backend.tf
        import tf2onnx

        specs = tf.nest.map_structure(lambda a: tf.TensorSpec(a.shape, a.dtype), list(arrays))
        function = tf.function(self.fn)
        try:
            concrete = function.get_concrete_function(*specs)
            model, _ = tf2onnx.convert.from_function(
                function, input_signature=specs, opset=OPSETS["tensorflow"]
            )
        except Exception as error:
            raise ExportError(self.tool, error) from error
        unknown = _unknown_ops(model)
        if unknown:
            raise ExportError(
                self.tool, f"no ONNX conversion for TensorFlow op(s) {', '.join(unknown)}", "unsupported op"
            )
        captured = _captured_feeds(concrete, model, len(tf.nest.flatten(specs)))
        given = [spec.dtype.as_numpy_dtype for spec in tf.nest.flatten(specs)] + [c.dtype for c in captured]
        retyped = _retyped_inputs(model, given)  # the arguments', and the captured tensors'
        if retyped:
            raise ExportError(self.tool, f"the model takes {'; '.join(retyped)}", "input retyped")
        return _session(self.tool, model.SerializeToString()), concrete.structured_outputs, captured

    def run(self, built: Any, arrays: tuple) -> Any:
        import numpy as np

        tf = self.backend.tf
        session, structure, captured = built
        # a 0-d tensor's .numpy() is a NumPy scalar, which ONNX Runtime refuses as a feed: arrays only
        feeds = [np.asarray(a.numpy() if hasattr(a, "numpy") else a) for a in tf.nest.flatten(arrays)]
        outputs = _ort_run(session, feeds + captured)
        with tf.device(self.backend.handle()):
            tensors = [tf.constant(o) for o in outputs]
        return tf.nest.pack_sequence_as(structure, tensors)


class TensorFlowOnnxRuntime(_OnnxBackendMixin, TensorFlowBackend):
    device_type = "CPU"
    compiler = "tf2onnx"
    framework_module = "tensorflow"

    def connect(self) -> None:
        refuse_eager(self.device, COMPILED_ONLY)
        require(self.device, INSTALL, "onnx", "onnxruntime", "tf2onnx")

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _TensorFlowOnnxCall(self, fn)

    def device_facts(self) -> dict[str, Any]:
        return self.facts("tf2onnx.convert.from_function", "tf2onnx")


# -------------------------------------------------------------------------------------------- JAX


class _JaxOnnxCall(_OnnxCall):
    tool = "jax2onnx"

    def signature(self, arrays: tuple) -> Any:
        jax = self.backend.jax
        leaves, tree = jax.tree_util.tree_flatten(arrays)
        return str(tree), tuple((tuple(a.shape), str(a.dtype)) for a in leaves)

    def build(self, arrays: tuple) -> Any:
        jax = self.backend.jax
        from jax2onnx import to_onnx

        self.backend.import_plugins()
        leaves, tree = jax.tree_util.tree_flatten(arrays)
        fn = self.fn

        def flat(*values: Any) -> Any:  # jax2onnx takes one array per input
            return fn(*jax.tree_util.tree_unflatten(tree, values))

        # the function's own input types: what jax.jit would make of these arrays in this x64 mode
        specs = [jax.ShapeDtypeStruct(a.shape, jax.dtypes.canonicalize_dtype(a.dtype)) for a in leaves]
        try:
            shapes = jax.eval_shape(flat, *specs)
            model = to_onnx(
                flat,
                specs,
                opset=OPSETS["jax"],
                enable_double_precision=_needs_64_bits([*specs, *jax.tree_util.tree_leaves(shapes)]),
                return_mode="proto",
            )
        except Exception as error:
            raise ExportError(self.tool, error) from error
        retyped = _retyped_inputs(model, [spec.dtype for spec in specs])
        if retyped:
            raise ExportError(self.tool, f"the model takes {'; '.join(retyped)}", "input retyped")
        return _session(self.tool, model.SerializeToString()), jax.tree_util.tree_structure(shapes)

    def run(self, built: Any, arrays: tuple) -> Any:
        import numpy as np

        jax = self.backend.jax
        session, tree = built
        # each array as jax.jit takes it in this x64 mode (a float64 NumPy array is float32 without x64)
        leaves = jax.tree_util.tree_leaves(arrays)
        feeds = [np.asarray(a, jax.dtypes.canonicalize_dtype(a.dtype)) for a in leaves]
        outputs = _ort_run(session, feeds)
        return jax.tree_util.tree_unflatten(tree, [jax.device_put(o, self.backend.handle()) for o in outputs])


class JaxOnnxRuntime(_OnnxBackendMixin, JaxBackend):
    platform = "cpu"
    compiler = "jax2onnx"
    framework_module = "jax"

    def __init__(self, device: str) -> None:
        refuse_eager(device, COMPILED_ONLY)
        require(device, INSTALL, "onnx", "onnxruntime", "jax2onnx")
        super().__init__(device)

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _JaxOnnxCall(self, fn)

    def import_plugins(self) -> None:
        """jax2onnx's plugins, imported before its first export as to_onnx would, their programs
        read from (or first written to) the plugin cache (compile_cache.plugin_cache_dir: no
        program of a case is kept there, so a label cannot depend on it)."""
        from jax2onnx.plugins import plugin_system

        with jax_cache_scope(plugin_cache_dir()):
            plugin_system.import_all_plugins()

    def device_facts(self) -> dict[str, Any]:
        folder = plugin_cache_dir()
        return {
            **self.facts("jax2onnx.to_onnx", "jax2onnx"),
            "plugin_cache": str(folder) if folder else "off",
        }


PATH = DevicePath(
    name="onnxruntime",
    summary="exported to ONNX (torch.onnx dynamo exporter, tf2onnx, jax2onnx) and run by ONNX Runtime "
    "on the host CPU; compiled mode only",
    backends={"torch": TorchOnnxRuntime, "tensorflow": TensorFlowOnnxRuntime, "jax": JaxOnnxRuntime},
    needs=f"the onnx extra: {INSTALL}",
    what_to_do=f"run it in compiled mode (--mode compiled) with its packages installed: {INSTALL}",
    runtime="onnxruntime",
)
