"""The LiteRT path (issue 52): the function under test converted to a TFLite flatbuffer and run by
LiteRT (the TFLite runtime, `ai_edge_litert.interpreter.Interpreter`, its builtin op resolver and
default XNNPACK delegate) on the host CPU: the runtime of phones and microcontrollers. Builtin ops
only: what a runtime without TensorFlow's kernels can run (the `litert_flex` path is the same
conversion with Select TF ops allowed). Float paths only: nothing is quantized.

TensorFlow: `tf.lite.TFLiteConverter.from_concrete_functions` on the tf.function's concrete function
for the input signature, `supported_ops = [TFLITE_BUILTINS]`. PyTorch: `litert_torch.convert` (the
`litert-torch` package: torch.export, then its lowerings to TFLite). Compiled mode only: `compile(fn)`
returns a call that converts fn per input signature (shapes, dtypes, nesting; the harness binds every
other argument as a constant), loads the model in the interpreter, runs it and returns the framework's
own arrays, so the census compares each result with the framework's eager CPU result on the same
sample (the differential oracle). Eager mode runs nothing through LiteRT: refused.

A failure names its stage (results.error_type): `ExportError` (tracing: torch.export or the
tf.function), `ConvertError` (the converter: an op with no builtin, `TF Select ops: ...` where it
needs Flex, `Custom ops: ...`, a torch op without a lowering), `RuntimeLoadError` (the interpreter
could not load or allocate the model), `RuntimeRunError` (invoke raised); a wrong value fails as the
case's own assertion (stage: value). `device_compiles` counts conversions.

Packages: the `litert` extra (ai-edge-litert; TensorFlow's converter is the pinned TensorFlow's own);
PyTorch needs the `litert-torch` environment of its own (its pins move packages of the pinned stack:
docs/DEVICE_PATHS.md). Versions of runtime and converter go in the runs row (driver, build).
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from portability_data.runner.backends import (
    CompiledCall,
    DeviceEvents,
    TensorFlowBackend,
    TorchBackend,
    cpu_model,
)
from portability_data.runner.devices import DevicePath
from portability_data.runner.devices.compiled_only import refuse_eager, require
from portability_data.runner.devices.nothing_to_export import ON_HOST, on_host_or_raise
from portability_data.runner.devices.tf_graph_mode import (
    GraphRouteError,
    deferred,
    eagerly,
    graph_key,
    in_graph,
    model_result,
    trace_in_graph,
)
from portability_data.runner.devices.torch_arrays import DenseOnlyError, numpy_of, tensor_of
from portability_data.runner.devices.trace_errors import trace_error_cause

INSTALL = 'pip install -e ".[litert]" (ai-edge-litert, pinned in pyproject.toml)'
INSTALL_TORCH = (
    "its own environment (litert-torch's pins move packages of the pinned stack): python3 -m venv "
    '.venv-litert && .venv-litert/bin/pip install -e ".[litert-torch]", then .venv-litert/bin/portability'
)
COMPILED_ONLY = (
    "the {device} path converts the function to a TFLite model and runs it in LiteRT: it has compiled "
    "mode only (eager mode would run nothing through LiteRT); use --mode compiled"
)


class StageError(RuntimeError):
    """A stage of the path failed; the message names the stage, its tool and the tool's own error."""

    stage = ""

    def __init__(self, tool: str, error: BaseException | str) -> None:
        if isinstance(error, BaseException):
            name, text = type(error).__name__, summary(str(error))
            text = text if text.startswith(f"{name}: ") else f"{name}: {text}"
        else:
            text = error
        super().__init__(f"{self.stage} ({tool}): {text}")


class ExportError(StageError):
    """The function could not be traced into a graph (torch.export, tf.function)."""

    stage = "export failed"


class ConvertError(StageError):
    """The converter could not turn the graph into a TFLite model of the allowed op sets."""

    stage = "conversion to TFLite failed"


class RuntimeLoadError(StageError):
    """LiteRT could not load (allocate) the converted model."""

    stage = "litert could not load the converted model"


class RuntimeRunError(StageError):
    """LiteRT loaded the model, and running it raised."""

    stage = "litert failed running the converted model"


