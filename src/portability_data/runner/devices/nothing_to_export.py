"""What an export stage's failure is when the call, run on the host, says more: for the paths that
export, convert or lower a function before a runtime runs it (litert, executorch, iree,
onnxruntime, openvino and the paths built on them). Not a path (no PATH): a path module that imports
it has these bytes in its harness digest.

When the export fails, the call runs once on the host:
- nothing to export: `torch.is_grad_enabled()`, `Tensor.size()`, `tf.executing_eagerly()`, a call
  whose result holds no array and that changes no input in place, computes nothing a model could
  hold, so beside an exported model it runs in the host's Python: it stays there and the subtest's
  execution is `not_routed`;
- the function's own refusal: where it raises, on the host, the exception the export stage met
  (a dtype check while tracing, as eagerly), that exception is raised as itself (`own_refusal`);
- anything else keeps its export-stage error: a call that returns an array, changes an input in
  place (which an in-place op that failed to export does while returning None), writes any tensor
  in place (an optimizer's `step()` writes its parameters, reached through the optimizer, not the
  arguments), or raises something else.
The host run follows a trace that failed, and a trace can leave state behind (torch.export tracing
`opt.step()` stores fake tensors in the optimizer's state); an exception of a tracer's own state
(torch's symbolic shapes and fake tensors: GuardOnDataDependentSymNode) is never the function's
refusal, though the host run raised it too (found 2026-12-07: torch.optim.Rprop's 17 subtests on
executorch and onnxruntime, labelled the function's own data-dependent guard; and one step that ran on
the host with that state, not_routed, and missed the reference).
onnxruntime.py kept its own copy of the first rule from 2026-12-06 until it imported this module.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

ON_HOST = object()  # a compiled call's entry for a signature that runs on the host


def leaves(value: Any) -> Iterator[Any]:
    """The non-container leaves of a result (tuples, lists, dicts and sets walked)."""
    if isinstance(value, (tuple, list, set, frozenset)):
        for item in value:
            yield from leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    else:
        yield value


def holds_array(backend: Any, result: Any) -> bool:
    """Whether a result holds an array of the framework: a tensor, or TensorFlow's sparse and
    ragged tensors (a computation's result too; a tf.data.Dataset is the host's input pipeline)."""
    tf = getattr(backend, "tf", None)
    composite = (tf.SparseTensor, tf.RaggedTensor) if tf is not None else ()
    return any(backend.is_array(leaf) or isinstance(leaf, composite) for leaf in leaves(result))


def versions_of(backend: Any, arrays: tuple) -> tuple:
    """The in-place version counters of the torch tensors among `arrays` (empty for JAX and
    TensorFlow, whose arrays cannot change in place): a call that bumped one changed its input."""
    return tuple(
        leaf._version for leaf in leaves(arrays) if backend.is_array(leaf) and hasattr(leaf, "_version")
    )


# Modules whose exceptions say a tracer's state was met (a symbolic size, a fake tensor), which no eager
# call of a function raises unless a failed trace left that state behind.
TRACER_STATE_MODULES = ("torch.fx.experimental.", "torch._subclasses.")


def tracer_state_error(raised: BaseException) -> bool:
    """Whether an exception is of a tracer's own state (TRACER_STATE_MODULES), not a function's."""
    return type(raised).__module__.startswith(TRACER_STATE_MODULES)


@contextlib.contextmanager
def tensor_writes(backend: Any) -> Iterator[list[str]]:
    """The in-place writes to any torch tensor while the block runs (aten ops whose schema is
    mutable), listed by op name; an empty list, never filled, for JAX and TensorFlow (no arrays of
    theirs change in place; a tf.Variable's assignment is an op of its own result)."""
    written: list[str] = []
    torch = getattr(backend, "torch", None)
    if torch is None:
        yield written
        return
    from torch.utils._python_dispatch import TorchDispatchMode

    class WriteWatch(TorchDispatchMode):
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if func._schema.is_mutable:
                written.append(func._schema.name)
            return func(*args, **(kwargs or {}))

    with WriteWatch():
        yield written


def own_refusal(error: Exception, raised: Exception) -> bool:
    """Whether an export stage's error is the function's own refusal of the input: a cause in its
    chain is of the type the function raises on the host, and holds its message (`TypeError: x and y
    must have the same dtype` while tracing, as eagerly). A tool that traces the function raises it
    as the function does, so a case that expects the refusal sees it; the harness's stage error
    around it turned every such subtest into the path's failure (found 2026-12-07: ~430 subtests of
    the export paths that pass on the CPU, TensorFlow's dtype checks above all). A tracer's state
    error is never one (`tracer_state_error`)."""
    if tracer_state_error(raised):
        return False
    said = str(raised).strip()
    cause, seen = error.__cause__, set()
    while cause is not None and id(cause) not in seen:
        if type(cause) is type(raised) and said and said in str(cause):
            return True
        seen.add(id(cause))
        cause = cause.__cause__
    return False


def on_host_or_raise(call: Any, backend: Any, fn: Callable[..., Any], arrays: tuple, error: Exception) -> Any:
    """`fn(*arrays)` run on the host, with `call.execution` set to `not_routed`, where it returns no
    array, changes no input in place and writes no tensor; the function's own exception where it
    raises the one the export stage met (`own_refusal`); else `error` (the export stage's) raised."""
    before = versions_of(backend, arrays)
    try:
        with tensor_writes(backend) as written:
            result = fn(*arrays)
    except Exception as raised:
        if own_refusal(error, raised):
            raise raised from error
        raise error from None
    if holds_array(backend, result) or versions_of(backend, arrays) != before or written:
        raise error
    call.execution = "not_routed"
    return result
