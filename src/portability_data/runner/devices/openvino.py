"""The OpenVINO path (issue 51): the function under test converted by OpenVINO and run by its CPU
plugin on the host. Compiled mode only (eager mode would run nothing through OpenVINO: refused, and
the dry run says so).

torch: `torch.compile` with OpenVINO's torch.compile backend (openvino.frontend.pytorch.torchdynamo):
dynamo's graph is decomposed and traced (make_fx), OpenVINO's partitioner fuses the nodes it supports
into partitions, each partition is converted and compiled for the CPU on its first call. That
backend falls back to PyTorch without a word in three places: nodes it does not support stay in the
PyTorch graph, a partition that fails to convert or run switches to PyTorch for good, and a graph
that fails altogether goes to inductor. The backend here runs OpenVINO's own pieces (the same
decompositions, Partitioner and `execute`) and makes each visible instead: ops left to PyTorch (or in a
partition that fell back) are counted by name per call (`DeviceEvents.fallback_ops`, so a passing
subtest is `host_fallback` with the ops named, never `passed`), and a graph OpenVINO cannot take is
`ExportError`, never a silent inductor run. Single-node partitions are allowed (OpenVINO's `testing`
option): most functions under test are one op, which OpenVINO's default would leave to PyTorch.
Graph breaks are dynamo's, counted as for inductor (runner/backends.py `_TorchCompiled`).

TensorFlow: `openvino.convert_model` of the tf.function's concrete function for the input signature,
`Core().compile_model(model, "CPU")`, one inference per call; outputs back as tf tensors.

Stages (results.error_type): `ExportError` (conversion: an op without a conversion rule, named),
`RuntimeLoadError` (compile_model), `RuntimeRunError` (inference). The package is the `openvino`
extra (pip install -e ".[openvino]"); its version goes in the runs row.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from portability_data.runner.backends import (
    CompiledCall,
    DeviceEvents,
    TensorFlowBackend,
    TorchBackend,
    _TorchCompiled,
    cpu_model,
)
from portability_data.runner.devices import DevicePath
from portability_data.runner.devices.compiled_only import refuse_eager, require
from portability_data.runner.devices.nothing_to_export import ON_HOST, on_host_or_raise
from portability_data.runner.devices.tf_graph_mode import (
    GraphBody,
    GraphRouteError,
    deferred,
    eagerly,
    graph_key,
    in_graph,
    model_result,
    trace_in_graph,
)
from portability_data.runner.devices.trace_errors import trace_error_cause

INSTALL = 'pip install -e ".[openvino]" (openvino, pinned in pyproject.toml)'
OV_DEVICE = "CPU"
COMPILED_ONLY = (
    "the openvino path converts the function and runs it in OpenVINO: it has compiled mode only "
    "(eager mode would run nothing through OpenVINO); use --mode compiled"
)
OPTIONS = {"device": OV_DEVICE, "testing": True}  # testing: single-node partitions go to OpenVINO too


class ExportStageError(RuntimeError):
    """A stage of the path failed; the message names the stage's tool and its own error."""

    stage = ""

    def __init__(self, tool: str, error: BaseException | str) -> None:
        text = error
        if isinstance(error, BaseException):  # a trace error's cause names its exception already
            said, name = _summary(str(error)), type(error).__name__
            text = said if said.startswith(f"{name}:") else f"{name}: {said}"
        super().__init__(f"{self.stage} ({tool}): {text}")


def _summary(text: str) -> str:
    """OpenVINO's conversion report without its boilerplate: the summary lines (`-- No conversion
    rule found for operations: BesselI0`) where it has them; for tf.function's trace error ("in
    user code:", the user's frames, then the cause) the cause (since 2026-12-07; it kept the frames
    before); else the whole message."""
    lines = [line.removeprefix("-- ").strip() for line in text.splitlines() if line.startswith("-- ")]
    if lines:
        return "; ".join(lines)
    cause = trace_error_cause(text)
    return text if cause is None else cause


