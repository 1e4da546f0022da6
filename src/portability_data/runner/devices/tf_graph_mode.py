"""A TensorFlow function called inside a TF1 graph (tf.compat.v1 code: a graph made the default,
its result run later by a Session), for the paths that convert a TensorFlow function (litert,
litert_flex, onnxruntime, openvino, openvino_f32). Not a path (no PATH): a path module that imports
it has these bytes in its harness digest.

TF2's converters (TFLiteConverter.from_concrete_functions, tf2onnx.convert.from_function,
openvino.convert_model) take an eager function: called in a graph they read values only a session
has ("numpy() is only available when eager execution is enabled"), and the harness could not feed a
symbolic tensor to a runtime (found 2026-12-07: 250 subtests of 10 TensorFlow cases on litert,
litert_flex and onnxruntime were labelled the path's failures for it). A TF1 program reaches these
runtimes through its graph (TFLiteConverter.from_session, tf2onnx's from_graph_def, convert_model of
a GraphDef), so the graph route does the same with the function:

1. the function is traced in the graph, as the CPU's tf.function is, so that it sees the graph's
   collections, variables and tensors (`trace_in_graph`);
2. its body is taken as a GraphDef in which every tensor it closes over is an input, and a variable
   it reads is an input of the variable's value (its ReadVariableOp an Identity): the value is the
   session's at run time, as from_session would freeze it after initialisation (`GraphBody`);
3. the path converts that body in an eager thread (a new thread's default is eager;
   `eagerly`), loads it in its runtime, and
4. a `tf.numpy_function` node takes the call's place in the graph (`deferred`): when the session
   runs it, it feeds the model the arguments' and the captures' values and returns its outputs.

A body that writes a variable of the graph, or closes over a resource that is not a variable (a
queue, a table, a TensorArray), is not converted: the error says "not measured" (rule
`harness_tf1_graph_route`), as no converted model can hold a session's state.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")
NOT_MEASURED = "not measured: the TF1 graph route cannot convert a function that {what}"


class GraphRouteError(RuntimeError):
    """The graph route cannot take this function (its own limit, not the path's): not measured."""


class NoGradientError(RuntimeError):
    """A gradient was asked through a converted model: its runtime returns values, not a graph that
    can be differentiated, so the path has no gradient to give (rule `export_no_gradient`)."""


def in_graph(tf: Any) -> bool:
    """Whether the call is being made inside a TF1 graph (a session will run its result)."""
    return not tf.executing_eagerly() and tf.compat.v1.get_default_graph().building_function is False


def graph_key(tf: Any) -> Any:
    """The part of a compiled call's cache key that keeps a graph's conversion to its own graph
    (the captures it feeds are that graph's tensors); None when eager."""
    return id(tf.compat.v1.get_default_graph()) if in_graph(tf) else None


def eagerly(work: Callable[[], T]) -> T:
    """`work()` run in a new thread, whose default context is eager whatever graph this thread has
    made the default (converters read values eagerly); its exception is raised here."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as error:  # raised again in the caller's thread
            box["error"] = error

    thread = threading.Thread(target=target, name="tf-graph-route-convert")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


@dataclass
class GraphBody:
    """A function traced in a TF1 graph, as a GraphDef over explicit inputs: the call's arrays, then
    the values it closes over (`captures`: tensors of the outer graph, read by the session)."""

    graph_def: Any
    input_names: list[str]
    output_names: list[str]
    input_dtypes: list[Any]
    output_dtypes: list[Any]
    output_shapes: list[Any]
    structure: Any  # the traced function's structured outputs
    captures: list[Any] = field(default_factory=list)
    controls: list[Any] = field(default_factory=list)  # outer ops the body runs after

    def concrete(self, tf: Any) -> Any:
        """The body as an eager ConcreteFunction of its inputs (call inside `eagerly`)."""
        graph_def = self.graph_def
        wrapped = tf.compat.v1.wrap_function(lambda: tf.graph_util.import_graph_def(graph_def, name=""), [])
        tensor = wrapped.graph.get_tensor_by_name
        return wrapped.prune([tensor(n) for n in self.input_names], [tensor(n) for n in self.output_names])


def _variables_by_handle(tf: Any, graph: Any) -> dict[str, Any]:
    """The graph's variables by their handle tensor's name."""
    keys = tf.compat.v1.GraphKeys
    found = {}
    for key in (keys.GLOBAL_VARIABLES, keys.LOCAL_VARIABLES, keys.MODEL_VARIABLES, keys.GLOBAL_STEP):
        for variable in graph.get_collection(key):
            handle = getattr(variable, "handle", None)
            if handle is not None:
                found[handle.name] = variable
    return found


def trace_in_graph(
    tf: Any, fn: Callable[..., Any], arrays: tuple, stage_error: Callable[[Exception], Exception]
) -> GraphBody:
    """The function traced in the current TF1 graph for the arrays' signature, as a GraphBody. A
    trace error is raised as the path's stage error (`stage_error(error)`, the error its cause);
    a function the route cannot take raises GraphRouteError."""
    specs = tf.nest.map_structure(lambda a: tf.TensorSpec(a.shape, a.dtype), list(arrays))
    try:
        concrete = tf.function(fn).get_concrete_function(*specs)
    except Exception as error:
        raise stage_error(error) from error
    body = concrete.graph
    outer = tf.compat.v1.get_default_graph()
    externals = list(concrete.captured_inputs)
    placeholders = body.inputs[len(body.inputs) - len(externals) :]
    variables = _variables_by_handle(tf, outer)
    # ops of the graph the body runs after (`tf.control_dependencies` on an initializer, an
    # update): the captures are read, and the model runs, after them, as the body would
    controls = list(body.function_captures.control)  # FuncGraph.control_captures before TF 2.13
    graph_def = body.as_graph_def()
    nodes = {node.name: node for node in graph_def.node}
    resource = tf.resource.as_datatype_enum
    captures, read_from = [], {}
    for external, placeholder in zip(externals, placeholders):
        name = placeholder.op.name
        if external.dtype != tf.resource:
            with tf.control_dependencies(controls):
                captures.append(tf.identity(external))
            continue
        variable = variables.get(external.name)
        if variable is None:
            raise GraphRouteError(NOT_MEASURED.format(what=f"closes over a graph resource ({external.name})"))
        node = nodes[name]
        node.attr["dtype"].type = variable.dtype.base_dtype.as_datatype_enum
        node.attr["shape"].shape.CopyFrom(variable.shape.as_proto())
        for extra in ("_handle_data", "_user_specified_name"):
            node.attr.pop(extra, None)
        read_from[name] = variable
        with tf.control_dependencies(controls):
            captures.append(variable.read_value())
    for node in graph_def.node:
        uses = [source for source in node.input if source.split(":")[0].lstrip("^") in read_from]
        if not uses:
            continue
        if node.op != "ReadVariableOp":
            variable = read_from[uses[0].split(":")[0].lstrip("^")].name
            raise GraphRouteError(NOT_MEASURED.format(what=f"uses graph variable {variable} in {node.op}"))
        dtype = node.attr["dtype"].type
        node.op = "Identity"
        node.attr.clear()
        node.attr["T"].type = dtype
    if any(node.op == "Placeholder" and node.attr["dtype"].type == resource for node in graph_def.node):
        raise GraphRouteError(NOT_MEASURED.format(what="takes a resource"))
    return GraphBody(
        graph_def=graph_def,
        input_names=[tensor.name for tensor in body.inputs],
        output_names=[tensor.name for tensor in body.outputs],
        input_dtypes=[tensor.dtype for tensor in tf.nest.flatten(specs)] + [c.dtype for c in captures],
        output_dtypes=[tensor.dtype for tensor in body.outputs],
        output_shapes=[tensor.shape for tensor in body.outputs],
        structure=concrete.structured_outputs,
        captures=captures,
        controls=controls,
    )


def packed(tf: Any, structure: Any, outputs: list[Any]) -> Any:
    """A converted model's flat outputs in the traced function's structure, eager or in a graph: a
    model has an output per tensor, a sparse or ragged result's components included (found
    2026-12-07: tf.sets.intersection's SparseTensor on onnxruntime), and none for a leaf that is not
    a tensor (a gradient that is None, a function returning nothing), which stays as it was."""
    given = iter(outputs)
    flat = tf.nest.flatten(structure, expand_composites=True)
    leaves = [next(given) if tf.is_tensor(leaf) else leaf for leaf in flat]
    return tf.nest.pack_sequence_as(structure, leaves, expand_composites=True)


def deferred(
    tf: Any, tool: str, body: GraphBody, arrays: tuple, run: Callable[[list[Any]], list[Any]]
) -> Any:
    """The call's result in the graph: a tf.numpy_function node that, when the session runs it,
    feeds `run` (the path's loaded model) the arguments' and captures' values; a gradient asked of
    it raises NoGradientError naming `tool` (`tied_to_inputs`)."""
    import numpy as np

    def call(*values: Any) -> list[Any]:
        return [np.asarray(out) for out in run([np.asarray(value) for value in values])]

    if not body.output_names:  # nothing for a model to compute: the body's ops, if any, did it
        return packed(tf, body.structure, [])
    feeds = list(tf.nest.flatten(arrays)) + body.captures
    with tf.control_dependencies(body.controls):
        outputs = tf.numpy_function(call, feeds, body.output_dtypes, stateful=True, name="converted_model")
    for output, shape in zip(outputs, body.output_shapes):
        output.set_shape(shape)
    return packed(tf, body.structure, tied_to_inputs(tf, tool, feeds, list(outputs)))


def model_result(tf: Any, tool: str, structure: Any, arrays: tuple, outputs: list[Any]) -> Any:
    """An eager call's result from the runtime's flat NumPy outputs: tensors tied to the call's
    inputs (`tied_to_inputs`), in the traced function's structure (`packed`). Call it under the
    backend's device scope, where the tensors are to live."""
    return packed(tf, structure, tied_to_inputs(tf, tool, arrays, [tf.constant(o) for o in outputs]))


def tied_to_inputs(tf: Any, tool: str, inputs: Any, outputs: list[Any]) -> list[Any]:
    """A converted model's outputs recorded for autodiff (eager's GradientTape, a graph's
    tf.gradients) as a function of the call's float inputs, with a gradient that raises
    NoGradientError. Untied, the runtime's values are constants (eager) or a tf.numpy_function's,
    which TensorFlow does not differentiate: a gradient asked of them was None, and the test failed
    on its own `None.numpy()`, a message no rule can read (found 2026-12-07: 36 TensorFlow curated
    subtests on openvino left unclassified; the same on onnxruntime, litert and litert_flex)."""
    leaves = [leaf for leaf in tf.nest.flatten(inputs) if tf.is_tensor(leaf) or isinstance(leaf, tf.Variable)]
    sources = [  # a variable's read is recorded, so a gradient asked of the variable comes here too
        tf.convert_to_tensor(leaf) for leaf in leaves if leaf.dtype.is_floating or leaf.dtype.is_complex
    ]
    if not sources or not outputs:
        return outputs

    @tf.custom_gradient  # type: ignore[misc]
    def converted_model(*_sources: Any) -> tuple[list[Any], Callable[..., Any]]:
        def gradient(*_upstream: Any) -> Any:
            raise NoGradientError(
                f"no gradient through the converted model ({tool}): its runtime returns values only"
            )

        return [tf.identity(output) for output in outputs], gradient

    return list(converted_model(*sources))
