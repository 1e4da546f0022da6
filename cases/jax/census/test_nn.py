"""The JAX census of its neural-network ops (jax.lax, jax.nn) on PyTorch's own samples of the op
torch users call for the same thing, held to PyTorch's CPU result of the same sample (oracle
`torch_cpu`: no NumPy reference exists for convolution, pooling or attention), one subtest per op x
dtype, through the same harness as the curated cases (`device`, `timed`). Issue 60.

What runs comes from `nn.yaml` beside this file, harvested (`portability census-harvest --nn`)
from the reviewed mapping cases/nn_ops.yml: per torch op, the JAX function, the adapter below that
makes a torch sample its call, and the conventions each adapter follows with their documentation
(lax.conv_general_dilated and reduce_window take torch's NCHW / OIHW layout through
dimension_numbers and explicit padding pairs; jax.nn.dot_product_attention takes [B, T, N, H]
where torch has [B, N, T, H]). Ops JAX itself has no counterpart for (losses, dropout and
recurrent cells live in Optax and Flax) are listed in the manifest with the reason.

Per sample (runner/nn_samples.py: upstream's OpInfo samples on the CPU, seeded): the adapter refuses
what the JAX function cannot express (the sample is not one of the entry's: not counted), prepares
the host arrays and names the function with its constant arguments; the arrays are put on the
device and the call runs through `timed`; layout is restored inside the call (exact). The result
is held to the torch CPU result at the tolerance of the less precise dtype (oracle.deviation), NaN
matching NaN; off the host CPU, to the host's result as well (runner/device_oracle.py). The census
runs JAX without x64 (float32 only: a float64 input would be narrowed, not measured).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from portability_data.runner.census_rows import CensusModule
from portability_data.runner.device_oracle import DeviceJudgement
from portability_data.runner.nn_samples import (
    ORACLE,
    NnSample,
    NotApplicable,
    as_tuple,
    pool_window,
    torch_samples,
)

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests


@dataclass(frozen=True)
class Call:
    """One sample as a JAX call: the host arrays (put on the device), the function and its constant
    arguments (bound as constants under jax.jit in compiled mode)."""

    arrays: tuple[np.ndarray, ...]
    function: Callable[..., Any]
    kwargs: dict[str, Any] = field(default_factory=dict)


def _batched(x: np.ndarray, rank: int) -> tuple[np.ndarray, bool]:
    if x.ndim == rank + 1:
        return x[None], True
    if x.ndim != rank + 2:
        raise NotApplicable(f"rank {x.ndim} input for {rank} spatial dimensions")
    return x, False


LAYOUTS = {1: ("NCH", "OIH", "NCH"), 2: ("NCHW", "OIHW", "NCHW")}  # torch's, named to lax


def _conv_call(
    x: Any,
    w: Any,
    *bias: Any,
    rank: int,
    strides: Any,
    padding: Any,
    dilation: Any,
    groups: int,
    unbatched: bool,
) -> Any:
    y = jax.lax.conv_general_dilated(
        x,
        w,
        window_strides=strides,
        padding=padding,
        rhs_dilation=dilation,
        dimension_numbers=LAYOUTS[rank],
        feature_group_count=groups,
    )
    if bias:
        y = y + bias[0].reshape((-1,) + (1,) * rank)
    return y[0] if unbatched else y


def conv(sample: NnSample, dtype: str, rank: int) -> Call:
    """torch's layout kept (dimension_numbers), padding as (low, high) pairs or 'SAME' / 'VALID',
    groups as feature_group_count, dilation as rhs_dilation."""
    x, unbatched = _batched(sample.input, rank)
    padding = sample["padding"]
    pads = padding.upper() if isinstance(padding, str) else tuple((p, p) for p in as_tuple(padding, rank))
    bias = () if sample["bias"] is None else (sample["bias"],)
    kwargs = dict(
        rank=rank,
        strides=as_tuple(sample["stride"], rank),
        padding=pads,
        dilation=as_tuple(sample["dilation"], rank),
        groups=int(sample["groups"]),
        unbatched=unbatched,
    )
    return Call((x, sample["weight"], *bias), _conv_call, kwargs)


def _pool_call(
    x: Any, *, kind: str, window: Any, strides: Any, padding: Any, dilation: Any, unbatched: bool
) -> Any:
    if kind == "max":
        y = jax.lax.reduce_window(
            x, -jnp.inf, jax.lax.max, window, strides, padding, window_dilation=dilation
        )
    else:
        total = jax.lax.reduce_window(x, 0.0, jax.lax.add, window, strides, padding, window_dilation=dilation)
        y = total / np.prod(window)
    return y[0] if unbatched else y


def pool(kind: str, rank: int) -> Callable[[NnSample, str], Call]:
    """jax.lax.reduce_window over the spatial axes of torch's layout: max with -inf padding (torch's
    implicit padding), or the sum over the window divided by its size (average, counting torch's
    zero padding: count_include_pad, its default); padding left out of the count and a divisor
    override have no reduce_window argument."""

    def adapt(sample: NnSample, dtype: str) -> Call:
        window = pool_window(sample, rank)
        if kind == "avg":
            sample.refuse_if(sample["divisor_override"] is not None, "divisor override")
            sample.refuse_if(
                not sample["count_include_pad"] and any(window.padding), "padding left out of the average"
            )
        x, unbatched = _batched(sample.input, rank)
        kwargs = dict(
            kind=kind,
            window=(1, 1, *window.kernel),
            strides=(1, 1, *window.stride),
            padding=((0, 0), (0, 0), *((p, p) for p in window.padding)),
            dilation=(1, 1, *window.dilation),
            unbatched=unbatched,
        )
        return Call((x,), _pool_call, kwargs)

    return adapt


def _batch_norm_call(x: Any, mean: Any, var: Any, *affine: Any, eps: float, parts: tuple[str, ...]) -> Any:
    axes = tuple(a for a in range(x.ndim) if a != 1)
    y = jax.nn.standardize(x, axis=axes, mean=mean, variance=var, epsilon=eps)
    named = dict(zip(parts, affine))
    if "weight" in named:
        y = y * named["weight"]
    return y + named["bias"] if "bias" in named else y


def batch_norm(sample: NnSample, dtype: str) -> Call:
    """Inference mode: jax.nn.standardize with the running mean and variance given, per-channel
    vectors reshaped to broadcast over torch's channel axis 1, then weight and bias."""
    sample.refuse_if(bool(sample["training"]), "training mode: batch statistics, running stats updated")
    x = sample.input
    sample.refuse_if(x.ndim < 2, "needs a channel axis")
    shape = (x.shape[1],) + (1,) * (x.ndim - 2)
    parts = tuple(p for p in ("weight", "bias") if sample[p] is not None)
    vectors = (sample["running_mean"], sample["running_var"], *(sample[p] for p in parts))
    return Call(
        (x, *(v.reshape(shape) for v in vectors)),
        _batch_norm_call,
        dict(eps=float(sample["eps"]), parts=parts),
    )


