"""The ExecuTorch path with the XNNPACK delegate (issue 52): as `executorch`, with
`XnnpackPartitioner` in the lowering. The ops XNNPACK takes run in its delegate; the rest run on
ExecuTorch's portable CPU kernels, which on this path is falling back: each such op is counted by
name per call (`get_delegation_info`'s non-delegated nodes) in `host_fallback_ops`, so a subtest
that ran partly outside XNNPACK is `host_fallback` with the ops named, never `passed`.

A path of its own rather than a second compiler of `executorch`: the chosen `--compiler` does not
reach the worker's backend, and the delegate changes what counts as a fallback.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from portability_data.runner.devices import DevicePath
from portability_data.runner.devices.executorch import INSTALL, TorchExecuTorch

# Nodes of an edge graph that are no op (tuple access of a delegate's outputs, the delegate call).
_NOT_OPS = {"getitem", "executorch_call_delegate"}


class TorchExecuTorchXnnpack(TorchExecuTorch):
    compiler = "executorch_xnnpack"  # the same lowering with XnnpackPartitioner
    delegate = "XNNPACK delegate"

    def partitioners(self) -> list[Any]:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        return [XnnpackPartitioner()]

    def not_delegated(self, edge: Any, delegation_info: Callable[..., Any]) -> Counter[str]:
        info = delegation_info(edge.exported_program().graph_module)
        return Counter(
            {
                name: breakdown.non_delegated
                for name, breakdown in info.delegation_by_operator.items()
                if breakdown.non_delegated and name not in _NOT_OPS
            }
        )


PATH = DevicePath(
    name="executorch_xnnpack",
    summary="exported to an ExecuTorch program with the XNNPACK delegate; ops XNNPACK does not take run "
    "on the portable kernels (counted as host fallback); float only, compiled mode only",
    backends={"torch": TorchExecuTorchXnnpack},
    needs=f"the executorch extra: {INSTALL}",
    not_served={
        "tensorflow": "ExecuTorch runs PyTorch programs only",
        "jax": "ExecuTorch runs PyTorch programs only",
    },
    what_to_do=f"run it in compiled mode (--mode compiled) with executorch installed: {INSTALL}",
    runtime="executorch",
)
