"""The TensorFlow census of its numeric API beyond tf.experimental.numpy (tf.math, tf.nn,
tf.linalg, tf.signal, tf.image, tf.bitwise and the top level) against NumPy, SciPy or a small
reference written below, on the framework-neutral inputs of runner/generator.py, one subtest per
function x dtype, through the same harness as the curated cases (`device`, `timed`).

TensorFlow ships no database of sample inputs (PyTorch's OpInfo, JAX's harnesses): what runs comes
from `mapped.yaml` beside this file, harvested from the hand-written, reviewable `mapping.yml`
(per TensorFlow function: the reference, the argument adapter, constant arguments, the input kinds;
every function no mapping covers is listed there with the reason). The harvest ran each reference
through its adapter on the generator's inputs to learn the dtypes and kinds it accepts; the census
holds TensorFlow to the reference on exactly those. TensorFlow's own kernel tests check the same
functions one op at a time against NumPy (tensorflow/python/kernel_tests/math_ops/cwise_ops_test.py,
cwise_ops_unary_test.py, cwise_ops_binary_test.py, reduction_ops_test.py, linalg/*_op_test.py,
signal/fft_ops_test.py, nn_ops/relu_op_test.py, image_ops_test.py), on hand-picked arrays.

An adapter says how a sample's host arrays become one call, the same for TensorFlow and the
reference: how many operands, how they are prepared on the host (a symmetric positive definite
matrix for cholesky, an [h, w, 3] image for the colour conversions, a sorted first operand for
searchsorted) and how they are passed (positionally, as one list, by keyword), followed by the
record's constant arguments (`args`, `kwargs`; compiled mode binds them as constants). A reference
written here implements TensorFlow's documented semantics where they differ from NumPy's defaults
(an integer reduce_mean truncates, argmax's axis) and refuses the inputs TensorFlow's
documentation excludes (unique of a matrix), so that a failure is TensorFlow's, not the mapping's.

Per sample: the prepared arrays are made tensors on the device and the function is called on them
through `timed`; the oracle is the reference on the same host arrays (oracle `numpy`, `scipy` or
`reference`). TensorFlow does not promote dtypes: where it refuses a dtype NumPy takes (tf.sin of
int8) the subtest fails with TensorFlow's own error, a result, not a skip. Results are judged with
the tolerance of the less precise of the output's and the reference's dtype (oracle.deviation);
NaN matches NaN.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf

from portability_data.runner.census_rows import CensusModule
from portability_data.runner.device_oracle import DeviceJudgement
from portability_data.runner.generator import Sample, sample
from portability_data.runner.oracle import NO_ORACLE

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests

Arrays = tuple[np.ndarray, ...]


class NotApplicable(ValueError):
    """An adapter cannot make this input into the function's arguments (a vector for a matrix
    function): the harvest does not list the kind for the function."""


# --------------------------------------------------------------------------- adapters


def _as_given(arrays: Arrays) -> Arrays:
    return arrays


def _rank_at_least(rank: int) -> Callable[[Arrays], Arrays]:
    def prepare(arrays: Arrays) -> Arrays:
        if any(a.ndim < rank for a in arrays):
            raise NotApplicable(f"needs rank >= {rank}")
        return arrays

    return prepare


def _square(arrays: Arrays) -> Arrays:
    if any(a.ndim < 2 or a.shape[-1] != a.shape[-2] for a in arrays):
        raise NotApplicable("needs square matrices")
    return arrays


def _wide(array: np.ndarray) -> np.ndarray:
    """An array as float64 or complex128 for host-side preparation."""
    return array.astype(np.complex128 if array.dtype.kind == "c" else np.float64)


def _spd(array: np.ndarray) -> np.ndarray:
    """A symmetric (Hermitian) positive definite matrix made of a square one: A A^H + n I."""
    wide = _wide(array)
    size = array.shape[-1]
    made = wide @ np.conj(np.swapaxes(wide, -1, -2)) + size * np.eye(size)
    return made.astype(array.dtype)


def _spd_first(arrays: Arrays) -> Arrays:
    _square(arrays[:1])
    return (_spd(arrays[0]), *arrays[1:])


def _hermitian(arrays: Arrays) -> Arrays:
    """A + A^H: what eigvalsh reads is then the whole matrix, whichever triangle it takes."""
    _square(arrays)
    (matrix,) = arrays
    return ((_wide(matrix) + np.conj(np.swapaxes(_wide(matrix), -1, -2))).astype(matrix.dtype),)


def _lower_first(arrays: Arrays) -> Arrays:
    """A well-conditioned lower triangular first operand (diagonal shifted by n), the second as is."""
    _square(arrays[:1])
    matrix, *rest = arrays
    size = matrix.shape[-1]
    lower = np.tril(_wide(matrix)) + size * np.eye(size)
    if matrix.ndim != 2 or any(r.ndim != 2 or r.shape[0] != size for r in rest):
        raise NotApplicable("needs an n x n matrix and an n x k right-hand side")
    return (lower.astype(matrix.dtype), *rest)


def _sorted_first(arrays: Arrays) -> Arrays:
    first, *rest = arrays
    if first.ndim != 1:
        raise NotApplicable("searchsorted's reference takes a sorted vector")
    return (np.sort(first), *rest)


def _bias(arrays: Arrays) -> Arrays:
    """A value of rank >= 2 and a bias vector of its last dimension (the second operand's first row)."""
    value, other = arrays
    if value.ndim < 2 or other.ndim < 2 or other.shape[-1] != value.shape[-1]:
        raise NotApplicable("needs rank >= 2 operands of one last dimension")
    return value, other.reshape(-1, other.shape[-1])[0]


def _image_of(channels: int, unit: bool = False) -> Callable[[Arrays], Arrays]:
    """Each operand as an [h, 1, channels] image (h = size / channels); `unit`: values in [0, 1]
    (|x| / 3 clipped: the generator's floats lie in [-3, 3]), as colour-space conversions need."""

    def prepare(arrays: Arrays) -> Arrays:
        made = []
        for array in arrays:
            if array.size == 0 or array.size % channels:
                raise NotApplicable(f"needs a size that is a multiple of {channels}")
            image = array.reshape(-1, 1, channels)
            if unit:
                if array.dtype.kind not in "f" and array.dtype.name != "bfloat16":
                    raise NotApplicable("colour conversions take floating images")
                image = np.clip(np.abs(image.astype(np.float64)) / 3, 0, 1).astype(array.dtype)
            made.append(image)
        return tuple(made)

    return prepare


def _same_shape(arrays: Arrays) -> Arrays:
    """Operands of one shape: the functions that document no broadcasting (losses, betainc)."""
    if any(a.shape != arrays[0].shape for a in arrays):
        raise NotApplicable("needs operands of one shape")
    return arrays


def _clip_bounds(arrays: Arrays) -> Arrays:
    """(x, lower, upper) with lower <= upper, as clip_by_value documents its bounds."""
    x, first, second = arrays
    if first.shape != second.shape or np.broadcast_shapes(x.shape, first.shape) != x.shape:
        raise NotApplicable("bounds must broadcast to the clipped tensor's shape")
    return x, np.minimum(first, second), np.maximum(first, second)


def _shift_counts(arrays: Arrays) -> Arrays:
    """(x, |y| mod bits): a shift by a negative count or by the width or more is implementation
    defined (TensorFlow's documentation), so the counts stay inside [0, bits)."""
    x, counts = arrays
    if x.dtype.kind not in "iu":
        return arrays  # TensorFlow refuses the dtype: left to fail
    bits = 8 * x.dtype.itemsize
    return x, (np.abs(counts.astype(np.int64)) % bits).astype(counts.dtype)


def _vector(arrays: Arrays) -> Arrays:
    if any(a.ndim != 1 for a in arrays):
        raise NotApplicable("needs vectors")
    return arrays


@dataclass(frozen=True)
class Adapter:
    """How a sample's arrays become one call, the same for TensorFlow and the reference: the number
    of operands, their preparation on the host, and how they are passed (positionally, as one list,
    or by keyword), the record's constant arguments after them."""

    arity: int
    prepare: Callable[[Arrays], Arrays] = _as_given
    as_list: bool = False
    keywords: tuple[str, ...] = ()

    def call(
        self, call: Callable[..., Any], function: Any, operands: list[Any], entry: dict[str, Any]
    ) -> Any:
        """`call(function, ...)` with the operands placed as this adapter passes them and the entry's
        constants (`prefix` before them, `args` and `kwargs` after); `call` is `timed` for
        TensorFlow, a plain call for the reference."""
        prefix, args = list(entry.get("prefix", [])), list(entry.get("args", []))
        kwargs = dict(entry.get("kwargs", {}))
        if self.as_list:
            return call(function, *prefix, list(operands), *args, **kwargs)
        if self.keywords:
            named = dict(zip(self.keywords, operands, strict=True))
            return call(function, *prefix, *args, **named, **kwargs)
        return call(function, *prefix, *operands, *args, **kwargs)


ADAPTERS: dict[str, Adapter] = {
    "unary": Adapter(1),
    "binary": Adapter(2),
    "ternary": Adapter(3),
    "ranked": Adapter(1, _rank_at_least(1)),
    "matrix": Adapter(1, _rank_at_least(2)),
    "matrix_binary": Adapter(2, _rank_at_least(2)),
    "square": Adapter(1, _square),
    "square_binary": Adapter(2, _square),
    "spd": Adapter(1, _spd_first),
    "spd_binary": Adapter(2, _spd_first),
    "hermitian": Adapter(1, _hermitian),
    "lower_binary": Adapter(2, _lower_first),
    "sorted_binary": Adapter(2, _sorted_first),
    "bias": Adapter(2, _bias),
    "vector": Adapter(1, _vector),
    "same_shape_binary": Adapter(2, _same_shape),
    "same_shape_ternary": Adapter(3, _same_shape),
    "clip_bounds": Adapter(3, _clip_bounds),
    "shift": Adapter(2, _shift_counts),
    "list": Adapter(2, as_list=True),
    "labels_logits": Adapter(2, _same_shape, keywords=("labels", "logits")),
    "image": Adapter(1, _image_of(3)),
    "unit_image": Adapter(1, _image_of(3, unit=True)),
    "image_pair": Adapter(2, _image_of(3)),
    "gray_image": Adapter(1, _image_of(1)),
}


# --------------------------------------------------------------------------- references

REFERENCES: dict[str, Callable[..., Any]] = {}


def reference(function: Callable[..., Any]) -> Callable[..., Any]:
    """Register a reference written here under its own name (mapping.yml names it bare)."""
    REFERENCES[function.__name__] = function
    return function


def _floating(x: np.ndarray) -> None:
    if x.dtype.kind not in "fc" and x.dtype.name != "bfloat16":
        raise NotApplicable("a floating-point function")


@reference
def sigmoid(x: np.ndarray) -> np.ndarray:
    _floating(x)
    import scipy.special

    return scipy.special.expit(x)


@reference
def log_sigmoid(x: np.ndarray) -> np.ndarray:
    _floating(x)
    return -np.logaddexp(np.zeros_like(x), -x)


@reference
def softplus(x: np.ndarray) -> np.ndarray:
    _floating(x)
    return np.logaddexp(np.zeros_like(x), x)


@reference
def softsign(x: np.ndarray) -> np.ndarray:
    _floating(x)
    return x / (1 + np.abs(x))


@reference
def rsqrt(x: np.ndarray) -> np.ndarray:
    _floating(x)
    return 1 / np.sqrt(x)


@reference
def relu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, np.zeros_like(x)) if x.dtype.kind != "c" else _refuse()


