"""tf.compat.v1.test.compute_gradient_error: max |theoretical - numerical Jacobian| of a graph op.
Small for correct gradients, large for a deliberately wrong one. The op under check is built by the timed
function (in compiled mode a tf.function(jit_compile=True) call in the graph, so the theoretical Jacobian
comes from the compiled function's gradient and the numerical one from runs of the compiled call)."""

import numpy as np
import pytest
import tensorflow as tf

compute_gradient_error = tf.compat.v1.test.compute_gradient_error

# Bound on the reported error for a correct gradient, per dtype of x: central differences with
# delta 1e-3 are off by about delta**2 * f''' / 6 in float64.
BOUND = {tf.float64: 1e-5, tf.float32: 5e-2, tf.float16: 1.0}


def _error(tf_graph, tf_session, timed, build, x_value, **kwargs):
    with tf_graph.as_default(), tf_session.as_default():
        x = tf.constant(x_value)
        y = timed.once(build, x)
        return compute_gradient_error(x, x_value.shape, y, y.shape.as_list(), x_init_value=x_value, **kwargs)


@pytest.mark.parametrize("dtype", list(BOUND), ids=lambda d: d.name)
@pytest.mark.parametrize(
    "name,build",
    [("square", lambda x: x * x), ("tanh", tf.tanh), ("matmul", lambda x: tf.matmul(x, x, transpose_b=True))],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_gradient_error_small_for_correct_gradients(device, timed, tf_graph, tf_session, dtype, name, build):
    x_value = (np.random.default_rng(0).uniform(-1, 1, (3, 4))).astype(dtype.as_numpy_dtype)
    error = _error(tf_graph, tf_session, timed, build, x_value)
    assert np.isfinite(error) and 0.0 <= error < BOUND[dtype]


def test_gradient_error_detects_wrong_gradient(device, timed, tf_graph, tf_session):
    @tf.custom_gradient
    def wrong_square(x):
        return x * x, lambda dy: dy * 3.0 * x  # the true derivative is 2x

    x_value = np.array([[0.5, -1.0], [2.0, 1.5]], np.float64)
    error = _error(tf_graph, tf_session, timed, wrong_square, x_value)
    # Diagonal entries differ by |x|: the largest |x| is 2.0.
    np.testing.assert_allclose(error, 2.0, rtol=1e-6)


def test_gradient_error_reduction_and_broadcast(device, timed, tf_graph, tf_session):
    x_value = np.random.default_rng(1).standard_normal((5, 6))
    error = _error(
        tf_graph,
        tf_session,
        timed,
        lambda x: tf.reduce_logsumexp(x, axis=1) + tf.reduce_sum(x[:, :2] * 2.0, axis=1),
        x_value,
    )
    assert error < 1e-5


def test_gradient_error_delta_option(device, timed, tf_graph, tf_session):
    """A coarse delta makes the numerical Jacobian of x**3 less exact: error grows like delta**2."""
    x_value = np.array([1.0, 2.0, -1.5])
    fine = _error(tf_graph, tf_session, timed, lambda x: x**3, x_value, delta=1e-4)
    coarse = _error(tf_graph, tf_session, timed, lambda x: x**3, x_value, delta=1e-1)
    np.testing.assert_allclose(coarse, 0.01, rtol=1e-6)  # central difference of x**3 is off by delta**2
    assert fine < 1e-7


def test_gradient_error_larger_input(device, timed, tf_graph, tf_session):
    """A 64-element input and output: the Jacobian is 64x64, built column by column."""
    x_value = np.random.default_rng(2).standard_normal((8, 8))
    error = _error(tf_graph, tf_session, timed, lambda x: tf.nn.softmax(x, axis=-1), x_value)
    assert error < 1e-5


def test_gradient_error_empty_input(device, timed, tf_graph, tf_session):
    error = _error(tf_graph, tf_session, timed, lambda x: x * 2.0, np.zeros((0, 3)))
    assert error == 0.0
