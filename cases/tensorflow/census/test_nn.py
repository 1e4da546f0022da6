"""The TensorFlow census of its neural-network ops (tf.nn, tf.keras.layers, tf.keras.losses) on
PyTorch's own samples of the op torch users call for the same thing, held to PyTorch's CPU result
of the same sample (oracle `torch_cpu`: no NumPy reference exists for convolution, pooling,
attention or recurrent cells), one subtest per op x dtype, through the same harness as the curated
cases (`device`, `timed`). Issue 60.

What runs comes from `nn.yaml` beside this file, harvested (`portability census-harvest --nn`)
from the reviewed mapping cases/nn_ops.yml: per torch op, the TensorFlow function, the adapter
below that makes a torch sample its call, and the conventions each adapter follows with their
documentation (NCHW -> NHWC, OIHW -> HWIO, torch's explicit padding as host-side padding and
'VALID', weights transposed into Keras's kernels, gate orders). Ops TensorFlow has no counterpart
for are listed in the manifest with the reason.

Per sample (runner/nn_samples.py: upstream's OpInfo / ModuleInfo samples on the CPU, seeded): the
adapter refuses what the TensorFlow function cannot express or its documentation excludes (the
sample is not one of the entry's: not counted), prepares the host arrays (layout transposes,
padding), and names the function with its constant arguments; the arrays are made tensors on the
device and the call runs through `timed`; layout is restored inside the call (a transpose, exact).
The result is held to the torch CPU result at the tolerance of the less precise dtype
(oracle.deviation), NaN matching NaN; off the host CPU, to the host's result as well
(runner/device_oracle.py). A TensorFlow error is the subtest's failure, as itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tensorflow as tf

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
    """One sample as a TensorFlow call: the host arrays (made tensors on the device), the function
    (made under the device: a Keras layer builds its weights there) and its constant arguments."""

    arrays: tuple[np.ndarray, ...]
    make: Callable[[], Callable[..., Any]]
    kwargs: dict[str, Any] = field(default_factory=dict)


def _plain(fn: Callable[..., Any]) -> Callable[[], Callable[..., Any]]:
    return lambda: fn


def _batched(x: np.ndarray, rank: int) -> tuple[np.ndarray, bool]:
    """torch takes an unbatched (C, spatial...) input; TensorFlow's ops want the batch axis."""
    if x.ndim == rank + 1:
        return x[None], True
    if x.ndim != rank + 2:
        raise NotApplicable(f"rank {x.ndim} input for {rank} spatial dimensions")
    return x, False


def _channels_last(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(x, 1, -1))


def _channels_first(y: Any, bias: Any, unbatched: bool) -> Any:
    """NHWC result -> torch's NCHW (bias added on the channel axis first), unbatched again."""
    if bias is not None:
        y = tf.nn.bias_add(y, bias)
    rank = len(y.shape)
    y = tf.transpose(y, [0, rank - 1, *range(1, rank - 1)])
    return y[0] if unbatched else y


def _pad(x: np.ndarray, padding: tuple[int, ...], value: float) -> np.ndarray:
    """torch's implicit padding of the spatial axes (zeros; -inf for max pooling) on the host."""
    return np.pad(x, [(0, 0), (0, 0), *((p, p) for p in padding)], constant_values=value)


# --------------------------------------------------------------------------- convolution, pooling


def _conv_call(
    x: Any, w: Any, *bias: Any, rank: int, strides: Any, padding: str, dilations: Any, unbatched: bool
) -> Any:
    if rank == 1:
        y = tf.nn.conv1d(x, w, stride=list(strides), padding=padding, dilations=list(dilations))
    else:
        y = tf.nn.conv2d(x, w, strides=list(strides), padding=padding, dilations=list(dilations))
    return _channels_first(y, bias[0] if bias else None, unbatched)


