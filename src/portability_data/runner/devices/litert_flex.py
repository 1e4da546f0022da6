"""The LiteRT path with Select TF ops (issue 52): TensorFlow's converter as on the `litert` path, but
permissive (`supported_ops = [TFLITE_BUILTINS, SELECT_TF_OPS]`): an op without a builtin becomes a
`Flex*` node, which only a runtime linked with TensorFlow's kernels (the Flex delegate) can run.
Beside `litert` (strict), both answers are data: a function the strict converter refuses with
`TF Select ops: X` converts here, with the Flex ops it needed counted by name and number in
`host_fallback_ops` (the project's word for an op that runs outside the target runtime's own
kernels). A model with no Flex node runs in LiteRT exactly as on `litert`.

A model with Flex nodes is then loaded in LiteRT as any other, and on this host it cannot be
prepared: neither ai-edge-litert 2.3 nor TensorFlow 2.21's `tf.lite.Interpreter` links the Flex
delegate (`Select TensorFlow op(s) ... not supported by this interpreter`), so such a subtest is
`failed` at the load stage (RuntimeLoadError), its Flex ops still named in `host_fallback_ops`. On a
runtime with the Flex delegate (Android's tensorflow-lite-select-tf-ops) the same model would run.

A separate path rather than a second compiler of `litert`: the chosen `--compiler` does not reach
the backend in the worker (only the runs row's `compiler` records it), and the two differ in what
they mean for portability (and in `host_fallback_ops`), so each is its own setting.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from portability_data.runner.backends import CompiledCall
from portability_data.runner.devices import DevicePath
from portability_data.runner.devices.litert import (
    INSTALL,
    Loaded,
    RuntimeLoadError,
    TensorFlowLiteCall,
    TensorFlowLiteRt,
)


class TensorFlowFlexCall(TensorFlowLiteCall):
    select_tf_ops = True

    def load(self, model: bytes, flex: Counter[str]) -> Loaded:
        try:
            return Loaded(self.tool, model)
        except RuntimeLoadError as error:
            if flex:
                # the Flex ops are named (and counted) even though nothing ran: the subtest's row
                # keeps them in host_fallback_ops
                self.backend.outside.update(flex)
                ops = ", ".join(f"{name} x{count}" for name, count in sorted(flex.items()))
                said = str(error.__cause__ or error).split(". Make sure")[0]
                raise RuntimeLoadError(
                    self.tool,
                    f"needs the Flex delegate (Select TF ops: {ops}), not linked in this runtime: {said}",
                ) from error
            raise


class TensorFlowLiteRtFlex(TensorFlowLiteRt):
    compiler = "tflite_converter_select_tf_ops"  # TFLITE_BUILTINS + SELECT_TF_OPS
    converter = "tf.lite.TFLiteConverter.from_concrete_functions (TFLITE_BUILTINS, SELECT_TF_OPS)"
    call = TensorFlowFlexCall

    def describe(self) -> str:
        return super().describe().replace("builtin ops", "builtin + Flex ops")

    def compile(self, fn: Callable[..., Any]) -> CompiledCall:
        return self.call(self, fn)


PATH = DevicePath(
    name="litert_flex",
    summary="converted to a TFLite model with Select TF ops allowed (Flex nodes, counted as host "
    "fallback) and run by LiteRT (ai-edge-litert) on the host CPU; float only, compiled mode only",
    backends={"tensorflow": TensorFlowLiteRtFlex},
    needs=f"the litert extra: {INSTALL}",
    not_served={
        "torch": "Select TF ops are TensorFlow's kernels: PyTorch converts to builtins (the litert path)",
        "jax": "LiteRT converts JAX through jax2tf or litert-torch's JAX bridge only: not built (issue 52)",
    },
    what_to_do=f"run it in compiled mode (--mode compiled) with its packages installed: {INSTALL}",
    runtime="litert",
)