class ExportError(ExportStageError):
    """OpenVINO could not convert the function (its graph) into an OpenVINO model."""

    stage = "openvino conversion failed"


class RuntimeLoadError(ExportStageError):
    """OpenVINO converted the model, and compiling it for the CPU plugin failed."""

    stage = "openvino could not compile the converted model"


class RuntimeRunError(ExportStageError):
    """OpenVINO compiled the model, and running it raised."""

    stage = "openvino failed running the converted model"


class _OpenVinoBackendMixin:
    counts_device_events = True
    modes = ("compiled",)  # `portability devices` shows it; the backend refuses eager (refuse_eager)
    compiles = 0
    framework_module = ""
    # the CPU plugin's compile properties; empty: its defaults, as a user meets them (openvino_f32.py
    # pins the inference precision)
    config: ClassVar[dict[str, str]] = {}

    def left_to_framework(self) -> Counter[str]:
        return Counter()

    @contextlib.contextmanager
    def observe(self, events: DeviceEvents, timed: bool) -> Iterator[None]:
        left, compiles = Counter(self.left_to_framework()), self.compiles
        try:
            yield
        finally:
            events.fallback_ops.update(self.left_to_framework() - left)
            compiled = self.compiles - compiles
            events.compiles += compiled
            events.compiles_timed += compiled if timed else 0

    def describe(self) -> str:
        return f"{cpu_model()} (openvino {OV_DEVICE} plugin)"

    def driver(self) -> str | None:
        import openvino

        return f"openvino {openvino.__version__} ({OV_DEVICE})"

    def device_facts(self) -> dict[str, Any]:
        import openvino

        core = openvino.Core()
        return {
            "runtime": "openvino",
            "openvino": openvino.__version__,
            "openvino_device": OV_DEVICE,
            "available_devices": list(core.available_devices),
            "converter": self.compiler,
            # the precision float32 models ran in: the plugin's default is bf16 on a CPU with
            # avx512_bf16 or AMX (OpenVINO's CPU plugin docs), which puts matmul-family values off a
            # float32 oracle; a path that pins it (openvino_f32) says so here
            "inference_precision": self.config.get("INFERENCE_PRECISION_HINT")
            or core.get_property(OV_DEVICE, "INFERENCE_PRECISION_HINT").get_type_name(),
            "openvino_config": dict(self.config),
        }


# ------------------------------------------------------------------------------------------ torch


def _op_name(node: Any) -> str | None:
    """aten::sin for a node calling an op overload; None for Python's own (operator.getitem)."""
    schema = getattr(node.target, "_schema", None)
    return schema.name if schema is not None else None