def conv(sample: NnSample, dtype: str, rank: int) -> Call:
    """torch NC(H)W input, O I/g k.. weight -> N(H)WC, k.. I/g O (HWIO); groups implied by the
    filter's input channels (tf.nn.conv2d); explicit padding as zeros on the host, then 'VALID'."""
    x, unbatched = _batched(sample.input, rank)
    padding = sample["padding"]
    if isinstance(padding, str):
        mode = padding.upper()
    else:
        x, mode = _pad(x, as_tuple(padding, rank), 0), "VALID"
    w = np.ascontiguousarray(np.transpose(sample["weight"], (*range(2, 2 + rank), 1, 0)))
    bias = () if sample["bias"] is None else (sample["bias"],)
    kwargs = dict(
        rank=rank,
        strides=as_tuple(sample["stride"], rank),
        padding=mode,
        dilations=as_tuple(sample["dilation"], rank),
        unbatched=unbatched,
    )
    return Call((_channels_last(x), w, *bias), _plain(_conv_call), kwargs)


def _pool_call(x: Any, *, kind: str, rank: int, ksize: Any, strides: Any, unbatched: bool) -> Any:
    pools = {
        ("max", 1): tf.nn.max_pool1d,
        ("max", 2): tf.nn.max_pool2d,
        ("avg", 1): tf.nn.avg_pool1d,
        ("avg", 2): tf.nn.avg_pool2d,
    }
    y = pools[(kind, rank)](x, ksize=list(ksize), strides=list(strides), padding="VALID")
    return _channels_first(y, None, unbatched)


def max_pool(sample: NnSample, dtype: str, rank: int) -> Call:
    """torch's padding as -inf on the host, then 'VALID'; tf.nn.max_pool has no dilation."""
    window = pool_window(sample, rank)
    sample.refuse_if(any(d != 1 for d in window.dilation), "tf.nn.max_pool takes no dilation")
    x, unbatched = _batched(sample.input, rank)
    x = _pad(x, window.padding, -np.inf)
    kwargs = dict(kind="max", rank=rank, ksize=window.kernel, strides=window.stride, unbatched=unbatched)
    return Call((_channels_last(x),), _plain(_pool_call), kwargs)


def avg_pool(sample: NnSample, dtype: str, rank: int) -> Call:
    """count_include_pad (torch's default): zeros on the host count in every window, as 'VALID'
    pooling of the padded input counts them; padding left out of the count and a divisor override
    have no TensorFlow argument."""
    window = pool_window(sample, rank)
    sample.refuse_if(sample["divisor_override"] is not None, "no divisor override in tf.nn.avg_pool")
    sample.refuse_if(
        not sample["count_include_pad"] and any(window.padding),
        "padding left out of the average: no tf.nn.avg_pool argument",
    )
    x, unbatched = _batched(sample.input, rank)
    x = _pad(x, window.padding, 0)
    kwargs = dict(kind="avg", rank=rank, ksize=window.kernel, strides=window.stride, unbatched=unbatched)
    return Call((_channels_last(x),), _plain(_pool_call), kwargs)


# --------------------------------------------------------------------------- normalisation


def _batch_norm_call(x: Any, mean: Any, var: Any, *affine: Any, eps: float, parts: tuple[str, ...]) -> Any:
    named = dict(zip(parts, affine))
    return tf.nn.batch_normalization(x, mean, var, named.get("bias"), named.get("weight"), eps)


def batch_norm(sample: NnSample, dtype: str) -> Call:
    """Inference mode (training=False: the running statistics); the per-channel vectors reshaped
    to broadcast over torch's channel axis 1 (tf.nn.batch_normalization broadcasts any layout)."""
    sample.refuse_if(bool(sample["training"]), "training mode: batch statistics, running stats updated")
    x = sample.input
    sample.refuse_if(x.ndim < 2, "needs a channel axis")
    shape = (x.shape[1],) + (1,) * (x.ndim - 2)
    parts = tuple(p for p in ("weight", "bias") if sample[p] is not None)
    arrays = (x, sample["running_mean"], sample["running_var"], *(sample[p] for p in parts))
    arrays = (x, *(a.reshape(shape) for a in arrays[1:]))
    return Call(arrays, _plain(_batch_norm_call), dict(eps=float(sample["eps"]), parts=parts))


