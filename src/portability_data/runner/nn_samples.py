"""PyTorch's own samples of a neural-network op as host arrays, each with the torch CPU result of
the same sample: the inputs and the oracle (`torch_cpu`) of the NN-op census of TensorFlow and JAX
(cases/<framework>/census/test_nn.py, issue 60).

No NumPy reference exists for convolution, pooling, attention or recurrent cells; what every
framework can be held to is PyTorch's CPU result on identical inputs. The samples are upstream's
(OpInfo `sample_inputs`, ModuleInfo `module_inputs_func`), built on the CPU under
torch.manual_seed(0) as test_opinfo.py and test_module.py build them, so one (entry, dtype) gives
the same arrays in every framework's worker. Each sample's arguments are bound to the torch
function's parameter names (SIGNATURES) so a census module's adapter reads `stride`, `padding`, ...
whether upstream passed them by position or keyword.

Imported by census modules (their digest holds its bytes: provenance.CENSUS_INPUT_FILES).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

ORACLE = "torch_cpu"  # the oracle's name in the results: PyTorch's CPU result, not NumPy
SEED = 0

# The torch functions' parameters after the first input, in order, with their defaults (PyTorch's
# documentation of torch.nn.functional): how positional sample arguments are named.
SIGNATURES: dict[str, tuple[tuple[str, Any], ...]] = {
    "conv": (("weight", None), ("bias", None), ("stride", 1), ("padding", 0), ("dilation", 1), ("groups", 1)),
    "max_pool": (
        ("kernel_size", None),
        ("stride", None),
        ("padding", 0),
        ("dilation", 1),
        ("ceil_mode", False),
        ("return_indices", False),
    ),
    "avg_pool": (
        ("kernel_size", None),
        ("stride", None),
        ("padding", 0),
        ("ceil_mode", False),
        ("count_include_pad", True),
        ("divisor_override", None),
    ),
    "batch_norm": (
        ("running_mean", None),
        ("running_var", None),
        ("weight", None),
        ("bias", None),
        ("training", False),
        ("momentum", 0.1),
        ("eps", 1e-5),
    ),
    "layer_norm": (("normalized_shape", None), ("weight", None), ("bias", None), ("eps", 1e-5)),
    "softmax": (("dim", None), ("dtype", None)),
    "gelu": (("approximate", "none"),),
    "leaky_relu": (("negative_slope", 0.01), ("inplace", False)),
    "unary": (),
    "attention": (
        ("key", None),
        ("value", None),
        ("attn_mask", None),
        ("dropout_p", 0.0),
        ("is_causal", False),
        ("scale", None),
        ("enable_gqa", False),
    ),
    "cross_entropy": (
        ("target", None),
        ("weight", None),
        ("size_average", None),
        ("ignore_index", -100),
        ("reduce", None),
        ("reduction", "mean"),
        ("label_smoothing", 0.0),
    ),
    "loss": (("target", None), ("size_average", None), ("reduce", None), ("reduction", "mean")),
    "embedding": (
        ("indices", None),
        ("padding_idx", None),
        ("max_norm", None),
        ("norm_type", 2.0),
        ("scale_grad_by_freq", False),
        ("sparse", False),
    ),
    "linear": (("weight", None), ("bias", None)),
    "dropout": (("p", 0.5), ("training", True), ("inplace", False)),
    "cell": (("hx", None),),
}


class NotApplicable(ValueError):
    """The sample uses something the target function cannot express (its documentation excludes it,
    or it has no such argument): the sample is not one of this entry's, and is not counted."""


@dataclass(frozen=True)
class NnSample:
    """One upstream sample on the host: the first input, the other arguments by name, the module's
    weights (ModuleInfo entries) and the torch CPU result of the sample."""

    index: int
    input: Any
    bound: dict[str, Any]
    expected: Any
    weights: dict[str, np.ndarray] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.bound[name]

    def describe(self) -> str:
        shapes = {k: _shape(v) for k, v in self.bound.items() if _shape(v) is not None}
        return f"torch sample {self.index}: input {_shape(self.input)}, {shapes}"

    def refuse_if(self, condition: bool, why: str) -> None:
        if condition:
            raise NotApplicable(why)