@reference
def relu6(x: np.ndarray) -> np.ndarray:
    return np.minimum(relu(x), np.asarray(6, x.dtype))


@reference
def elu(x: np.ndarray) -> np.ndarray:
    _floating(x)
    return np.where(x > 0, x, np.expm1(x))


@reference
def selu(x: np.ndarray) -> np.ndarray:
    """The published SELU constants (Klambauer et al. 2017), as TensorFlow documents them."""
    _floating(x)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    return scale * np.where(x > 0, x, alpha * np.expm1(x))


@reference
def gelu(x: np.ndarray) -> np.ndarray:
    """The exact GELU (approximate=False, TensorFlow's default): x * Phi(x)."""
    import scipy.special

    _floating(x)
    return 0.5 * x * (1 + scipy.special.erf(x / np.sqrt(2)))


@reference
def silu(x: np.ndarray) -> np.ndarray:
    return x * sigmoid(x)


@reference
def leaky_relu(x: np.ndarray) -> np.ndarray:
    """alpha 0.2, TensorFlow's default."""
    _floating(x)
    return np.where(x > 0, x, x * np.asarray(0.2, x.dtype))


@reference
def crelu(x: np.ndarray) -> np.ndarray:
    return np.concatenate([relu(x), relu(-x)], axis=-1)


