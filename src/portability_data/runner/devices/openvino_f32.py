"""The OpenVINO path with float32 inference pinned (issue 51): the `openvino` path's conversion and
CPU plugin, compiled with `INFERENCE_PRECISION_HINT = f32`.

Why a second path: OpenVINO's CPU plugin runs float32 models in bf16 by default on a CPU with bf16
instructions (avx512_bf16 or AMX; OpenVINO's CPU plugin docs, "inference precision"). On such a CPU
the `openvino` path's matmul-family values (bmm, addmm, linear, ...) land off a float32 oracle, as
a user of the default meets them; on a CPU without those instructions the default is f32 already.
The two answers differ in what they mean for portability, so each is data: `openvino` is the
default as shipped (whatever this CPU makes of it), `openvino_f32` is OpenVINO's lowering coverage
at the framework's own precision, the same on every CPU. A subtest that deviates on `openvino` and
passes here deviates for the precision default alone. Both runs rows say which precision ran
(`runs.build` `inference_precision`, and the config passed, `openvino_config`).
"""

from __future__ import annotations

from dataclasses import replace

from portability_data.runner.devices.openvino import PATH as DEFAULT_PATH
from portability_data.runner.devices.openvino import TensorFlowOpenVino, TorchOpenVino

F32: dict[str, str] = {"INFERENCE_PRECISION_HINT": "f32"}


class TorchOpenVinoF32(TorchOpenVino):
    config = F32


class TensorFlowOpenVinoF32(TensorFlowOpenVino):
    config = F32


PATH = replace(
    DEFAULT_PATH,
    name="openvino_f32",
    summary="as openvino, with the CPU plugin's inference precision pinned to f32 (its default is bf16 "
    "on a CPU with bf16 instructions); compiled mode only",
    backends={"torch": TorchOpenVinoF32, "tensorflow": TensorFlowOpenVinoF32},
)