def layer_norm(sample: NnSample, dtype: str) -> Call:
    """tf.keras.layers.LayerNormalization over the last len(normalized_shape) axes, its gamma and
    beta set to torch's weight and bias."""
    x, count = sample.input, len(sample["normalized_shape"])
    weight, bias = sample["weight"], sample["bias"]

    def make() -> Callable[..., Any]:
        layer = tf.keras.layers.LayerNormalization(
            axis=list(range(-count, 0)),
            epsilon=float(sample["eps"]),
            center=bias is not None,
            scale=weight is not None,
            dtype=dtype,
        )
        layer.build(x.shape)
        if weight is not None:
            layer.gamma.assign(weight)
        if bias is not None:
            layer.beta.assign(bias)
        return lambda t: layer(t)

    return Call((x,), make)


# --------------------------------------------------------------------------- activations


def softmax(function: Callable[..., Any]) -> Callable[[NnSample, str], Call]:
    def adapt(sample: NnSample, dtype: str) -> Call:
        sample.refuse_if(sample["dtype"] is not None, "a dtype argument: no TensorFlow counterpart")
        return Call((sample.input,), _plain(function), dict(axis=int(sample["dim"])))

    return adapt


def unary(function: Callable[..., Any]) -> Callable[[NnSample, str], Call]:
    return lambda sample, dtype: Call((sample.input,), _plain(function))


def gelu(sample: NnSample, dtype: str) -> Call:
    """torch approximate='none' / 'tanh' -> approximate=False / True."""
    return Call((sample.input,), _plain(tf.nn.gelu), dict(approximate=sample["approximate"] == "tanh"))


def leaky_relu(sample: NnSample, dtype: str) -> Call:
    """torch's negative_slope (default 0.01) passed as alpha: tf.nn.leaky_relu's default is 0.2."""
    return Call((sample.input,), _plain(tf.nn.leaky_relu), dict(alpha=float(sample["negative_slope"])))


# --------------------------------------------------------------------------- attention


def attention(sample: NnSample, dtype: str) -> Call:
    """tf.keras.layers.Attention (dot-product scores, use_scale's scale set to torch's 1/sqrt(E) or
    the sample's scale, use_causal_mask: top-left aligned as torch's is_causal) on [batch, T, E];
    torch's [B, heads, T, E] folded to [B * heads, T, E] and back. Dropout, an additive mask and
    grouped-query attention have no counterpart argument."""
    q, k, v = sample.input, sample["key"], sample["value"]
    sample.refuse_if(float(sample["dropout_p"]) > 0, "dropout_p > 0 draws random numbers")
    sample.refuse_if(sample["attn_mask"] is not None, "torch's additive mask: Keras takes a boolean one")
    sample.refuse_if(bool(sample["enable_gqa"]), "grouped-query attention")
    sample.refuse_if(not q.ndim == k.ndim == v.ndim or q.ndim not in (3, 4), "operands of one rank, 3 or 4")
    out_shape = (*q.shape[:-1], v.shape[-1])
    q, k, v = (a.reshape(-1, *a.shape[-2:]) for a in (q, k, v))
    scale = float(sample["scale"]) if sample["scale"] is not None else float(q.shape[-1]) ** -0.5
    causal = bool(sample["is_causal"])

    def make() -> Callable[..., Any]:
        layer = tf.keras.layers.Attention(use_scale=True, dtype=dtype)
        layer.build([q.shape, v.shape, k.shape])
        layer.scale.assign(scale)
        return lambda tq, tk, tv: tf.reshape(layer([tq, tv, tk], use_causal_mask=causal), out_shape)

    return Call((q, k, v), make)


# --------------------------------------------------------------------------- losses


def _reduced(loss: Any, reduction: str) -> Any:
    return {"mean": tf.reduce_mean, "sum": tf.reduce_sum}.get(reduction, lambda t: t)(loss)


def _sparse_cross_entropy(logits: Any, labels: Any, *, reduction: str) -> Any:
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return _reduced(loss, reduction)


