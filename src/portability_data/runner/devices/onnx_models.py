"""ONNX models as the onnxruntime path builds and runs them, whichever exporter made them: the stage
errors a failure is named by, the ONNX Runtime session on the CPU execution provider, what a model's
ops and input types say, and the run that feeds bfloat16. Not a path (no PATH): onnxruntime.py
imports it, so these bytes are in its harness digest (runner/provenance.py)."""

from __future__ import annotations

from typing import Any

from portability_data.runner.devices.trace_errors import trace_error_cause

PROVIDER = "CPUExecutionProvider"


class ExportStageError(RuntimeError):
    """A stage of the export path failed; the message names the stage's tool and its own error."""

    stage = ""

    def __init__(self, tool: str, error: BaseException | str, detail: str = "") -> None:
        if isinstance(error, BaseException):
            inner = innermost(error)
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


def innermost(error: BaseException) -> BaseException:
    """The root of an exception's `raise ... from` chain (the exporter's own cause: torch.onnx's
    DispatchError naming the op without a lowering under two ConversionErrors of boilerplate)."""
    seen = {id(error)}
    while error.__cause__ is not None and id(error.__cause__) not in seen:
        error = error.__cause__
        seen.add(id(error))
    return error


def open_session(tool: str, model: bytes) -> Any:
    """An ONNX Runtime session of the model on the CPU execution provider (RuntimeLoadError if not)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3  # errors only
    try:
        return ort.InferenceSession(model, sess_options=options, providers=[PROVIDER])
    except Exception as error:
        raise RuntimeLoadError(tool, error) from error


def unknown_ops(model: Any) -> list[str]:
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


def refuse_retyped_inputs(tool: str, model: Any, dtypes: list[Any]) -> None:
    """ExportError naming the model's inputs the exporter retyped (`retyped_inputs`), if any."""
    retyped = retyped_inputs(model, dtypes)
    if retyped:
        raise ExportError(tool, f"the model takes {'; '.join(retyped)}", "input retyped")


def retyped_inputs(model: Any, dtypes: list[Any]) -> list[str]:
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


def bfloat16(array: Any) -> bool:
    return str(getattr(array, "dtype", "")) == "bfloat16"


def ort_run(session: Any, feeds: list[Any]) -> list[Any]:
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
    if not any(bfloat16(a) for a in feeds) and all(o.type != "tensor(bfloat16)" for o in outputs):
        return list(session.run(None, {i.name: v for i, v in zip(inputs, feeds)}))
    from onnx import TensorProto

    def ort_value(array: Any) -> Any:
        if bfloat16(array):
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
