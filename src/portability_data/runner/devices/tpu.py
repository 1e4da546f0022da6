"""A TPU: torch through torch_xla (the xla path's backend on a TPU PJRT device, synced with the
study's `xm.mark_step()`), TensorFlow once its TPU system is initialised, JAX's tpu platform."""

from __future__ import annotations

import contextlib
from typing import Any

from portability_data.runner.backends import JaxBackend, TensorFlowBackend
from portability_data.runner.devices import DevicePath
from portability_data.runner.devices.xla import TorchXla

TPU_SETUP = (
    "the tpu device needs torch_xla's TPU build on a TPU VM (pip install torch_xla[tpu] matching the "
    "VM's torch), then PJRT_DEVICE=TPU portability run --framework torch --device tpu"
)


class TorchTpu(TorchXla):
    on_tpu = True
    setup = TPU_SETUP

    def sync(self, result: Any) -> None:
        import torch_xla.core.xla_model as xm

        xm.mark_step()  # the study's TPU sync (launches the graph; docs/DEVICE_PATHS.md)

    def describe(self) -> str:
        return self.device


class TensorFlowTpu(TensorFlowBackend):
    device_type = "TPU"

    def connect(self) -> None:
        # TPU devices exist only once the TPU system is initialised ("Use TPUs" guide).
        tf = self.tf
        with contextlib.suppress(ValueError, RuntimeError, tf.errors.OpError):
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
            tf.config.experimental_connect_to_cluster(resolver)
            tf.tpu.experimental.initialize_tpu_system(resolver)


class JaxTpu(JaxBackend):
    platform = "tpu"


PATH = DevicePath(
    name="tpu",
    summary="a TPU (torch_xla, TensorFlow's TPU system, jax[tpu])",
    backends={"torch": TorchTpu, "tensorflow": TensorFlowTpu, "jax": JaxTpu},
    needs="a TPU VM with the framework's TPU build (jax[tpu], torch_xla, tensorflow on TPU)",
    what_to_do="run on a TPU VM with the framework's TPU build (jax[tpu], torch_xla, tensorflow on TPU); "
    "else leave --device tpu out",
)