def cross_entropy(sample: NnSample, dtype: str) -> Call:
    """Class-index targets: the class axis (torch's 1) moved last, torch's reduction applied to the
    per-element losses. Probability targets are another TensorFlow function
    (softmax_cross_entropy_with_logits); class weights, ignore_index and label smoothing have no
    argument."""
    x, target = sample.input, sample["target"]
    sample.refuse_if(target.dtype.kind == "f", "probability targets: tf.nn.softmax_cross_entropy_with_logits")
    sample.refuse_if(sample["weight"] is not None, "class weights")
    sample.refuse_if(sample["ignore_index"] != -100, "ignore_index")
    sample.refuse_if(float(sample["label_smoothing"]) != 0, "label smoothing")
    logits = _channels_last(x) if x.ndim >= 2 else x
    return Call((logits, target), _plain(_sparse_cross_entropy), dict(reduction=sample["reduction"]))


def keras_loss(name: str) -> Callable[[NnSample, str], Call]:
    """tf.keras.losses.<name> (y_true, y_pred) with its default reduction (the mean of the per-row
    means over the last axis: torch's mean for equal rows); torch's 'sum' and 'none' are not that
    reduction, and Keras documents a batch axis (no 0-d input)."""

    def adapt(sample: NnSample, dtype: str) -> Call:
        sample.refuse_if(sample["reduction"] != "mean", f"reduction {sample['reduction']!r}")
        sample.refuse_if(sample.input.ndim == 0, "Keras losses take [batch, ...] inputs")

        def make() -> Callable[..., Any]:
            loss = getattr(tf.keras.losses, name)(dtype=dtype)
            return lambda prediction, target: loss(target, prediction)

        return Call((sample.input, sample["target"]), make)

    return adapt


# --------------------------------------------------------------------------- embedding, linear, dropout


def embedding(sample: NnSample, dtype: str) -> Call:
    """OpInfo's sample input is the table, its first argument the indices; max_norm renormalises
    torch's weight in place (no counterpart); padding_idx, sparse and scale_grad_by_freq change only
    gradients."""
    sample.refuse_if(sample["max_norm"] is not None, "max_norm renormalises the table in place")
    return Call((sample.input, sample["indices"]), _plain(tf.nn.embedding_lookup))


def _keras_layer(
    layer_of: Callable[[], Any], shape: Any, assign: dict[str, np.ndarray], **call: Any
) -> Callable[[], Callable[..., Any]]:
    def make() -> Callable[..., Any]:
        layer = layer_of()
        layer.build(shape)
        for attribute, value in assign.items():
            getattr(layer, attribute).assign(value)
        return lambda *tensors: layer(*tensors, **call)

    return make


def linear(sample: NnSample, dtype: str) -> Call:
    """tf.keras.layers.Dense: torch's weight [out, in] is Keras's kernel transposed [in, out];
    Dense documents rank >= 2 inputs."""
    x, w, b = sample.input, sample["weight"], sample["bias"]
    sample.refuse_if(x.ndim < 2, "Dense takes (batch, ..., input_dim)")
    assign = {"kernel": np.ascontiguousarray(w.T), **({"bias": b} if b is not None else {})}
    layer = lambda: tf.keras.layers.Dense(w.shape[0], use_bias=b is not None, dtype=dtype)  # noqa: E731
    return Call((x,), _keras_layer(layer, (None, w.shape[1]), assign))


def dropout(sample: NnSample, dtype: str) -> Call:
    """Dropout in inference (training=False): tf.keras.layers.Dropout(rate)(x, training=False)."""
    sample.refuse_if(bool(sample["training"]), "training mode draws random numbers")
    layer = lambda: tf.keras.layers.Dropout(float(sample["p"]), dtype=dtype)  # noqa: E731
    return Call((sample.input,), _keras_layer(layer, sample.input.shape, {}, training=False))


# --------------------------------------------------------------------------- recurrent cells


def _gru_gates(matrix: np.ndarray) -> np.ndarray:
    """torch's gate blocks (reset, update, new) -> Keras's (update, reset, new), on axis 0."""
    r, z, n = np.split(matrix, 3, axis=0)
    return np.concatenate([z, r, n], axis=0)


