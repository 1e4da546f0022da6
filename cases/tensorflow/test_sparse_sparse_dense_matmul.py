"""tf.sparse.sparse_dense_matmul: SparseTensor x dense products against a NumPy sum over stored entries."""

import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf


def _sparse(shape: tuple[int, int], density: float, dtype: np.dtype, seed: int = 0):
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal(shape) * (rng.random(shape) < density)
    if np.issubdtype(dtype, np.complexfloating):
        dense = dense + 1j * dense * rng.standard_normal(shape)
    dense = dense.astype(dtype)
    indices = np.argwhere(dense != 0).astype(np.int64)
    return indices, dense[tuple(indices.T)], dense


def _reference(indices, values, shape, b, adjoint_a=False, adjoint_b=False) -> np.ndarray:
    """Only the stored entries multiply: out[i] += v * b[k] for each stored a[i, k]."""
    b = np.conj(b.T) if adjoint_b else b
    rows, cols = indices[:, 0], indices[:, 1]
    if adjoint_a:
        rows, cols, values = cols, rows, np.conj(values)
        shape = shape[::-1]
    out = np.zeros((shape[0], b.shape[1]), np.result_type(values, b, np.float64))
    np.add.at(out, rows, values[:, None].astype(out.dtype) * b[cols].astype(out.dtype))
    return out


def _matmul(indices, values, b, shape, adjoint_a=False, adjoint_b=False):
    sp = tf.sparse.SparseTensor(indices, values, shape)
    return tf.sparse.sparse_dense_matmul(sp, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


TOL = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 5e-3, ml_dtypes.bfloat16: 5e-2, np.complex64: 1e-5,
       np.complex128: 1e-12, np.int32: 0, np.int64: 0}  # fmt: skip


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: np.dtype(d).name)
def test_sparse_dense_matmul_dtypes(device, timed, dtype):
    if np.issubdtype(dtype, np.integer):
        rng = np.random.default_rng(0)
        dense = (rng.integers(-5, 6, (6, 7)) * (rng.random((6, 7)) < 0.4)).astype(dtype)
        indices = np.argwhere(dense != 0).astype(np.int64)
        values = dense[tuple(indices.T)]
        b = rng.integers(-5, 6, (7, 3)).astype(dtype)
    else:
        indices, values, dense = _sparse((6, 7), 0.4, dtype)
        b = _sparse((7, 3), 1.0, dtype, seed=1)[2]
    out = timed(_matmul, tf.constant(indices), tf.constant(values), tf.constant(b), (6, 7))
    assert out.dtype == tf.as_dtype(dtype) and tuple(out.shape) == (6, 3)
    wide = np.complex128 if np.issubdtype(dtype, np.complexfloating) else np.float64
    expected = _reference(indices, values.astype(wide), (6, 7), b.astype(wide))
    np.testing.assert_allclose(out.numpy().astype(wide), expected, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("adjoint_b", [False, True], ids=["b", "b_adj"])
@pytest.mark.parametrize("adjoint_a", [False, True], ids=["a", "a_adj"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_sparse_dense_matmul_adjoints(device, timed, dtype, adjoint_a, adjoint_b):
    indices, values, _ = _sparse((4, 5), 0.5, dtype)
    inner = 4 if adjoint_a else 5
    b = _sparse((3, inner) if adjoint_b else (inner, 3), 1.0, dtype, seed=2)[2]
    args = (tf.constant(indices), tf.constant(values), tf.constant(b), (4, 5), adjoint_a, adjoint_b)
    out = timed(_matmul, *args)
    expected = _reference(indices, values, (4, 5), b, adjoint_a, adjoint_b)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "shape,density,n",
    [
        ((3, 4), 0.0, 2),  # no stored entries
        ((0, 4), 0.5, 3),
        ((4, 0), 0.5, 3),
        ((5, 6), 0.5, 0),
        ((1, 1), 1.0, 1),
        ((512, 512), 0.1, 512),  # 1 MB dense operand
    ],
    ids=str,
)
def test_sparse_dense_matmul_shapes(device, timed, shape, density, n):
    indices, values, _ = _sparse(shape, density, np.float32, seed=3)
    b = np.random.default_rng(4).standard_normal((shape[1], n)).astype(np.float32)
    out = timed(_matmul, tf.constant(indices.reshape(-1, 2)), tf.constant(values), tf.constant(b), shape)
    expected = _reference(indices.reshape(-1, 2), values, shape, b)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_sparse_dense_matmul_unordered_and_duplicate_indices(device, timed):
    # Entries need not be in canonical order; duplicates add up.
    indices = np.array([[2, 0], [0, 1], [2, 0], [1, 2]], np.int64)
    values = np.array([1.0, 2.0, 3.0, -1.0], np.float64)
    b = np.arange(9.0).reshape(3, 3)
    out = timed(_matmul, tf.constant(indices), tf.constant(values), tf.constant(b), (3, 3))
    np.testing.assert_allclose(out.numpy(), _reference(indices, values, (3, 3), b), rtol=1e-12)


def test_sparse_dense_matmul_implicit_zeros_skip_nan(device, timed):
    # A NaN/inf row of b meets only implicit zeros of A: it must not reach the output,
    # while a stored entry multiplying it does.
    indices = np.array([[0, 0], [1, 2]], np.int64)
    values = np.array([2.0, 1.0], np.float32)
    b = np.array([[1.0, 1.0], [np.nan, np.inf], [3.0, -0.0]], np.float32)
    out = timed(_matmul, tf.constant(indices), tf.constant(values), tf.constant(b), (2, 3)).numpy()
    np.testing.assert_array_equal(out, [[2.0, 2.0], [3.0, 0.0]])


def test_sparse_dense_matmul_gradient(device, timed):
    indices = np.array([[0, 1], [1, 0], [1, 2]], np.int64)
    values = tf.constant([1.0, 2.0, 3.0], tf.float64)
    b = tf.constant(np.arange(6.0).reshape(3, 2))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([values, b])
        loss = tf.reduce_sum(timed(_matmul, tf.constant(indices), values, b, (2, 3)))
    # d/dv[i,k] = sum_j b[k, j]; d/db[k, j] = sum of stored a[:, k].
    np.testing.assert_allclose(tape.gradient(loss, values).numpy(), [5.0, 1.0, 9.0])
    np.testing.assert_allclose(tape.gradient(loss, b).numpy(), [[2.0, 2.0], [1.0, 1.0], [3.0, 3.0]])


def test_sparse_dense_matmul_refuses_out_of_range_index(device, timed):
    indices = np.array([[0, 0], [1, 5]], np.int64)  # column 5 of a 2x3 matrix
    with pytest.raises(tf.errors.InvalidArgumentError):
        timed(_matmul, tf.constant(indices), tf.constant([1.0, 1.0]), tf.ones((3, 2)), (2, 3))


def test_sparse_dense_matmul_refuses_shape_mismatch(device, timed):
    indices = np.array([[0, 0]], np.int64)
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(_matmul, tf.constant(indices), tf.constant([1.0]), tf.ones((4, 2)), (2, 3))