class TorchOpenVino(_OpenVinoBackendMixin, TorchBackend):
    device_type = "cpu"
    compiler = "openvino"  # torch.compile with OpenVINO's backend pipeline (observed: see above)
    framework_module = "torch"

    def find_device(self) -> None:
        refuse_eager(self.device, COMPILED_ONLY)
        require(self.device, INSTALL, "openvino")
        self.fallbacks: Counter[str] = Counter()
        self.backend_fn = self._backend()

    def left_to_framework(self) -> Counter[str]:
        return self.fallbacks

    def _backend(self) -> Callable[..., Any]:
        """OpenVINO's torch.compile backend (backend.fx_openvino without model caching or AOT
        autograd), with what it leaves to PyTorch counted and no silent fallback to inductor."""
        from openvino.frontend.pytorch.torchdynamo.backend_utils import _get_decompositions
        from openvino.frontend.pytorch.torchdynamo.decompositions import get_inf_decomposition_list
        from openvino.frontend.pytorch.torchdynamo.execute import OpenVINOGraphModule, execute
        from openvino.frontend.pytorch.torchdynamo.partition import Partitioner
        from torch._decomp import get_decompositions
        from torch._dynamo.backends.common import fake_tensor_unsupported
        from torch.fx.experimental.proxy_tensor import make_fx

        torch, backend = self.torch, self
        options = {**OPTIONS, "config": dict(self.config)} if self.config else OPTIONS

        @fake_tensor_unsupported
        def openvino_observed(subgraph: Any, example_inputs: list) -> Callable[..., Any]:
            backend.compiles += 1
            try:
                table = get_decompositions(_get_decompositions(options) + get_inf_decomposition_list())
                traced = make_fx(
                    subgraph, decomposition_table=table, tracing_mode="fake", _allow_non_fake_inputs=True
                )(*example_inputs)
                with torch.no_grad():
                    traced.eval()
                partitioned = Partitioner(options).make_partitions(traced, options)
            except Exception as error:
                raise ExportError("openvino torch.compile backend", error) from error
            outside = [
                name
                for node in partitioned.graph.nodes
                if node.op == "call_function" and (name := _op_name(node)) is not None
            ]

            def call(*args: Any) -> Any:
                backend.fallbacks.update(outside)
                result = execute(partitioned, *args, executor="openvino", options=options)
                for module in partitioned.modules():
                    if isinstance(module, OpenVINOGraphModule) and module.perm_fallback:
                        inner = module.gm
                        while isinstance(inner, OpenVINOGraphModule):  # a partition wrapping another
                            inner = inner.gm
                        backend.fallbacks.update(
                            name
                            for node in inner.graph.nodes
                            if node.op == "call_function" and (name := _op_name(node)) is not None
                        )
                return result

            return call

        return openvino_observed

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _TorchOpenVinoCompiled(self.torch, fn, self.backend_fn)


class _TorchOpenVinoCompiled(_TorchCompiled):
    """torch.compile on the OpenVINO backend; a stage error of the backend comes out as itself
    (ExportError), not as dynamo's BackendCompilerFailed around it."""

    def __call__(self, *args: Any) -> Any:
        try:
            return super().__call__(*args)
        except Exception as error:
            inner = getattr(error, "inner_exception", None)
            if isinstance(inner, ExportStageError):
                raise inner from error
            raise


# ------------------------------------------------------------------------------------- TensorFlow