# The lines of the TFLite converter's (MLIR) report that say why, e.g. `TF Select ops: Cumprod`.
_REASON = re.compile(
    r"^\s*(TF Select ops: .*|Custom ops: .*|Flex ops: .*|Error code: .*|"
    r"Some ops are not supported by the native TFLite runtime.*|Lowering not found: .*)$"
)


def summary(text: str) -> str:
    """A converter's report without its boilerplate (MLIR locations, tracebacks): the lines that
    give the reason where it has them (`Error code: ERROR_NEEDS_FLEX_OPS; TF Select ops: Cumprod`);
    for tf.function's trace error ("in user code:", the user's frames, then the cause) the cause;
    else its first line."""
    found: list[str] = []
    for line in text.splitlines():
        match = _REASON.match(line)
        if match:
            reason = re.sub(r"^.*note: ", "", match.group(1)).split(" See instructions")[0].strip()
            if reason not in found:
                found.append(reason)
    if found:
        return "; ".join(found)
    cause = trace_error_cause(text)  # tf.function's trace error: the frames, then the cause
    if cause is not None:
        return cause
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else text
    return re.sub(r"\S+\.py:\d+:\d+: (error|note): ", "", first)  # MLIR's location of the traced line


def versions(*distributions: str) -> dict[str, str]:
    from importlib import metadata

    found = {}
    for name in distributions:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "missing"
    return found


def model_ops(model: bytes) -> Counter[str]:
    """The ops of a TFLite model by name (FlexCumprod for a Select TF op), read without preparing
    it (no kernel is needed to list them)."""
    from ai_edge_litert.interpreter import Interpreter

    return Counter(op["op_name"] for op in Interpreter(model_content=model)._get_ops_details())


class Loaded:
    """A TFLite model loaded in LiteRT's interpreter, tensors allocated, run with flat inputs."""

    def __init__(self, tool: str, model: bytes) -> None:
        from ai_edge_litert.interpreter import Interpreter

        self.tool = tool
        try:
            self.interpreter = Interpreter(model_content=model)
            self.interpreter.allocate_tensors()
        except Exception as error:
            raise RuntimeLoadError(tool, error) from error
        self.inputs = self.interpreter.get_input_details()
        self.outputs = self.interpreter.get_output_details()

    def run(self, feeds: list[Any], output_names: list[str] | None = None) -> list[Any]:
        """The model's outputs for the flat inputs (numpy), in the order of `output_names` where the
        caller knows the graph's output names (TFLite's order of outputs is its own)."""
        import numpy as np

        interpreter = self.interpreter
        try:
            if len(feeds) != len(self.inputs):
                raise ValueError(f"the model takes {len(self.inputs)} inputs, {len(feeds)} given")
            for detail, value in zip(self.inputs, feeds):
                value = np.asarray(value)
                if tuple(detail["shape"]) != value.shape:  # a 0-d input is [] in TFLite too
                    interpreter.resize_tensor_input(detail["index"], value.shape)
                    interpreter.allocate_tensors()
                if value.size:  # a zero-size input has no data to set (set_tensor refuses it)
                    interpreter.set_tensor(detail["index"], value.astype(detail["dtype"], copy=False))
            interpreter.invoke()
            by_name = {d["name"]: d for d in interpreter.get_output_details()}  # shapes after invoke
            order = (
                [by_name[n] for n in output_names]
                if output_names and all(n in by_name for n in output_names)
                else interpreter.get_output_details()
            )
            return [
                interpreter.get_tensor(d["index"]).copy()
                if np.prod(d["shape"])
                else np.zeros(d["shape"], d["dtype"])  # get_tensor refuses a zero-size tensor too
                for d in order
            ]
        except Exception as error:
            raise RuntimeRunError(self.tool, error) from error


class ConvertedCall(CompiledCall):
    """The path's compiled call: one converted, loaded model per input signature. The whole
    function is one TFLite model or the call raises, so its execution is `compiled`."""

    tool = ""

    def __init__(self, backend: Any, fn: Callable[..., Any]) -> None:
        super().__init__(fn)
        self.backend, self.fn = backend, fn
        self.built: dict[Any, Any] = {}

    def __call__(self, *arrays: Any) -> Any:
        key = self.signature(arrays)
        if key not in self.built:
            self.backend.conversions += 1
            try:
                self.built[key] = self.build(arrays)
            except (ExportError, ConvertError, GraphRouteError) as error:  # nothing to convert, or error
                result = on_host_or_raise(self, self.backend, self.fn, arrays, error)
                self.built[key] = ON_HOST
                return result
        built = self.built[key]
        if built is ON_HOST:
            return self.fn(*arrays)
        self.backend.outside.update(built.get("outside", ()))
        return self.run(built, arrays)

    def signature(self, arrays: tuple) -> Any:
        raise NotImplementedError

    def build(self, arrays: tuple) -> dict[str, Any]:
        raise NotImplementedError

    def run(self, built: dict[str, Any], arrays: tuple) -> Any:
        raise NotImplementedError


