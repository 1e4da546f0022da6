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
from portability_data.runner.devices.jax_arrays import KeyedFunction
from portability_data.runner.devices.nothing_to_export import ON_HOST, on_host_or_raise
from portability_data.runner.devices.onnx_models import (
    PROVIDER,
    ExportError,
    ExportStageError,
    RuntimeLoadError,
    RuntimeRunError,
    open_session,
    ort_run,
    refuse_retyped_inputs,
    unknown_ops,
)
from portability_data.runner.devices.tf_graph_mode import (
    GraphRouteError,
    deferred,
    eagerly,
    graph_key,
    in_graph,
    model_result,
    trace_in_graph,
)

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


def _needs_64_bits(arrays: list[Any]) -> bool:
    """jax2onnx's `enable_double_precision` for a function of these inputs and outputs: True where
    one is 64-bit (float64, complex128, int64, uint64). jax2onnx traces with JAX's x64 mode set to
    the flag and, when it is on, writes every float32 as double (its float policy, jax2onnx
    ir_utils.numpy_dtype_to_ir_with_float_policy); when it is off, a 64-bit input is traced as
    32-bit. So the flag follows the function's own types, not the process's x64 mode: a float32
    function exports as float32 even where a case turned x64 on (before 2026-12-07 it was the x64
    mode, and every float32 input of such a case was written as double and refused its array). A
    function mixing float32 with 64-bit types still gets its float32 inputs written as double:
    `retyped_inputs` names them."""
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
            except (ExportError, GraphRouteError) as error:  # nothing to export: host, or the error
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
            program.initialize_inference_session(lambda model: open_session(self.tool, model))
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
        return (
            str(tf.nest.map_structure(lambda _: 0, arrays)),
            tuple((str(a.shape), a.dtype.name) for a in leaves),  # str: a graph tensor's rank may be unknown
            graph_key(tf),  # a TF1 graph's conversion feeds that graph's tensors
        )

    def build(self, arrays: tuple) -> Any:
        tf = self.backend.tf
        import tf2onnx

        if in_graph(tf):
            return self.build_in_graph(arrays)
        specs = tf.nest.map_structure(lambda a: tf.TensorSpec(a.shape, a.dtype), list(arrays))
        function = tf.function(self.fn)
        try:
            concrete = function.get_concrete_function(*specs)
            model, _ = tf2onnx.convert.from_function(
                function, input_signature=specs, opset=OPSETS["tensorflow"]
            )
        except Exception as error:
            raise ExportError(self.tool, error) from error
        unknown = unknown_ops(model)
        if unknown:
            raise ExportError(
                self.tool, f"no ONNX conversion for TensorFlow op(s) {', '.join(unknown)}", "unsupported op"
            )
        captured = _captured_feeds(concrete, model, len(tf.nest.flatten(specs)))
        given = [spec.dtype.as_numpy_dtype for spec in tf.nest.flatten(specs)] + [c.dtype for c in captured]
        refuse_retyped_inputs(self.tool, model, given)  # the arguments', and the captured tensors'
        return open_session(self.tool, model.SerializeToString()), concrete.structured_outputs, captured, None

    def build_in_graph(self, arrays: tuple) -> Any:
        """A call inside a TF1 graph: the function traced there, its body (captures as inputs)
        converted by tf2onnx's from_graph_def in an eager thread, run when the session runs the
        graph (tf_graph_mode)."""
        tf = self.backend.tf
        import tf2onnx

        body = trace_in_graph(tf, self.fn, arrays, lambda error: ExportError(self.tool, error))

        def convert() -> Any:
            try:
                if body.input_names:
                    model, _ = tf2onnx.convert.from_graph_def(
                        body.graph_def,
                        input_names=body.input_names,
                        output_names=body.output_names,
                        opset=OPSETS["tensorflow"],
                    )
                else:  # from_graph_def needs an input name: a body of no input goes as a function
                    constant = tf.function(body.concrete(tf))
                    model, _ = tf2onnx.convert.from_function(
                        constant, input_signature=[], opset=OPSETS["tensorflow"]
                    )
            except Exception as error:
                raise ExportError(self.tool, error) from error
            unknown = unknown_ops(model)
            if unknown:
                said = f"no ONNX conversion for TensorFlow op(s) {', '.join(unknown)}"
                raise ExportError(self.tool, said, "unsupported op")
            refuse_retyped_inputs(self.tool, model, [dtype.as_numpy_dtype for dtype in body.input_dtypes])
            return open_session(self.tool, model.SerializeToString())

        return eagerly(convert), body.structure, [], body

    def run(self, built: Any, arrays: tuple) -> Any:
        import numpy as np

        tf = self.backend.tf
        session, structure, captured, body = built
        if body is not None:
            return deferred(tf, self.tool, body, arrays, lambda feeds: self.run_session(session, feeds))
        # a 0-d tensor's .numpy() is a NumPy scalar, which ONNX Runtime refuses as a feed: arrays only
        feeds = [np.asarray(a.numpy() if hasattr(a, "numpy") else a) for a in tf.nest.flatten(arrays)]
        outputs = ort_run(session, feeds + captured)
        with tf.device(self.backend.handle()):
            return model_result(tf, self.tool, structure, arrays, outputs)

    def run_session(self, session: Any, feeds: list[Any]) -> list[Any]:
        """The session on a TF1 graph's values, when the graph runs (its error names the stage)."""
        try:
            return ort_run(session, feeds)
        except Exception as error:
            raise RuntimeRunError(self.tool, error) from error


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
        flat = KeyedFunction(jax, self.fn, leaves, tree)  # one array per input, a key as its data
        specs = flat.specs(leaves)  # the function's own input types, as jax.jit makes them
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
        refuse_retyped_inputs(self.tool, model, [spec.dtype for spec in specs])
        session = open_session(self.tool, model.SerializeToString())
        return session, jax.tree_util.tree_structure(shapes), flat

    def run(self, built: Any, arrays: tuple) -> Any:
        jax = self.backend.jax
        session, tree, flat = built
        outputs = ort_run(session, flat.feeds(jax.tree_util.tree_leaves(arrays)))
        results = flat.results([jax.device_put(o, self.backend.handle()) for o in outputs])
        return jax.tree_util.tree_unflatten(tree, results)


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