class _TensorFlowOpenVinoCall(CompiledCall):
    tool = "openvino.convert_model"

    def __init__(self, backend: TensorFlowOpenVino, fn: Callable[..., Any]) -> None:
        super().__init__(fn)
        self.backend, self.fn = backend, fn
        self.built: dict[Any, Any] = {}

    def __call__(self, *arrays: Any) -> Any:
        tf = self.backend.tf
        leaves = tf.nest.flatten(arrays)
        key = (
            str(tf.nest.map_structure(lambda _: 0, arrays)),
            tuple((str(a.shape), a.dtype.name) for a in leaves),  # str: a graph tensor's rank may be unknown
            graph_key(tf),  # a TF1 graph's conversion feeds that graph's tensors
        )
        if key not in self.built:
            self.backend.compiles += 1
            try:
                self.built[key] = self.build_in_graph(arrays) if in_graph(tf) else self.build(arrays)
            except (ExportError, GraphRouteError) as error:  # nothing to convert, the function's own
                result = on_host_or_raise(self, self.backend, self.fn, arrays, error)  # refusal, or error
                self.built[key] = ON_HOST, None, None, []
                return result
        compiled, structure, body, names = self.built[key]
        if compiled is ON_HOST:
            return self.fn(*arrays)
        if body is not None:
            return deferred(
                tf, self.tool, body, arrays, lambda feeds: self.infer(compiled, feeds, names, body)
            )
        outputs = self.infer(compiled, [a.numpy() for a in leaves], names)
        with tf.device(self.backend.handle()):
            return model_result(tf, self.tool, structure, arrays, outputs)

    def infer(
        self, compiled: Any, feeds: list[Any], names: list[str], body: GraphBody | None = None
    ) -> list[Any]:
        """The compiled model's outputs for flat NumPy inputs (RuntimeRunError if it raises), by the
        traced function's output names: OpenVINO's TensorFlow frontend can give the model more
        outputs than the function has (found 2026-12-07: tnp.linspace's model has 4 for its 1, 14
        census pairs); where the frontend folds an output into the input it passes on (a variable's
        value read and returned), the output has the input's name, and a model with as many outputs
        as the function is read in order. A GraphDef's model takes its inputs by name too."""
        try:
            if body is None:
                result = compiled(feeds)
            else:
                taken = {name for port in compiled.inputs for name in port.get_names()}
                result = compiled({n: v for n, v in zip(body.input_names, feeds) if n in taken})
            ports = {name: port for port in compiled.outputs for name in port.get_names()}
            if all(name in ports for name in names):
                return [result[ports[name]] for name in names]
            if len(compiled.outputs) == len(names):  # an output folded into an input keeps its name
                return [result[port] for port in compiled.outputs]
            raise ValueError(f"the model has no output named {[n for n in names if n not in ports]}")
        except Exception as error:
            raise RuntimeRunError(self.tool, error) from error

    def build(self, arrays: tuple) -> Any:
        tf = self.backend.tf
        specs = tf.nest.map_structure(lambda a: tf.TensorSpec(a.shape, a.dtype), list(arrays))
        try:
            concrete = tf.function(self.fn).get_concrete_function(*specs)
        except Exception as error:
            raise ExportError(self.tool, error) from error
        names = [tensor.name for tensor in concrete.outputs]
        return self.convert(concrete, names), concrete.structured_outputs, None, names

    def build_in_graph(self, arrays: tuple) -> Any:
        """A call inside a TF1 graph: the function traced there, its body (a GraphDef, captures as
        inputs) converted in an eager thread, run when the session runs the graph (tf_graph_mode)."""
        tf = self.backend.tf
        body = trace_in_graph(tf, self.fn, arrays, lambda error: ExportError(self.tool, error))
        names = body.output_names
        return eagerly(lambda: self.convert(body.graph_def, names)), body.structure, body, names

    def convert(self, function: Any, names: list[str]) -> Any:
        """The concrete function (or a TF1 graph's GraphDef) converted by OpenVINO and compiled for
        its CPU plugin. A model that lost outputs is the conversion's failure: OpenVINO's TensorFlow
        frontend drops a result that is a constant (tf.compat.v1.distributions.Normal.param_shapes
        of a Python list gives a model of no output for its two; found 2026-12-07, 13 subtests that
        the harness had read as its own, rule harness_openvino_merged_outputs)."""
        import openvino

        try:
            model = openvino.convert_model(function)
        except Exception as error:
            raise ExportError(self.tool, error) from error
        given = {name for port in model.outputs for name in port.get_names()}
        missing = [name for name in names if name not in given]
        if missing and len(model.outputs) != len(names):  # an output folded into an input: `infer`
            said = f"the model has {len(model.outputs)} output(s) for the function's {len(names)}"
            raise ExportError(self.tool, f"{said}; lost: {', '.join(missing)}")
        try:
            return openvino.Core().compile_model(model, OV_DEVICE, self.backend.config)
        except Exception as error:
            raise RuntimeLoadError(self.tool, error) from error


class TensorFlowOpenVino(_OpenVinoBackendMixin, TensorFlowBackend):
    device_type = "CPU"
    compiler = "openvino.convert_model"
    framework_module = "tensorflow"

    def connect(self) -> None:
        refuse_eager(self.device, COMPILED_ONLY)
        require(self.device, INSTALL, "openvino")

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return _TensorFlowOpenVinoCall(self, fn)


PATH = DevicePath(
    name="openvino",
    summary="converted by OpenVINO (torch.compile's openvino backend, convert_model for TensorFlow) and "
    "run by its CPU plugin; compiled mode only",
    backends={"torch": TorchOpenVino, "tensorflow": TensorFlowOpenVino},
    needs=f"the openvino extra: {INSTALL}",
    not_served={"jax": "OpenVINO converts JAX through jax2onnx or a saved model only: not built (issue 51)"},
    what_to_do=f"run it in compiled mode (--mode compiled) with openvino installed: {INSTALL}",
    runtime="openvino",
)