def _refuse() -> Any:
    raise NotApplicable("outside the function's documented domain")


@reference
def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    _floating(x)
    if x.ndim == 0:
        _refuse()
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exp = np.exp(shifted)
    return exp / np.sum(exp, axis=axis, keepdims=True)


@reference
def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    import scipy.special

    _floating(x)
    if x.ndim == 0:
        _refuse()
    return x - scipy.special.logsumexp(x, axis=axis, keepdims=True)


@reference
def l2_loss(x: np.ndarray) -> np.ndarray:
    _floating(x)
    return np.sum(x * x) / 2


@reference
def l2_normalize(x: np.ndarray) -> np.ndarray:
    """x / sqrt(max(sum(|x|^2), 1e-12)) over the whole tensor (axis=None)."""
    _floating(x)
    squares = np.sum(np.abs(x) ** 2)
    return x / np.sqrt(np.maximum(squares, 1e-12))


@reference
def reduce_mean(x: np.ndarray) -> np.ndarray:
    """TensorFlow's mean keeps the input's dtype: an integer mean is the sum (wrapping in the dtype)
    divided with truncation."""
    if x.dtype.kind in "iu":
        total = np.sum(x, dtype=np.int64).astype(x.dtype).astype(np.int64)
        return np.asarray(np.trunc(total / max(x.size, 1)), dtype=x.dtype) if x.size else _refuse()
    if x.dtype.kind == "b":
        _refuse()
    return np.mean(x)