def _layer_norm_call(x: Any, *affine: Any, count: int, eps: float, parts: tuple[str, ...]) -> Any:
    y = jax.nn.standardize(x, axis=tuple(range(-count, 0)), epsilon=eps)
    named = dict(zip(parts, affine))
    if "weight" in named:
        y = y * named["weight"]
    return y + named["bias"] if "bias" in named else y


def layer_norm(sample: NnSample, dtype: str) -> Call:
    """jax.nn.standardize over the last len(normalized_shape) axes, then torch's weight and bias."""
    parts = tuple(p for p in ("weight", "bias") if sample[p] is not None)
    kwargs = dict(count=len(sample["normalized_shape"]), eps=float(sample["eps"]), parts=parts)
    return Call((sample.input, *(sample[p] for p in parts)), _layer_norm_call, kwargs)


def softmax(function: Callable[..., Any]) -> Callable[[NnSample, str], Call]:
    def adapt(sample: NnSample, dtype: str) -> Call:
        sample.refuse_if(sample["dtype"] is not None, "a dtype argument: no JAX counterpart")
        return Call((sample.input,), function, dict(axis=int(sample["dim"])))

    return adapt


def unary(function: Callable[..., Any]) -> Callable[[NnSample, str], Call]:
    return lambda sample, dtype: Call((sample.input,), function)


def gelu(sample: NnSample, dtype: str) -> Call:
    """torch approximate='none' / 'tanh' -> approximate=False / True (jax.nn.gelu's default is
    True: passed explicitly)."""
    return Call((sample.input,), jax.nn.gelu, dict(approximate=sample["approximate"] == "tanh"))


def leaky_relu(sample: NnSample, dtype: str) -> Call:
    return Call((sample.input,), jax.nn.leaky_relu, dict(negative_slope=float(sample["negative_slope"])))


def _attention_call(q: Any, k: Any, v: Any, *, scale: float, is_causal: bool, heads: bool) -> Any:
    y = jax.nn.dot_product_attention(q, k, v, scale=scale, is_causal=is_causal)
    return jnp.swapaxes(y, 1, 2) if heads else y[:, :, 0, :]


