"""tf.keras.layers.EinsumDense: einsum of input and kernel plus bias, against numpy.einsum on its weights."""

import numpy as np
import pytest
import tensorflow as tf


def _layer(equation: str, output_shape, bias_axes=None, dtype="float32", activation=None, seed: int = 0):
    tf.keras.utils.set_random_seed(seed)  # deterministic initial weights
    return tf.keras.layers.EinsumDense(
        equation,
        output_shape=output_shape,
        bias_axes=bias_axes,
        activation=activation,
        dtype=dtype,
        bias_initializer="random_normal",
    )


def _reference(layer, x: np.ndarray, equation: str) -> np.ndarray:
    y = np.einsum(equation, x.astype(np.float64), tf.cast(layer.kernel, tf.float64).numpy())
    # The layer's bias is shaped to broadcast against the trailing output axes.
    return y + tf.cast(layer.bias, tf.float64).numpy() if layer.bias is not None else y


def _np(t: tf.Tensor) -> np.ndarray:
    return tf.cast(t, tf.float64).numpy()


EQUATIONS = [
    ("ab,bc->ac", (4,), "c", (3, 5)),
    ("abc,cd->abd", (None, 6), "d", (2, 3, 5)),
    ("abc,cde->abde", (None, 2, 3), "e", (2, 3, 4)),
    ("abc,cde->abde", (None, 2, 3), "de", (2, 3, 4)),
    ("abcd,cde->abe", (None, 4), None, (2, 3, 2, 5)),
    ("...b,bc->...c", (7,), "c", (2, 3, 5)),
    ("abc,cd->ad", (6,), "d", (2, 3, 3)),
]


@pytest.mark.parametrize(("equation", "out_shape", "bias_axes", "in_shape"), EQUATIONS, ids=lambda v: str(v))
def test_einsum_dense_equations(device, timed, equation, out_shape, bias_axes, in_shape):
    x = np.random.default_rng(1).standard_normal(in_shape).astype(np.float32)
    layer = _layer(equation, out_shape, bias_axes)
    layer.build(in_shape)
    y = timed(layer, tf.constant(x))
    expected = _reference(layer, x, equation)
    assert tuple(y.shape) == expected.shape
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-5)


TOL = {"float16": 5e-3, "bfloat16": 3e-2, "float32": 1e-5, "float64": 1e-12}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "mixed_float16"])
def test_einsum_dense_dtypes(device, timed, dtype):
    compute = "float16" if dtype == "mixed_float16" else dtype
    x = np.random.default_rng(2).standard_normal((4, 6))
    layer = _layer("ab,bc->ac", (5,), "c", dtype=dtype)
    layer.build((4, 6))
    xt = tf.cast(tf.constant(x), compute)
    y = timed(layer, xt)
    assert y.dtype == tf.as_dtype(compute)
    # The mixed policy keeps float32 weights and computes in float16.
    assert layer.kernel.dtype == ("float32" if dtype == "mixed_float16" else dtype)
    ref_kernel = _np(tf.cast(layer.kernel, compute))
    expected = np.einsum("ab,bc->ac", _np(xt), ref_kernel) + _np(tf.cast(layer.bias, compute))
    tol = TOL[compute] * np.abs(expected).max()
    np.testing.assert_allclose(_np(y), expected, rtol=TOL[compute], atol=tol)


@pytest.mark.parametrize(
    "in_shape", [(0, 8), (1, 1), (9, 13), (512, 512)], ids=["empty", "1x1", "odd", "1MB"]
)
def test_einsum_dense_shapes(device, timed, in_shape):
    """(512, 512) float32 input is 1 MB."""
    x = np.random.default_rng(3).standard_normal(in_shape).astype(np.float32)
    layer = _layer("ab,bc->ac", (16,), "c")
    layer.build(in_shape)
    y = timed(layer, tf.constant(x))
    assert tuple(y.shape) == (in_shape[0], 16)
    np.testing.assert_allclose(y.numpy(), _reference(layer, x, "ab,bc->ac"), rtol=1e-4, atol=1e-4)


def test_einsum_dense_activation_and_special_values(device, timed):
    # relu after the bias; a NaN input row stays NaN, an inf input spreads as inf or NaN only in its row.
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    x[1, 2] = np.nan
    layer = _layer("ab,bc->ac", (5,), "c", activation="relu")
    layer.build((3, 4))
    y = timed(layer, tf.constant(x)).numpy()
    expected = np.maximum(_reference(layer, x, "ab,bc->ac"), 0)
    np.testing.assert_allclose(y[[0, 2]], expected[[0, 2]], rtol=1e-5, atol=1e-6)
    assert np.all(np.isnan(y[1]))


def test_einsum_dense_gradients(device, timed):
    # For y = x K + b and loss = sum(y): dK = x^T 1, db = N per output, dx = 1 K^T.
    x = np.random.default_rng(5).standard_normal((3, 4))
    layer = _layer("ab,bc->ac", (2,), "c", dtype="float64")
    layer.build((3, 4))
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        loss = tf.reduce_sum(timed(layer, xt))
    gk, gb, gx = tape.gradient(loss, [layer.kernel, layer.bias, xt])
    np.testing.assert_allclose(gk.numpy(), x.T @ np.ones((3, 2)), rtol=1e-12)
    np.testing.assert_allclose(gb.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(gx.numpy(), np.ones((3, 2)) @ layer.kernel.numpy().T, rtol=1e-12)


@pytest.mark.parametrize(
    ("equation", "out_shape", "bias_axes"),
    [("ab,bc", (4,), None), ("ab,bc->ac", (4,), "x"), ("abc,cd->abd", (4, 6), None)],
    ids=["no_arrow", "unknown_bias_axis", "shared_dim_mismatch"],
)
def test_einsum_dense_refusals(device, equation, out_shape, bias_axes):
    layer = tf.keras.layers.EinsumDense(equation, output_shape=out_shape, bias_axes=bias_axes)
    with pytest.raises(ValueError):
        layer.build((2, 3, 5) if equation.startswith("abc") else (3, 5))
