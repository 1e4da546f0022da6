"""What every compiled-only path shares (onnxruntime, openvino, litert, executorch, iree): eager
mode refused, and the path's packages imported or named with what to install. Not a path (no PATH):
a path module that imports it has these bytes in its harness digest."""

from __future__ import annotations

import importlib
import os

from portability_data.runner.backends import DeviceUnavailableError


def refuse_eager(device: str, compiled_only: str) -> None:
    """Eager mode on a path that only exports or converts: DeviceUnavailableError (the worker's
    fatal event; the dry run shows it), saying `compiled_only`. The mode is the harness's
    (PORTABILITY_MODE, as the harness reads it)."""
    mode = os.environ.get("PORTABILITY_MODE", "eager")
    if mode != "compiled":
        raise DeviceUnavailableError(f"device {device} in {mode} mode: {compiled_only}")


def require(device: str, install: str, *modules: str) -> None:
    """Import the path's packages, or DeviceUnavailableError naming the missing one and `install`."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise DeviceUnavailableError(
                f"device {device} requested but {name} is missing ({exc}): {install}"
            ) from None
