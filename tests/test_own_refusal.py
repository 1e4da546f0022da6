"""A function that refuses its input raises its own exception on the paths that export it, as on the
CPU (runner/devices/nothing_to_export.py `own_refusal`): real exporters and converters. Before
2026-12-07 the export stage's error wrapped it (ExportError: ... ValueError: ...), so a case that
expects the refusal (`pytest.raises(ValueError)`) failed on every export path and ~430 such subtests
that pass on the CPU were labelled the paths' failures. A failure of the path itself keeps its stage
error: the function runs on the host, and only where it raises the same exception with the same
message is the refusal its own."""

from __future__ import annotations

import importlib
import importlib.util

import pytest

from portability_data.runner import devices

PATHS = {
    ("tensorflow", "litert"): ("ai_edge_litert",),
    ("tensorflow", "litert_flex"): ("ai_edge_litert",),
    ("tensorflow", "onnxruntime"): ("onnxruntime", "tf2onnx"),
    ("tensorflow", "openvino"): ("openvino",),
    ("tensorflow", "openvino_f32"): ("openvino",),
    ("jax", "onnxruntime"): ("onnxruntime", "jax2onnx"),
    ("torch", "onnxruntime"): ("onnxruntime", "onnxscript"),
    ("torch", "executorch"): ("executorch",),
}


def _timer(framework: str, device: str, monkeypatch):
    pytest.importorskip(framework)
    for name in PATHS[(framework, device)]:
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (the {device} path's extra)")
    from portability_data.runner.timing import Timer

    monkeypatch.setenv("PORTABILITY_MODE", "compiled")
    return Timer(devices.backend_for(framework, device), "compiled", 0)


def _array(framework: str, values: list[float]):
    if framework == "torch":
        import torch

        return torch.tensor(values)
    if framework == "jax":
        import jax.numpy as jnp

        return jnp.asarray(values)
    import tensorflow as tf

    return tf.constant(values)


def _three_values(x):
    """Doubles three values; refuses any other count, as a function checking its input does."""
    if x.shape[0] != 3:
        raise ValueError(f"needs 3 values, got {x.shape[0]}")
    return x * 2


@pytest.mark.parametrize(("framework", "device"), sorted(PATHS))
def test_a_function_refusing_its_input_raises_its_own_error_on_the_path(framework, device, monkeypatch):
    timer = _timer(framework, device, monkeypatch)
    with pytest.raises(ValueError, match="needs 3 values, got 2") as raised:
        timer(_three_values, _array(framework, [1.0, 2.0]))
    assert type(raised.value) is ValueError  # the function's own, not the stage's around it
    doubled = timer(_three_values, _array(framework, [1.0, 2.0, 3.0]))
    assert [float(v) for v in doubled] == [2.0, 4.0, 6.0]


def test_a_stage_error_that_is_not_the_function_s_own_keeps_its_stage() -> None:
    """The host's exception must be the one the stage met: same type and message in its chain."""
    from portability_data.runner.devices.nothing_to_export import own_refusal

    class StageError(RuntimeError):
        pass

    def stage_error(cause: Exception) -> StageError:
        try:
            raise StageError(f"export failed: {cause}") from cause
        except StageError as error:
            return error

    met = stage_error(ValueError("in user code: ... ValueError: needs 3 values, got 2"))
    assert own_refusal(met, ValueError("needs 3 values, got 2"))
    assert not own_refusal(met, TypeError("needs 3 values, got 2"))  # another type
    assert not own_refusal(met, ValueError("another refusal"))  # another message
    assert not own_refusal(met, ValueError(""))  # nothing said: nothing to match
    assert not own_refusal(stage_error(TypeError("unsupported op")), ValueError("unsupported op"))


def test_a_tracer_state_error_is_never_the_function_s_own() -> None:
    """A failed trace can leave its state behind (torch.export tracing `opt.step()` stores fake
    tensors in the optimizer), and the host run then raises the trace's own exception too: that is
    no refusal of the function (torch.optim.Rprop's 17 subtests, 2026-12-07)."""
    import sympy
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    from portability_data.runner.devices.nothing_to_export import own_refusal, tracer_state_error

    guard = GuardOnDataDependentSymNode(
        sympy.Symbol("zuf0"), "Could not guard on data-dependent expression zuf0"
    )

    class StageError(RuntimeError):
        pass

    try:
        raise StageError(f"export failed: {guard}") from guard
    except StageError as error:
        met = error
    assert tracer_state_error(guard) and not tracer_state_error(ValueError("x"))
    assert not own_refusal(met, guard)


# Where each path's errors before its runtime runs are defined: module, names.
EXPORT_ERRORS = {
    "executorch": ("executorch", ("ExportError", "ConvertError")),
    "onnxruntime": ("onnx_models", ("ExportError", "RuntimeLoadError")),
}


@pytest.mark.parametrize("device", sorted(EXPORT_ERRORS))
def test_an_optimizer_step_that_fails_to_export_keeps_its_stage_error(device, monkeypatch) -> None:
    """`opt.step()` returns None and takes no tensor argument, but writes the parameters it reaches
    through the optimizer: a computation, never "nothing to export" run on the host (not_routed), and
    the second step, whose trace meets the state the first one left, is the stage's failure too."""
    timer = _timer("torch", device, monkeypatch)
    import torch

    module = importlib.import_module(f"portability_data.runner.devices.{EXPORT_ERRORS[device][0]}")
    stage_errors = tuple(getattr(module, name) for name in EXPORT_ERRORS[device][1])
    parameter = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
    optimizer = torch.optim.Rprop([parameter], lr=0.05)
    for grad in ([1.0, 1.0, -1.0], [1.0, -1.0, -1.0]):
        parameter.grad = torch.tensor(grad)
        with pytest.raises(stage_errors):
            timer.once(lambda opt: opt.step(), optimizer)
