"""What a torch.export program says of the inputs the function changes in place, for the paths whose
runtime returns them rather than writing them (executorch, iree_torch_mlir). Not a path (no PATH):
a path module that imports it has these bytes in its harness digest.

torch.export turns `torch.bitwise_not(x, out=y)`, `t.uniform_()` or batch norm's running statistics
into outputs of the program (USER_INPUT_MUTATION, before the function's own outputs); a runtime that
runs the program returns them and leaves the caller's tensors as they were, so the harness writes
each back, as the function does eagerly. Before 2026-12-07 both paths gave every output to the
function's structure and failed with a treespec length mismatch (torch.bitwise_not and torch.lt's
`out=` subtests on executorch; 7 census pairs on iree_torch_mlir, labelled the runtime's failure).
onnxruntime.py reads the same signature inline (`run`).
"""

from __future__ import annotations

from typing import Any


def inputs_written(exported: Any) -> list[int]:
    """The positions, among the program's flat user inputs, of the inputs its leading
    USER_INPUT_MUTATION outputs write back, in output order."""
    signature = exported.graph_signature
    written = []
    for spec in signature.output_specs:
        if spec.kind.name != "USER_INPUT_MUTATION":
            break
        written.append(signature.user_inputs.index(spec.target))
    return written


def write_back(written: list[int], outputs: list, inputs: list) -> list:
    """Each written input updated from its output (`copy_`); the function's own outputs returned."""
    for index, value in zip(written, outputs):
        inputs[index].copy_(value)
    return outputs[len(written) :]
