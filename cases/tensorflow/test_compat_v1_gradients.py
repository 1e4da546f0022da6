"""tf.compat.v1.gradients: symbolic gradients in a TF1 graph, against hand-derived derivatives.

The timed function builds the forward expression and its gradients from graph tensors; in compiled mode it
is a tf.function(jit_compile=True) called in the graph. Its outputs are run with the session."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1
TOLERANCE = {tf.float32: 1e-6, tf.float64: 1e-14, tf.float16: 2e-3, tf.bfloat16: 2e-2}


def cube_sum_grad(x: tf.Tensor) -> list:
    return v1.gradients(tf.reduce_sum(x * x * x), x)


@pytest.mark.parametrize("dtype", list(TOLERANCE), ids=lambda d: d.name)
def test_gradients_cube_by_dtype(device, timed, tf_graph, tf_session, dtype):
    data = np.linspace(-2.0, 2.0, 15).reshape(3, 5)
    x = tf.constant(data, dtype)
    (grad,) = timed(cube_sum_grad, x)
    assert grad.dtype == dtype and grad.shape.as_list() == [3, 5]
    got, rounded = tf_session.run([tf.cast(grad, tf.float64), tf.cast(x, tf.float64)])
    np.testing.assert_allclose(got, 3.0 * rounded**2, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


@pytest.mark.parametrize("shape", [(0,), (1,), (7, 3), (512, 512)], ids=str)
def test_gradients_shapes(device, timed, tf_graph, tf_session, shape):
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    x = tf.constant(data)
    (grad,) = timed(lambda t: v1.gradients(tf.reduce_sum(tf.tanh(t)), t), x)
    assert grad.shape.as_list() == list(shape)
    np.testing.assert_allclose(tf_session.run(grad), 1.0 - np.tanh(data.astype(np.float64)) ** 2, atol=1e-6)


def test_gradients_sum_over_ys_and_grad_ys(device, timed, tf_graph, tf_session):
    a = tf.constant([1.0, 2.0, 3.0], tf.float64)
    b = tf.constant([0.5, -1.0, 4.0], tf.float64)
    weights = tf.constant([2.0, 3.0, -1.0], tf.float64)

    def grads(a: tf.Tensor, b: tf.Tensor, w: tf.Tensor) -> list:
        # d/da of (a*b weighted by w) + sum(a^2), d/db likewise: ys' gradients are summed.
        return v1.gradients([a * b, tf.reduce_sum(a * a)], [a, b], grad_ys=[w, None])

    ga, gb = timed(grads, a, b, weights)
    got_a, got_b = tf_session.run([ga, gb])
    np.testing.assert_allclose(got_a, [2.0 * 0.5 + 2.0, 3.0 * -1.0 + 4.0, -1.0 * 4.0 + 6.0])
    np.testing.assert_allclose(got_b, [2.0 * 1.0, 3.0 * 2.0, -1.0 * 3.0])


def test_gradients_stop_gradients(device, timed, tf_graph, tf_session):
    def grads(a: tf.Tensor) -> list:
        b = 2.0 * a
        # The documented example: with a and b as stop points, d(a + b)/da and d(a + b)/db are both 1.
        return v1.gradients(a + b, [a, b], stop_gradients=[a, b]) + v1.gradients(a + b, [a, b])

    out = timed(grads, tf.constant(0.0))
    np.testing.assert_array_equal(tf_session.run(out), [1.0, 1.0, 3.0, 1.0])


def test_gradients_unconnected(device, timed, tf_graph, tf_session):
    def grads(x: tf.Tensor, z: tf.Tensor) -> list:
        y = tf.reduce_sum(x * 2.0)
        zero = v1.gradients(y, [x, z], unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return v1.gradients(y, [x, z]) + zero

    x = tf.constant([1.0, 2.0])
    z = tf.constant([[3.0, 4.0, 5.0]])
    gx, gz, gx0, gz0 = timed(grads, x, z)
    assert gz is None  # unconnected: None by default
    got = tf_session.run([gx, gx0, gz0])
    np.testing.assert_array_equal(got[0], [2.0, 2.0])
    np.testing.assert_array_equal(got[1], [2.0, 2.0])
    np.testing.assert_array_equal(got[2], np.zeros((1, 3)))


def test_gradients_through_matmul_and_variable(device, timed, tf_graph, tf_session):
    rng = np.random.default_rng(1)
    w0, xv = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    w = v1.get_variable("w", initializer=tf.constant(w0))
    x = tf.constant(xv)
    (grad,) = timed(lambda t: v1.gradients(tf.reduce_sum(tf.matmul(t, w) ** 2), w), x)
    tf_session.run(v1.global_variables_initializer())
    expected = 2.0 * xv.T @ (xv @ w0)  # d/dW sum((XW)^2) = 2 X^T X W
    np.testing.assert_allclose(tf_session.run(grad), expected, rtol=1e-12)


def test_gradients_refused_in_eager(device, timed):
    x = tf.constant([1.0, 2.0])
    with pytest.raises(RuntimeError, match="eager"), timed.region():
        v1.gradients(x * x, x)