def _shape(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return tuple(value.shape)
    if isinstance(value, tuple) and value and all(isinstance(v, np.ndarray) for v in value):
        return tuple(tuple(v.shape) for v in value)
    return None


def host(value: Any) -> Any:
    """A torch value as the host holds it: tensors as NumPy arrays (tuples and lists inside)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().resolve_conj().numpy().copy()
    if isinstance(value, (tuple, list)):
        return tuple(host(v) for v in value)
    return value


def _bind(signature: str, args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The sample's arguments after the input by parameter name, defaults filled in."""
    parameters = SIGNATURES[signature]
    if len(args) > len(parameters):
        raise NotApplicable(f"{len(args)} positional arguments, {signature} takes {len(parameters)}")
    bound = {name: default for name, default in parameters}
    bound.update(zip((name for name, _ in parameters), args))
    unknown = set(kwargs) - set(bound)
    if unknown:
        raise NotApplicable(f"arguments {sorted(unknown)} are not {signature}'s")
    bound.update(kwargs)
    return bound


@cache
def _op(entry: str) -> Any:
    from torch.testing._internal.common_methods_invocations import op_db

    for op in op_db:
        if (f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name) == entry:
            return op
    raise KeyError(f"no OpInfo entry {entry!r} in the installed torch")


@cache
def _module_info(entry: str) -> Any:
    from torch.testing._internal.common_modules import module_db

    for info in module_db:
        if info.name == entry:
            return info
    raise KeyError(f"no ModuleInfo entry {entry!r} in the installed torch")


def torch_samples(source: str, entry: str, signature: str, dtype_name: str) -> list[NnSample]:
    """Every upstream sample of the entry in the dtype, on the CPU, with torch's result of each
    (None where torch itself raises on it: such a sample has no oracle and is not one of the
    entry's)."""
    import torch

    dtype = getattr(torch, dtype_name)
    torch.manual_seed(SEED)
    found = []
    with torch.no_grad():
        if source == "opinfo":
            op = _op(entry)
            for index, given in enumerate(op.sample_inputs("cpu", dtype, requires_grad=False)):
                try:
                    bound = _bind(signature, tuple(given.args), dict(given.kwargs))
                    expected = host(op(given.input, *given.args, **given.kwargs))
                except Exception:  # torch refused its own sample, or unbindable
                    continue
                found.append(NnSample(index, host(given.input), host_bound(bound), expected))
        elif source == "module":
            found = _module_samples(_module_info(entry), signature, dtype)
        else:
            raise ValueError(f"unknown torch sample source {source!r} (opinfo or module)")
    return found


def host_bound(bound: dict[str, Any]) -> dict[str, Any]:
    return {name: host(value) for name, value in bound.items()}


def _module_samples(info: Any, signature: str, dtype: Any) -> list[NnSample]:
    """ModuleInfo samples: the module built under the seed in eval mode, its weights by name."""
    import torch

    found = []
    inputs = info.module_inputs_func(info, device="cpu", dtype=dtype, requires_grad=False, training=False)
    for index, given in enumerate(inputs):
        torch.manual_seed(SEED)
        built = given.constructor_input
        module = info.module_cls(*built.args, **built.kwargs).to(dtype).eval()
        forward = given.forward_input
        first, *rest = forward.args
        try:
            bound = _bind(signature, tuple(rest), dict(forward.kwargs))
            expected = host(module(first, *rest, **forward.kwargs))
        except Exception:  # torch refused its own sample
            continue
        weights = {name: host(p) for name, p in module.named_parameters()}
        found.append(NnSample(index, host(first), host_bound(bound), expected, weights))
    return found


def as_tuple(value: Any, rank: int) -> tuple[int, ...]:
    """torch's int-or-tuple size arguments (stride 2, padding (1, 1)) as `rank` ints."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            return tuple(int(value[0]) for _ in range(rank))
        if len(value) != rank:
            raise NotApplicable(f"{len(value)} sizes for {rank} spatial dimensions")
        return tuple(int(v) for v in value)
    return tuple(int(value) for _ in range(rank))


@dataclass(frozen=True)
class Window:
    """A pooling or convolution window over `rank` spatial dimensions, torch's arguments bound."""

    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]


def pool_window(sample: NnSample, rank: int) -> Window:
    """A pooling sample's window; refuses what neither TensorFlow nor JAX pooling expresses:
    returned indices (their index conventions differ) and a ceil_mode that changes the output's size
    (torch's extra partial window has no counterpart argument)."""
    sample.refuse_if(bool(sample.bound.get("return_indices")), "return_indices: indices differ by framework")
    kernel = as_tuple(sample["kernel_size"], rank)
    stride = as_tuple(sample["stride"] if sample["stride"] not in (None, ()) else kernel, rank)
    padding = as_tuple(sample["padding"], rank)
    dilation = as_tuple(sample.bound.get("dilation", 1), rank)
    window = Window(kernel, stride, padding, dilation)
    size = sample.input.shape[-rank:]
    if sample["ceil_mode"] and _out(size, window, ceil=True) != _out(size, window, ceil=False):
        raise NotApplicable("ceil_mode adds a partial window no counterpart expresses")
    return window


def _out(size: tuple[int, ...], w: Window, ceil: bool) -> tuple[int, ...]:
    """torch's pooled size per dimension (its documented formula, ceil_mode's last-window rule)."""
    found = []
    for n, k, s, p, d in zip(size, w.kernel, w.stride, w.padding, w.dilation, strict=True):
        span = n + 2 * p - d * (k - 1) - 1
        out = (-(-span // s) if ceil else span // s) + 1
        if ceil and (out - 1) * s >= n + p:
            out -= 1
        found.append(out)
    return tuple(found)