def attention(sample: NnSample, dtype: str) -> Call:
    """jax.nn.dot_product_attention takes [B, T, N, H]: torch's [B, N, T, H] with its T and N axes
    swapped (and back), torch's [B, T, E] as one head; scale 1/sqrt(H) unless the sample gives one.
    Dropout, an additive mask and grouped-query attention are left out."""
    q, k, v = sample.input, sample["key"], sample["value"]
    sample.refuse_if(float(sample["dropout_p"]) > 0, "dropout_p > 0 draws random numbers")
    sample.refuse_if(sample["attn_mask"] is not None, "torch's additive float mask")
    sample.refuse_if(bool(sample["enable_gqa"]), "grouped-query attention")
    sample.refuse_if(not q.ndim == k.ndim == v.ndim or q.ndim not in (3, 4), "operands of one rank, 3 or 4")
    heads = q.ndim == 4
    q, k, v = (np.ascontiguousarray(np.swapaxes(a, 1, 2)) if heads else a[:, :, None, :] for a in (q, k, v))
    scale = float(sample["scale"]) if sample["scale"] is not None else float(q.shape[-1]) ** -0.5
    return Call(
        (q, k, v), _attention_call, dict(scale=scale, is_causal=bool(sample["is_causal"]), heads=heads)
    )


def _embedding_call(table: Any, indices: Any) -> Any:
    return jnp.take(table, indices, axis=0)


def embedding(sample: NnSample, dtype: str) -> Call:
    """jax.numpy.take of the table's rows (jax.lax and jax.nn have no lookup; Flax's Embed takes
    rows so); max_norm renormalises torch's table in place (no counterpart)."""
    sample.refuse_if(sample["max_norm"] is not None, "max_norm renormalises the table in place")
    return Call((sample.input, sample["indices"]), _embedding_call)


def _linear_call(x: Any, w: Any, *bias: Any) -> Any:
    y = jax.lax.dot_general(x, w, (((x.ndim - 1,), (1,)), ((), ())))
    return y + bias[0] if bias else y


def linear(sample: NnSample, dtype: str) -> Call:
    """jax.lax.dot_general contracting x's last axis with torch's weight's axis 1 ([out, in] kept),
    then the bias."""
    bias = () if sample["bias"] is None else (sample["bias"],)
    return Call((sample.input, sample["weight"], *bias), _linear_call)


ADAPTERS: dict[str, Callable[[NnSample, str], Call]] = {
    "conv1d": lambda s, d: conv(s, d, 1),
    "conv2d": lambda s, d: conv(s, d, 2),
    "max_pool1d": pool("max", 1),
    "max_pool2d": pool("max", 2),
    "avg_pool1d": pool("avg", 1),
    "avg_pool2d": pool("avg", 2),
    "batch_norm": batch_norm,
    "layer_norm": layer_norm,
    "relu": unary(jax.nn.relu),
    "sigmoid": unary(jax.nn.sigmoid),
    "tanh": unary(jax.lax.tanh),
    "silu": unary(jax.nn.silu),
    "elu": unary(jax.nn.elu),
    "leaky_relu": leaky_relu,
    "gelu": gelu,
    "softmax": softmax(jax.nn.softmax),
    "log_softmax": softmax(jax.nn.log_softmax),
    "attention": attention,
    "embedding": embedding,
    "linear": linear,
}


def applicable(entry: dict[str, Any], dtype_name: str) -> Iterator[tuple[NnSample, Call]]:
    """The entry's torch samples the adapter takes, each with its call (the harvest counts them)."""
    adapt = ADAPTERS[entry["adapter"]]
    for given in torch_samples(entry["source"], entry["entry"], entry["signature"], dtype_name):
        try:
            yield given, adapt(given, dtype_name)
        except NotApplicable:
            continue


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    name, dtype_name = census_pair
    entry = CENSUS.entries[name]
    judgement = DeviceJudgement(CENSUS.tolerances, timed)
    samples = judgement.build(lambda: CENSUS.samples(applicable(entry, dtype_name), timed.mode), device)

    def run_one(pair: tuple[NnSample, Call]) -> tuple[Any, Any, Any]:
        given, call = pair
        arrays = [jax.device_put(array, device) for array in call.arrays]
        twin = judgement.twin(lambda *held: call.function(*held, **call.kwargs), *arrays)
        actual = timed(call.function, *arrays, **call.kwargs)
        return actual, given.expected, twin

    judgement.run(samples, run_one, label=lambda pair: pair[0].describe())
    judgement.record(record_property, ORACLE)
