"""tf.signal.idct: inverse DCT types 1-4 against scipy.fft.idct, norm options, round trip with dct."""

import numpy as np
import pytest
import scipy.fft
import tensorflow as tf

TOL = {tf.float32: 1e-4, tf.float64: 1e-10}


def _data(shape, dtype):
    return tf.constant(np.random.default_rng(0).standard_normal(shape), dtype)


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize("dct_type", [1, 2, 3, 4])
@pytest.mark.parametrize("shape", [(8,), (3, 17), (2, 4, 33)], ids=str)
def test_idct_matches_scipy(device, timed, dtype, dct_type, shape):
    x = _data(shape, dtype)
    out = timed(tf.signal.idct, x, type=dct_type)
    assert out.dtype == dtype and out.shape == x.shape
    # TensorFlow's unnormalised idct is scipy's unnormalised forward dct of the inverse type.
    inverse_type = {1: 1, 2: 3, 3: 2, 4: 4}[dct_type]
    expected = scipy.fft.dct(x.numpy().astype(np.float64), type=inverse_type, axis=-1)
    tol = TOL[dtype]
    np.testing.assert_allclose(out.numpy(), expected, rtol=tol, atol=tol * np.abs(expected).max())


@pytest.mark.parametrize("dct_type", [2, 3, 4])
def test_idct_ortho_inverts_dct(device, timed, dct_type):
    x = _data((5, 64), tf.float64)
    coefficients = tf.signal.dct(x, type=dct_type, norm="ortho")
    out = timed(tf.signal.idct, coefficients, type=dct_type, norm="ortho")
    np.testing.assert_allclose(out.numpy(), x.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        out.numpy(), scipy.fft.idct(coefficients.numpy(), type=dct_type, norm="ortho"), atol=1e-12
    )


def test_idct_truncated_length(device, timed):
    x = _data((4, 20), tf.float32)
    out = timed(tf.signal.idct, x, type=2, n=12)
    assert tuple(out.shape) == (4, 12)
    expected = scipy.fft.dct(x.numpy()[:, :12].astype(np.float64), type=3)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)


def test_idct_large(device, timed):
    """256 signals of 2048 float32 samples (2 MB), type 2 unnormalised."""
    x = _data((256, 2048), tf.float32)
    out = timed(tf.signal.idct, x, type=2)
    expected = scipy.fft.dct(x.numpy().astype(np.float64), type=3)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-3, atol=1e-3 * np.abs(expected).max())


def test_idct_zero_padded_length(device, timed):
    x = _data((2, 10), tf.float64)
    out = timed(tf.signal.idct, x, type=3, n=16)
    assert tuple(out.shape) == (2, 16)
    padded = np.pad(x.numpy(), [(0, 0), (0, 6)])
    np.testing.assert_allclose(out.numpy(), scipy.fft.dct(padded, type=2), rtol=1e-10, atol=1e-10)


def test_idct_invalid_options_raise(device, timed):
    with pytest.raises(ValueError):
        timed(tf.signal.idct, _data((8,), tf.float32), type=1, norm="ortho")
    with pytest.raises(ValueError):
        timed(tf.signal.idct, _data((8,), tf.float32), type=5)
