"""tf.compat.v1.train.AdadeltaOptimizer: graph-mode Adadelta steps against a NumPy implementation of
Zeiler's update (accum, accum_update slots), dense and sparse gradients. The update is built by the timed
function (in compiled mode a tf.function(jit_compile=True) called in the graph) and run with the session."""

import numpy as np
import pytest
import tensorflow as tf


def _adadelta_reference(var, grads, lr, rho, eps):
    # The optimizer holds its hyperparameters as float32 tensors and casts them to the variable dtype.
    lr, rho, eps = (float(np.float32(v)) for v in (lr, rho, eps))
    accum = np.zeros_like(var)
    accum_update = np.zeros_like(var)
    for g in grads:
        accum = rho * accum + (1 - rho) * g * g
        update = np.sqrt(accum_update + eps) / np.sqrt(accum + eps) * g
        accum_update = rho * accum_update + (1 - rho) * update * update
        var = var - lr * update
    return var, accum, accum_update


@pytest.fixture
def pinned_graph(tf_graph):
    """The harness graph: every op made in it is pinned to the device under test."""
    return tf_graph


TOL = {tf.float32: 1e-5, tf.float64: 1e-12, tf.float16: 2e-2}


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize("lr,rho,eps", [(1.0, 0.95, 1e-6), (0.5, 0.9, 1e-3)], ids=["default-ish", "coarse"])
def test_adadelta_dense_steps(device, timed, pinned_graph, tf_session, dtype, lr, rho, eps):
    init = np.array([1.0, -2.0, 3.0])
    grads = [np.array([0.1, 0.2, -0.3]), np.array([0.5, -0.1, 0.05]), np.array([-0.2, 0.3, 0.1])]
    var = tf.compat.v1.get_variable("var", initializer=tf.constant(init, dtype))
    grad = tf.compat.v1.placeholder(dtype, shape=(3,))
    opt = tf.compat.v1.train.AdadeltaOptimizer(learning_rate=lr, rho=rho, epsilon=eps)

    def step(g):
        with tf.control_dependencies([opt.apply_gradients([(g, var)])]):
            return [
                var.read_value(),
                opt.get_slot(var, "accum").read_value(),
                opt.get_slot(var, "accum_update").read_value(),
            ]

    updated = timed.once(step, grad)
    tf_session.run(tf.compat.v1.global_variables_initializer())
    for g in grads:
        out = tf_session.run(updated, {grad: g.astype(dtype.as_numpy_dtype)})
    assert sorted(opt.get_slot_names()) == ["accum", "accum_update"]
    expected = _adadelta_reference(init, grads, lr, rho, eps)
    tol = TOL[dtype]
    for got, want in zip(out, expected):
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol)


def test_adadelta_minimize_reduces_loss(device, timed, pinned_graph, tf_session):
    w = tf.compat.v1.get_variable("w", initializer=tf.constant([[2.0, -1.0], [0.5, 3.0]], tf.float64))
    opt = tf.compat.v1.train.AdadeltaOptimizer(learning_rate=1.0, rho=0.9, epsilon=1e-2)

    def train_step():
        loss = tf.reduce_sum(tf.square(w - 1.0))
        with tf.control_dependencies([opt.minimize(loss)]):
            return tf.identity(loss)  # the loss before this step's update

    train = timed.once(train_step)
    loss = tf.reduce_sum(tf.square(w - 1.0))
    tf_session.run(tf.compat.v1.global_variables_initializer())
    before = tf_session.run(loss)
    for _ in range(100):
        tf_session.run(train)
    after = tf_session.run(loss)
    assert before == pytest.approx(1.0 + 4.0 + 0.25 + 4.0)  # sum of (w - 1)**2 at the start
    assert after < before * 0.5


def test_adadelta_sparse_gradient(device, timed, pinned_graph, tf_session):
    """IndexedSlices update only the touched rows (and their slots)."""
    init = np.arange(12, dtype=np.float32).reshape(4, 3)
    var = tf.compat.v1.get_variable("emb", initializer=tf.constant(init))
    opt = tf.compat.v1.train.AdadeltaOptimizer(learning_rate=1.0, rho=0.95, epsilon=1e-6)

    def train_step():
        loss = tf.reduce_sum(tf.gather(var, [1, 3]) * 0.5)
        with tf.control_dependencies([opt.minimize(loss)]):
            return var.read_value()

    train = timed.once(train_step)
    tf_session.run(tf.compat.v1.global_variables_initializer())
    out = tf_session.run(train)
    expected_rows, _, _ = _adadelta_reference(
        init[[1, 3]].astype(np.float64), [np.full((2, 3), 0.5)], 1.0, 0.95, 1e-6
    )
    np.testing.assert_array_equal(out[[0, 2]], init[[0, 2]])
    np.testing.assert_allclose(out[[1, 3]], expected_rows, rtol=1e-5)


def test_adadelta_large_variable(device, timed, pinned_graph, tf_session):
    """One step on a 512x1024 float32 variable (2 MB)."""
    rng = np.random.default_rng(0)
    init = rng.standard_normal((512, 1024)).astype(np.float32)
    g = rng.standard_normal((512, 1024)).astype(np.float32)
    var = tf.compat.v1.get_variable("big", initializer=tf.constant(init))
    opt = tf.compat.v1.train.AdadeltaOptimizer(learning_rate=1.0)

    def step(grad):
        with tf.control_dependencies([opt.apply_gradients([(grad, var)])]):
            return var.read_value()

    updated = timed.once(step, tf.constant(g))
    tf_session.run(tf.compat.v1.global_variables_initializer())
    out = tf_session.run(updated)
    expected, _, _ = _adadelta_reference(init.astype(np.float64), [g.astype(np.float64)], 1.0, 0.95, 1e-8)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
