"""tf.experimental.numpy.diagflat: flattened input on the k-th diagonal, against numpy.diagflat."""

import numpy as np
import pytest
import tensorflow as tf

tnp = tf.experimental.numpy
DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool, tf.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(0,), (1,), (5,), (2, 3), (2, 2, 2)], ids=str)
@pytest.mark.parametrize("k", [0, 2, -1], ids=lambda k: f"k{k}")
def test_diagflat_matches_numpy(device, timed, dtype, shape, k):
    data = (np.arange(1, int(np.prod(shape)) + 1).reshape(shape) % 5).astype(dtype.as_numpy_dtype)
    out = timed(tnp.diagflat, tf.constant(data), k)
    expected = np.diagflat(data, k)
    assert tuple(out.shape) == expected.shape and out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_diagflat_large(device, timed):
    data = np.random.default_rng(0).standard_normal(600).astype(np.float32)  # 600x600 float32 = 1.4 MB
    out = timed(tnp.diagflat, tf.constant(data), 1)
    np.testing.assert_array_equal(np.asarray(out), np.diagflat(data, 1))


def test_diagflat_python_list(device, timed):
    out = timed(tnp.diagflat, [[1.5, 2.5], [3.5, 4.5]])
    np.testing.assert_array_equal(np.asarray(out), np.diagflat([[1.5, 2.5], [3.5, 4.5]]))