@reference
def reduce_euclidean_norm(x: np.ndarray) -> np.ndarray:
    _floating(x)
    return np.sqrt(np.sum(np.abs(x) ** 2))


@reference
def cumulative_logsumexp(x: np.ndarray, axis: int = -1) -> np.ndarray:
    _floating(x)
    return np.logaddexp.accumulate(x, axis=axis)


@reference
def argmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.argmax(x, axis=axis)


@reference
def argmin(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.argmin(x, axis=axis)


@reference
def argsort(x: np.ndarray) -> np.ndarray:
    """Ascending along the last axis, ties in index order (TensorFlow sorts with top_k, which keeps
    the lower index first)."""
    return np.argsort(x, axis=-1, kind="stable")


@reference
def top_k(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """k=1 along the last axis: the largest value and its first index (TensorFlow documents that
    the last axis must hold k values at least)."""
    if x.ndim == 0 or x.shape[-1] == 0:
        _refuse()
    order = np.argsort(-x.astype(np.float64) if x.dtype.kind != "c" else _refuse(), axis=-1, kind="stable")
    indices = order[..., :1]
    return np.take_along_axis(x, indices, axis=-1), indices.astype(np.int32)


@reference
def zero_fraction(x: np.ndarray) -> np.ndarray:
    return np.float32(np.mean(x == 0)) if x.size else _refuse()


@reference
def is_non_decreasing(x: np.ndarray) -> np.ndarray:
    return np.all(np.diff(x.ravel()) >= 0)


@reference
def is_strictly_increasing(x: np.ndarray) -> np.ndarray:
    return np.all(np.diff(x.ravel()) > 0)


@reference
def divide_no_nan(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(y == 0, np.zeros((), np.result_type(x, y)), x / np.where(y == 0, 1, y))


@reference
def reciprocal_no_nan(x: np.ndarray) -> np.ndarray:
    _floating(x)
    return divide_no_nan(np.ones_like(x), x)


@reference
def multiply_no_nan(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    _floating(x)
    return np.where(y == 0, np.zeros((), np.result_type(x, y)), x * y)


@reference
def xdivy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    _floating(x)
    return np.where(x == 0, np.zeros((), np.result_type(x, y)), x / y)


@reference
def truncatediv(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer division rounding toward zero (C's), integers only."""
    if x.dtype.kind not in "iu" or np.any(y == 0):
        _refuse()
    quotient = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
    return (np.sign(x.astype(np.int64)) * np.sign(y.astype(np.int64)) * quotient).astype(x.dtype)


@reference
def squared_difference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    difference = x - y
    return difference * np.conj(difference)


@reference
def lbeta(x: np.ndarray) -> np.ndarray:
    """log of the multivariate beta function over the last axis."""
    import scipy.special

    _floating(x)
    if x.ndim == 0:
        _refuse()
    return np.sum(scipy.special.gammaln(x), axis=-1) - scipy.special.gammaln(np.sum(x, axis=-1))


@reference
def fresnel_cos(x: np.ndarray) -> np.ndarray:
    import scipy.special

    return scipy.special.fresnel(x)[1]


@reference
def fresnel_sin(x: np.ndarray) -> np.ndarray:
    import scipy.special

    return scipy.special.fresnel(x)[0]


@reference
def add_n(values: list[np.ndarray]) -> np.ndarray:
    if any(v.shape != values[0].shape for v in values):
        _refuse()  # add_n adds tensors of one shape, it does not broadcast
    total = values[0]
    for value in values[1:]:
        total = total + value
    return total


@reference
def global_norm(values: list[np.ndarray]) -> np.ndarray:
    _floating(values[0])
    return np.sqrt(sum(np.sum(np.abs(v) ** 2) for v in values))


@reference
def euclidean_norm(x: np.ndarray) -> np.ndarray:
    """tf.norm's default: the 2-norm of the flattened tensor."""
    _floating(x)
    return np.sqrt(np.sum(np.abs(x) ** 2))


@reference
def normalize(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x / ||x||, ||x|| kept as a 1-sized array of x's rank)."""
    _floating(x)
    norm = euclidean_norm(x)
    return x / norm, np.reshape(norm, (1,) * x.ndim)


@reference
def make_complex(real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    if real.dtype not in (np.float32, np.float64):
        _refuse()
    return real + 1j * imag


@reference
def unstack(x: np.ndarray) -> list[np.ndarray]:
    if x.ndim == 0:
        _refuse()
    return [x[i] for i in range(x.shape[0])]


@reference
def unique(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values in order of first occurrence and each element's index into them (1-D only)."""
    if x.ndim != 1:
        _refuse()
    values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return values[order], rank[inverse].astype(np.int32)


@reference
def unique_with_counts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    values, index = unique(x)
    return values, index, np.bincount(index, minlength=values.size).astype(np.int32)


@reference
def cast(x: np.ndarray, dtype: str) -> np.ndarray:
    if x.dtype.kind == "c" and np.dtype(dtype).kind != "c":
        return np.real(x).astype(dtype)
    return x.astype(dtype)


@reference
def saturate_cast(x: np.ndarray, dtype: str) -> np.ndarray:
    """Clamped to the target's range before the cast (float32 target: +/-max)."""
    info = np.finfo(dtype)
    values = np.real(x) if x.dtype.kind == "c" else x
    return np.clip(values.astype(np.float64), info.min, info.max).astype(dtype)


@reference
def matrix_transpose(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


@reference
def adjoint(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


@reference
def matrix_diag(x: np.ndarray) -> np.ndarray:
    """A batch of diagonal matrices from the last axis."""
    if x.ndim == 0:
        _refuse()
    out = np.zeros((*x.shape, x.shape[-1]), dtype=x.dtype)
    index = np.arange(x.shape[-1])
    out[..., index, index] = x
    return out


@reference
def diag_part(x: np.ndarray) -> np.ndarray:
    return np.diagonal(x, axis1=-2, axis2=-1)


@reference
def trace(x: np.ndarray) -> np.ndarray:
    return np.trace(x, axis1=-2, axis2=-1)


@reference
def tensor_diag(x: np.ndarray) -> np.ndarray:
    """Rank k -> rank 2k with x on the diagonal."""
    if x.ndim == 0:
        _refuse()
    return np.diagflat(x).reshape(x.shape + x.shape)


@reference
def tensor_diag_part(x: np.ndarray) -> np.ndarray:
    if x.ndim != 2 or x.shape[0] != x.shape[1]:
        _refuse()
    return np.diagonal(x)


@reference
def band_part(x: np.ndarray, lower: int, upper: int) -> np.ndarray:
    return np.triu(np.tril(x, upper), -lower)


@reference
def logdet(x: np.ndarray) -> np.ndarray:
    return np.linalg.slogdet(x)[1]


@reference
def lstsq(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    if matrix.ndim != 2 or rhs.ndim != 2:
        _refuse()
    return np.linalg.lstsq(matrix, rhs, rcond=None)[0]


@reference
def matvec(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(a, b[..., None])[..., 0]


@reference
def triangular_solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    import scipy.linalg

    return scipy.linalg.solve_triangular(matrix, rhs, lower=True)


@reference
def cholesky_solve(chol: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The solution of (L L^H) x = rhs, L the lower Cholesky factor given."""
    return np.linalg.solve(chol @ np.conj(np.swapaxes(chol, -1, -2)), rhs)


@reference
def expm(x: np.ndarray) -> np.ndarray:
    import scipy.linalg

    _floating(x)
    return scipy.linalg.expm(x)


@reference
def sqrtm(x: np.ndarray) -> np.ndarray:
    import scipy.linalg

    _floating(x)
    return scipy.linalg.sqrtm(x)


@reference
def logm(x: np.ndarray) -> np.ndarray:
    import scipy.linalg

    if x.dtype.kind != "c":
        _refuse()  # TensorFlow's logm takes complex matrices only
    return scipy.linalg.logm(x)


@reference
def dct(x: np.ndarray) -> np.ndarray:
    """The type-II DCT of the last axis, unnormalised (TensorFlow's default, scipy's norm=None)."""
    import scipy.fft

    _floating(x)
    return scipy.fft.dct(x, type=2, axis=-1)


@reference
def idct(x: np.ndarray) -> np.ndarray:
    """TensorFlow's idct with norm=None is the unnormalised type-III DCT (it documents the missing
    0.5/N scale)."""
    import scipy.fft

    _floating(x)
    return scipy.fft.dct(x, type=3, axis=-1)


@reference
def moments(x: np.ndarray, axes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    _floating(x)
    return np.mean(x, axis=tuple(axes)), np.var(x, axis=tuple(axes))


@reference
def sufficient_statistics(x: np.ndarray, axes: list[int], shift: float) -> tuple[Any, ...]:
    """(count, sum and sum of squares of x - shift, shift) over the axes."""
    _floating(x)
    count = np.prod([x.shape[a] for a in axes])
    shifted = x - np.asarray(shift, x.dtype)
    sums = np.sum(shifted, axis=tuple(axes)), np.sum(shifted * shifted, axis=tuple(axes))
    return np.asarray(count, x.dtype), *sums, np.asarray(shift, x.dtype)


@reference
def bias_add(value: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return value + bias


@reference
def sigmoid_cross_entropy_with_logits(labels: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """The numerically stable form TensorFlow documents: max(x, 0) - x z + log(1 + exp(-|x|))."""
    _floating(logits)
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


@reference
def softmax_cross_entropy_with_logits(labels: np.ndarray, logits: np.ndarray) -> np.ndarray:
    return -np.sum(labels * log_softmax(logits), axis=-1)


@reference
def log_poisson_loss(targets: np.ndarray, log_input: np.ndarray) -> np.ndarray:
    _floating(log_input)
    return np.exp(log_input) - log_input * targets


@reference
def compute_average_loss(per_example_loss: np.ndarray) -> np.ndarray:
    """The sum over the global batch size (the first dimension, one replica)."""
    _floating(per_example_loss)
    if per_example_loss.ndim == 0 or per_example_loss.shape[0] == 0:
        _refuse()
    return np.sum(per_example_loss) / per_example_loss.shape[0]


@reference
def sum_all(x: np.ndarray) -> np.ndarray:
    _floating(x)
    return np.sum(x)


@reference
def clip_by_norm(x: np.ndarray, clip_norm: float) -> np.ndarray:
    _floating(x)
    norm = np.sqrt(np.sum(np.abs(x) ** 2))
    return x * clip_norm / max(norm, clip_norm)


RGB_TO_GRAY = (0.2989, 0.5870, 0.1140)  # TensorFlow's documented weights
# TensorFlow's colour-space kernels (image_ops_impl), the published YIQ and YUV coefficients
RGB_TO_YIQ = (
    (0.299, 0.59590059, 0.2115),
    (0.587, -0.27455667, -0.52273617),
    (0.114, -0.32134392, 0.31119955),
)
YIQ_TO_RGB = ((1, 1, 1), (0.95598634, -0.27201283, -1.10674021), (0.6208248, -0.64720424, 1.70423049))
RGB_TO_YUV = (
    (0.299, -0.14714119, 0.61497538),
    (0.587, -0.28886916, -0.51496512),
    (0.114, 0.43601035, -0.10001026),
)
YUV_TO_RGB = ((1, 1, 1), (0, -0.394642334, 2.03206185), (1.13988303, -0.58062185, 0))


def _colour(image: np.ndarray, kernel: Any) -> np.ndarray:
    _floating(image)
    return image @ np.asarray(kernel, dtype=image.dtype)


@reference
def rgb_to_yiq(image: np.ndarray) -> np.ndarray:
    return _colour(image, RGB_TO_YIQ)


@reference
def yiq_to_rgb(image: np.ndarray) -> np.ndarray:
    return _colour(image, YIQ_TO_RGB)


@reference
def rgb_to_yuv(image: np.ndarray) -> np.ndarray:
    return _colour(image, RGB_TO_YUV)


@reference
def yuv_to_rgb(image: np.ndarray) -> np.ndarray:
    return _colour(image, YUV_TO_RGB)


@reference
def rgb_to_grayscale(image: np.ndarray) -> np.ndarray:
    _floating(image)
    return (image @ np.asarray(RGB_TO_GRAY, dtype=np.float64))[..., None].astype(image.dtype)


@reference
def grayscale_to_rgb(image: np.ndarray) -> np.ndarray:
    return np.concatenate([image] * 3, axis=-1)


@reference
def rgb_to_hsv(image: np.ndarray) -> np.ndarray:
    import matplotlib.colors

    _floating(image)
    return matplotlib.colors.rgb_to_hsv(image.astype(np.float64)).astype(image.dtype)


@reference
def hsv_to_rgb(image: np.ndarray) -> np.ndarray:
    import matplotlib.colors

    _floating(image)
    return matplotlib.colors.hsv_to_rgb(image.astype(np.float64)).astype(image.dtype)


@reference
def flip_left_right(image: np.ndarray) -> np.ndarray:
    return np.flip(image, axis=-2)


@reference
def flip_up_down(image: np.ndarray) -> np.ndarray:
    return np.flip(image, axis=-3)


@reference
def transpose_image(image: np.ndarray) -> np.ndarray:
    return np.swapaxes(image, -3, -2)


@reference
def rot90_image(image: np.ndarray) -> np.ndarray:
    return np.rot90(image, 1, axes=(-3, -2))


@reference
def adjust_brightness(image: np.ndarray, delta: float) -> np.ndarray:
    _floating(image)
    return image + np.asarray(delta, image.dtype)


@reference
def adjust_contrast(image: np.ndarray, factor: float) -> np.ndarray:
    """(x - mean) * factor + mean, the mean per channel over height and width."""
    _floating(image)
    mean = np.mean(image, axis=(-3, -2), keepdims=True)
    return (image - mean) * np.asarray(factor, image.dtype) + mean


@reference
def adjust_gamma(image: np.ndarray) -> np.ndarray:
    """gamma 1, gain 1 (the defaults): the image itself, in its dtype."""
    _floating(image)
    return image ** np.asarray(1, image.dtype)


@reference
def per_image_standardization(image: np.ndarray) -> np.ndarray:
    """(x - mean) / max(stddev, 1 / sqrt(N)) over the whole image."""
    _floating(image)
    adjusted = max(np.std(image), 1 / np.sqrt(image.size))
    return (image - np.mean(image)) / adjusted


@reference
def total_variation(image: np.ndarray) -> np.ndarray:
    _floating(image)
    return np.sum(np.abs(np.diff(image, axis=-3))) + np.sum(np.abs(np.diff(image, axis=-2)))


@reference
def psnr(a: np.ndarray, b: np.ndarray, max_val: float) -> np.ndarray:
    _floating(a)
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return np.float32(20 * np.log10(max_val) - 10 * np.log10(mse))


@reference
def central_crop(image: np.ndarray, fraction: float) -> np.ndarray:
    height, width = image.shape[-3], image.shape[-2]
    top = int((height - height * fraction) / 2)
    left = int((width - width * fraction) / 2)
    return image[..., top : height - top, left : width - left, :]


@reference
def pad_one(x: np.ndarray) -> np.ndarray:
    """One zero on each side of every axis."""
    return np.pad(x, [(1, 1)] * x.ndim)


# --------------------------------------------------------------------------- the test


def resolve(name: str) -> Any:
    """A dotted name (tensorflow.math.sin, numpy.linalg.det, scipy.special.erf) or a reference
    written here (a bare name)."""
    if "." not in name:
        return REFERENCES[name]
    head, _, attribute = name.rpartition(".")
    found: Any = importlib.import_module(head.split(".")[0])
    for part in head.split(".")[1:]:
        try:
            found = getattr(found, part)
        except AttributeError:
            found = importlib.import_module(f"{found.__name__}.{part}")
    return getattr(found, attribute)


def oracle_name(reference_name: str) -> str:
    """numpy, scipy, or reference (written here), by where the reference lives."""
    root = reference_name.split(".")[0]
    return root if root in ("numpy", "scipy") else "reference"


def reference_call(entry: dict[str, Any]) -> Callable[..., Any]:
    """The reference as the harvest and the oracle call it: the entry's arrays prepared and passed
    by its adapter, its constant arguments after them."""
    adapter, function = ADAPTERS[entry["adapter"]], resolve(entry["reference"])

    def call(*arrays: np.ndarray) -> Any:
        prepared = adapter.prepare(tuple(arrays))
        return adapter.call(lambda f, *a, **k: f(*a, **k), function, [a.copy() for a in prepared], entry)

    return call


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    name, dtype_name = census_pair
    entry = CENSUS.entries[name]
    kinds = CENSUS.samples(entry["kinds"][dtype_name], timed.mode)
    adapter = ADAPTERS[entry["adapter"]]
    function, expected_of = resolve(entry["function"]), reference_call(entry)

    def run_one(given: Sample) -> tuple[Any, Any, Any]:
        host = adapter.prepare(given.args)
        with tf.device(device):
            on_device = [tf.constant(array) for array in host]
        twin = judgement.twin(lambda *arrays: adapter.call(_untimed, function, [*arrays], entry), *on_device)
        actual = adapter.call(timed, function, on_device, entry)
        return actual, _expected(expected_of, given.args), twin

    judgement = DeviceJudgement(CENSUS.tolerances, timed)
    judgement.run(
        [sample(name, dtype_name, kind, adapter.arity) for kind in kinds],
        run_one,
        label=lambda given: f"input {given.describe()}",
    )
    judgement.record(record_property, oracle_name(entry["reference"]))


def _untimed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The adapter's call without the timer: the host CPU's twin of the same call."""
    return fn(*args, **kwargs)


def _expected(expected_of: Callable[..., Any], arrays: Arrays) -> Any:
    """The reference's result on the same host arrays; NO_ORACLE where it now refuses them (the
    manifest said it takes them: a NumPy or SciPy upgrade, not a TensorFlow failure)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return expected_of(*arrays)
    except Exception:
        return NO_ORACLE