def cell(kind: str) -> Callable[[NnSample, str], Call]:
    """tf.keras.layers.LSTMCell / GRUCell with torch's weights: kernels transposed ([in, gates]);
    LSTM gates i, f, g, o in both, one bias b_ih + b_hh; GRU reset_after=True (torch's form: the
    reset gate applied after the recurrent matmul), gates reordered, biases [input; recurrent]."""

    def adapt(sample: NnSample, dtype: str) -> Call:
        weights, x = sample.weights, sample.input
        hidden = weights["weight_hh"].shape[1]
        unbatched = x.ndim == 1
        batch = 1 if unbatched else x.shape[0]
        zeros = np.zeros((batch, hidden), x.dtype)
        hx = sample["hx"]
        states = tuple(hx) if isinstance(hx, tuple) else (hx,) if hx is not None else ()
        states = tuple(s[None] if unbatched else s for s in states)
        has_bias = "bias_ih" in weights
        if kind == "LSTMCell":
            states = states or (zeros, zeros)
            assign = {"kernel": weights["weight_ih"].T, "recurrent_kernel": weights["weight_hh"].T}
            if has_bias:
                assign["bias"] = weights["bias_ih"] + weights["bias_hh"]
            layer = lambda: tf.keras.layers.LSTMCell(hidden, use_bias=has_bias, dtype=dtype)  # noqa: E731
        else:
            states = states or (zeros,)
            assign = {
                "kernel": _gru_gates(weights["weight_ih"]).T,
                "recurrent_kernel": _gru_gates(weights["weight_hh"]).T,
            }
            if has_bias:
                assign["bias"] = np.stack([_gru_gates(weights["bias_ih"]), _gru_gates(weights["bias_hh"])])
            layer = lambda: tf.keras.layers.GRUCell(hidden, use_bias=has_bias, reset_after=True, dtype=dtype)  # noqa: E731
        assign = {k: np.ascontiguousarray(v) for k, v in assign.items()}

        def make() -> Callable[..., Any]:
            built = layer()
            built.build((None, x.shape[-1]))
            for attribute, value in assign.items():
                getattr(built, attribute).assign(value)

            def call(inputs: Any, *state: Any) -> Any:
                _, new = built(inputs, list(state))
                new = tuple(s[0] if unbatched else s for s in new)
                return new if kind == "LSTMCell" else new[0]

            return call

        return Call((x[None] if unbatched else x, *states), make)

    return adapt


ADAPTERS: dict[str, Callable[[NnSample, str], Call]] = {
    "conv1d": lambda s, d: conv(s, d, 1),
    "conv2d": lambda s, d: conv(s, d, 2),
    "max_pool1d": lambda s, d: max_pool(s, d, 1),
    "max_pool2d": lambda s, d: max_pool(s, d, 2),
    "avg_pool1d": lambda s, d: avg_pool(s, d, 1),
    "avg_pool2d": lambda s, d: avg_pool(s, d, 2),
    "batch_norm": batch_norm,
    "layer_norm": layer_norm,
    "relu": unary(tf.nn.relu),
    "sigmoid": unary(tf.math.sigmoid),
    "tanh": unary(tf.math.tanh),
    "silu": unary(tf.nn.silu),
    "elu": unary(tf.nn.elu),
    "leaky_relu": leaky_relu,
    "gelu": gelu,
    "softmax": softmax(tf.nn.softmax),
    "log_softmax": softmax(tf.nn.log_softmax),
    "attention": attention,
    "cross_entropy": cross_entropy,
    "mse_loss": keras_loss("MeanSquaredError"),
    "l1_loss": keras_loss("MeanAbsoluteError"),
    "embedding": embedding,
    "linear": linear,
    "dropout": dropout,
    "lstm_cell": cell("LSTMCell"),
    "gru_cell": cell("GRUCell"),
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
        with tf.device(device):
            tensors = [tf.constant(array) for array in call.arrays]
            function = call.make()
        twin = judgement.twin(lambda *arrays: function(*arrays, **call.kwargs), *tensors)
        actual = timed(function, *tensors, **call.kwargs)
        return actual, given.expected, twin

    judgement.run(samples, run_one, label=lambda pair: pair[0].describe())
    judgement.record(record_property, ORACLE)