class LiteRtBackendMixin:
    """What the path's backends share: conversions (device_compiles), the ops that ran outside
    LiteRT's builtin kernels (host_fallback_ops; only the Flex path has any), the runtime's facts."""

    counts_device_events = True
    modes = ("compiled",)  # `portability devices` shows it; the backend refuses eager
    conversions = 0
    converter = ""

    def reset_counts(self) -> None:
        self.outside: Counter[str] = Counter()

    @contextlib.contextmanager
    def observe(self, events: DeviceEvents, timed: bool) -> Iterator[None]:
        outside, conversions = Counter(self.outside), self.conversions
        try:
            yield
        finally:
            events.fallback_ops.update(self.outside - outside)
            converted = self.conversions - conversions
            events.compiles += converted
            events.compiles_timed += converted if timed else 0

    def describe(self) -> str:
        return f"{cpu_model()} (litert CPU, builtin ops + XNNPACK delegate)"

    def driver(self) -> str | None:
        return f"litert {versions('ai-edge-litert')['ai-edge-litert']} (ai_edge_litert.interpreter, CPU)"

    def device_facts(self) -> dict[str, Any]:
        return {
            "runtime": "litert",
            "interpreter": "ai_edge_litert.interpreter.Interpreter (builtin op resolver, XNNPACK)",
            "converter": self.converter,
            "quantization": "none (float model)",
            **self.converter_versions(),
            **versions("ai-edge-litert"),
        }

    def converter_versions(self) -> dict[str, str]:
        return {}


# ------------------------------------------------------------------------------------- TensorFlow


class TensorFlowLiteCall(ConvertedCall):
    tool = "tf.lite.TFLiteConverter"
    select_tf_ops = False  # the Flex path's converter allows Select TF ops

    def signature(self, arrays: tuple) -> Any:
        tf = self.backend.tf
        leaves = tf.nest.flatten(arrays)
        return (
            str(tf.nest.map_structure(lambda _: 0, arrays)),
            tuple((str(a.shape), a.dtype.name) for a in leaves),  # str: a graph tensor's rank may be unknown
            graph_key(tf),  # a TF1 graph's conversion feeds that graph's tensors
        )

    def build(self, arrays: tuple) -> dict[str, Any]:
        tf = self.backend.tf
        if in_graph(tf):
            return self.build_in_graph(arrays)
        specs = tf.nest.map_structure(lambda a: tf.TensorSpec(a.shape, a.dtype), list(arrays))
        function = tf.function(self.fn)
        try:
            concrete = function.get_concrete_function(*specs)
        except Exception as error:
            raise ExportError("tf.function", error) from error
        return self.convert(concrete, function)

    def build_in_graph(self, arrays: tuple) -> dict[str, Any]:
        """A call inside a TF1 graph: the function traced there, its body converted eagerly, run
        when the session runs the graph (tf_graph_mode)."""
        tf = self.backend.tf
        body = trace_in_graph(tf, self.fn, arrays, lambda error: ExportError("tf.function", error))
        built = eagerly(lambda: self.convert(body.concrete(tf)))
        return {**built, "body": body, "names": [n.split(":")[0] for n in body.output_names]}

    def convert(self, concrete: Any, trackable: Any = None) -> dict[str, Any]:
        tf = self.backend.tf
        try:
            converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete], trackable)
            converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS] + (
                [tf.lite.OpsSet.SELECT_TF_OPS] if self.select_tf_ops else []
            )
            model = converter.convert()
        except Exception as error:
            raise ConvertError(self.tool, error) from error
        flex = Counter({n: c for n, c in model_ops(model).items() if n.startswith("Flex")})
        loaded = self.load(model, flex)
        names = [t.name.split(":")[0] for t in concrete.outputs]
        return {"loaded": loaded, "structure": concrete.structured_outputs, "names": names, "outside": flex}

    def load(self, model: bytes, flex: Counter[str]) -> Loaded:
        return Loaded(self.tool, model)

    def run(self, built: dict[str, Any], arrays: tuple) -> Any:
        tf = self.backend.tf
        if "body" in built:
            loaded, names = built["loaded"], built["names"]
            return deferred(tf, self.tool, built["body"], arrays, lambda feeds: loaded.run(feeds, names))
        feeds = [a.numpy() for a in tf.nest.flatten(arrays)]
        outputs = built["loaded"].run(feeds, built["names"])
        with tf.device(self.backend.handle()):
            return model_result(tf, self.tool, built["structure"], arrays, outputs)


