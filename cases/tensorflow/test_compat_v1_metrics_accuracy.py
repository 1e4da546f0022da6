"""tf.compat.v1.metrics.accuracy: streaming accuracy (total/count local variables) in a graph, vs NumPy,
with weights, several update steps and the eager-mode refusal. The metric is built by the timed function
(in compiled mode a tf.function(jit_compile=True) called in the graph), then run with the session."""

import numpy as np
import pytest
import tensorflow as tf

v1 = tf.compat.v1


def _accuracy(labels, predictions, weights=None):
    """The metric as a function of tensors: (accuracy, update_op)."""
    return v1.metrics.accuracy(labels, predictions, weights=weights)


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64, tf.float32, tf.float64, tf.bool], ids=lambda d: d.name)
@pytest.mark.parametrize("n", [1, 7, 1 << 18], ids=lambda n: f"n{n}")
def test_accuracy_single_update(device, timed, tf_graph, tf_session, dtype, n):
    rng = np.random.default_rng(0)
    labels_np = rng.integers(0, 2 if dtype == tf.bool else 4, n)
    predictions_np = np.where(
        rng.random(n) < 0.6, labels_np, rng.integers(0, 2 if dtype == tf.bool else 4, n)
    )
    with tf_graph.as_default():
        labels = tf.cast(tf.constant(labels_np), dtype)
        predictions = tf.cast(tf.constant(predictions_np), dtype)
        accuracy, update = timed.once(_accuracy, labels, predictions)
        tf_session.run(v1.local_variables_initializer())
        updated = tf_session.run(update)
        final = tf_session.run(accuracy)
    expected = np.mean(labels_np == predictions_np)
    np.testing.assert_allclose(updated, expected, rtol=1e-6)
    np.testing.assert_allclose(final, expected, rtol=1e-6)


def test_accuracy_streams_over_updates(device, timed, tf_graph, tf_session):
    batches = [([1, 2, 3, 4], [1, 2, 0, 4]), ([0, 0], [1, 0]), ([5, 5, 5], [5, 5, 5])]
    with tf_graph.as_default():
        labels = v1.placeholder(tf.int32, shape=(None,))
        predictions = v1.placeholder(tf.int32, shape=(None,))
        accuracy, update = timed.once(_accuracy, labels, predictions)
        tf_session.run(v1.local_variables_initializer())
        # No examples yet: 0, not NaN (an empty batch is fed: a compiled call's outputs need its inputs).
        assert tf_session.run(accuracy, {labels: [], predictions: []}) == 0.0
        for lab, pred in batches:
            updated = tf_session.run(update, {labels: lab, predictions: pred})
        total, count = tf_session.run(v1.local_variables())
    np.testing.assert_allclose(updated, 7 / 9, rtol=1e-6)
    assert (total, count) == (7.0, 9.0)


def test_accuracy_weights(device, timed, tf_graph, tf_session):
    labels_np = np.array([[1, 0], [2, 2], [3, 1]])
    predictions_np = np.array([[1, 1], [2, 0], [3, 1]])
    weights_np = np.array([[1.0], [0.0], [2.5]])  # broadcast over the last dimension
    with tf_graph.as_default():
        accuracy, update = timed.once(
            _accuracy, tf.constant(labels_np), tf.constant(predictions_np), weights=tf.constant(weights_np)
        )
        tf_session.run(v1.local_variables_initializer())
        updated = tf_session.run(update)
        final = tf_session.run(accuracy)
    w = np.broadcast_to(weights_np, labels_np.shape)
    expected = np.sum(w * (labels_np == predictions_np)) / np.sum(w)
    np.testing.assert_allclose(updated, expected, rtol=1e-6)
    np.testing.assert_allclose(final, expected, rtol=1e-6)


def test_accuracy_shape_mismatch_raises(device, timed, tf_graph):
    with tf_graph.as_default(), pytest.raises(ValueError):
        timed.once(_accuracy, tf.constant([1, 2, 3]), tf.constant([1, 2]))


def test_accuracy_refused_in_eager(device, timed):
    # An eager-context check by definition (no function, no graph): it stays an untraced region.
    with pytest.raises(RuntimeError, match="eager"), timed.region():
        v1.metrics.accuracy(tf.constant([1]), tf.constant([1]))
