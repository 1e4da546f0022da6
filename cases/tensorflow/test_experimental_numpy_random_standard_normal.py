"""tf.experimental.numpy.random.standard_normal: N(0, 1) samples of a size; float64 like NumPy; seeded."""

import numpy as np
import pytest
import scipy.stats
import tensorflow as tf

tnp = tf.experimental.numpy


@pytest.mark.parametrize("size", [(0,), 7, (3, 5), (512, 512)], ids=str)
def test_standard_normal_shape_and_dtype(device, timed, size):
    tnp.random.seed(0)
    out = timed.once(tnp.random.standard_normal, size)
    expected = np.random.default_rng(0).standard_normal(size).shape
    assert tuple(out.shape) == expected
    assert out.dtype == tf.float64  # NumPy's default float
    assert np.isfinite(np.asarray(out)).all()


def test_standard_normal_scalar(device, timed):
    out = timed.once(tnp.random.standard_normal)
    assert out.shape == () and out.dtype == tf.float64


def test_standard_normal_distribution(device, timed):
    tnp.random.seed(42)
    samples = np.asarray(timed.once(tnp.random.standard_normal, (200000,)))
    assert abs(samples.mean()) < 0.01 and abs(samples.std() - 1.0) < 0.01
    assert scipy.stats.kstest(samples, "norm").pvalue > 1e-4


def test_standard_normal_seed_reproducible(device, timed):
    tnp.random.seed(3)
    timed_draw = np.asarray(timed.once(tnp.random.standard_normal, (4, 4)))
    assert timed_draw.shape == (4, 4) and np.isfinite(timed_draw).all()
    # the seed semantics, on direct calls (a compiled function keeps its own random state)
    tnp.random.seed(3)
    a = np.asarray(tnp.random.standard_normal((4, 4)))
    b = np.asarray(tnp.random.standard_normal((4, 4)))
    tnp.random.seed(3)
    c = np.asarray(tnp.random.standard_normal((4, 4)))
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)


def test_standard_normal_columns_independent(device, timed):
    tnp.random.seed(9)
    samples = np.asarray(timed.once(tnp.random.standard_normal, [50000, 3]))
    corr = np.corrcoef(samples, rowvar=False)
    np.testing.assert_allclose(corr, np.eye(3), atol=0.03)