class TensorFlowLiteRt(LiteRtBackendMixin, TensorFlowBackend):
    device_type = "CPU"
    compiler = "tflite_converter"  # tf.lite.TFLiteConverter, builtin ops only
    converter = "tf.lite.TFLiteConverter.from_concrete_functions (TFLITE_BUILTINS)"
    call = TensorFlowLiteCall

    def connect(self) -> None:
        refuse_eager(self.device, COMPILED_ONLY.format(device=self.device))
        require(self.device, INSTALL, "ai_edge_litert")
        self.reset_counts()

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return self.call(self, fn)

    def converter_versions(self) -> dict[str, str]:
        return {"tensorflow": self.tf.__version__}


# ------------------------------------------------------------------------------------------ torch


class _TorchModule:
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


class TorchLiteCall(ConvertedCall):
    tool = "litert_torch.convert"

    def signature(self, arrays: tuple) -> Any:
        from torch.utils import _pytree as pytree

        leaves, spec = pytree.tree_flatten(arrays)
        return str(spec), tuple((tuple(a.shape), str(a.dtype)) for a in leaves)

    def build(self, arrays: tuple) -> dict[str, Any]:
        torch = self.backend.torch
        import litert_torch

        module = _TorchModule.wrap(torch, self.fn)
        try:
            with contextlib.redirect_stdout(None), contextlib.redirect_stderr(None):  # its progress lines
                model = litert_torch.convert(module, tuple(arrays)).model_content()
        except Exception as error:
            raise ConvertError(self.tool, error) from error
        return {"loaded": Loaded(self.tool, model), "out_spec": module.out_spec}

    def run(self, built: dict[str, Any], arrays: tuple) -> Any:
        from torch.utils import _pytree as pytree

        try:
            feeds = [numpy_of(a) for a in pytree.tree_leaves(arrays)]
        except DenseOnlyError as error:
            raise RuntimeRunError(self.tool, error) from error
        # tensor_of: a 0-d output comes back from the interpreter as a NumPy scalar
        outputs = [tensor_of(o) for o in built["loaded"].run(feeds)]
        return pytree.tree_unflatten(outputs, built["out_spec"])


class TorchLiteRt(LiteRtBackendMixin, TorchBackend):
    device_type = "cpu"
    compiler = "litert_torch"  # litert_torch.convert: torch.export, then its TFLite lowerings
    converter = "litert_torch.convert"

    def find_device(self) -> None:
        refuse_eager(self.device, COMPILED_ONLY.format(device=self.device))
        require(
            self.device, f"PyTorch on {self.device} needs {INSTALL_TORCH}", "ai_edge_litert", "litert_torch"
        )
        self.reset_counts()

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return TorchLiteCall(self, fn)

    def converter_versions(self) -> dict[str, str]:
        return versions("litert-torch", "litert-converter")


PATH = DevicePath(
    name="litert",
    summary="converted to a TFLite model (tf.lite.TFLiteConverter, builtin ops only; litert-torch) and run "
    "by LiteRT (ai-edge-litert) on the host CPU; float only, compiled mode only",
    backends={"tensorflow": TensorFlowLiteRt, "torch": TorchLiteRt},
    needs=f"the litert extra: {INSTALL}; PyTorch: {INSTALL_TORCH}",
    not_served={
        "jax": "LiteRT converts JAX through jax2tf or litert-torch's JAX bridge only: not built (issue 52)"
    },
    what_to_do=f"run it in compiled mode (--mode compiled) with its packages installed: {INSTALL}; "
    f"PyTorch: {INSTALL_TORCH}",
    runtime="litert",
)
