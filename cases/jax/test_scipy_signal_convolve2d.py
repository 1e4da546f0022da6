"""jax.scipy.signal.convolve2d: 2-D convolution against scipy.signal.convolve2d for modes, dtypes and
sizes."""

import jax
import jax.numpy as jnp
import jax.scipy.signal as jsp_signal
import numpy as np
import pytest
import scipy.signal

jax.config.update("jax_enable_x64", True)

TOLERANCE = {
    "float32": 1e-4,
    "float64": 1e-12,
    "float16": 5e-2,
    "bfloat16": 2e-1,
    "int32": 0,
    "complex64": 1e-4,
}


def _data(rng, shape, dtype):
    if dtype == "int32":
        return rng.integers(-10, 10, shape).astype(np.int32)
    data = rng.uniform(-1, 1, shape)
    if dtype.startswith("complex"):
        data = data + 1j * rng.uniform(-1, 1, shape)
    return data.astype(jnp.dtype(dtype))


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(
    "shapes", [((1, 1), (1, 1)), ((7, 5), (3, 2)), ((4, 9), (4, 9)), ((512, 256), (3, 3))], ids=str
)
def test_convolve2d_matches_scipy(device, timed, dtype, mode, shapes):
    rng = np.random.default_rng(0)
    a, v = _data(rng, shapes[0], dtype), _data(rng, shapes[1], dtype)
    out = timed(jsp_signal.convolve2d, jnp.asarray(a), jnp.asarray(v), mode=mode)
    wide = np.complex128 if dtype.startswith("complex") else np.float64
    expected = scipy.signal.convolve2d(a.astype(wide), v.astype(wide), mode=mode)
    assert out.shape == expected.shape
    tol = TOLERANCE[dtype] * max(1.0, np.sqrt(np.prod(shapes[1])))
    np.testing.assert_allclose(np.asarray(out).astype(wide), expected, rtol=tol, atol=tol)


def test_convolve2d_precision_highest(device, timed):
    rng = np.random.default_rng(1)
    a, v = rng.standard_normal((33, 17)).astype(np.float32), rng.standard_normal((5, 4)).astype(np.float32)
    out = timed(jsp_signal.convolve2d, jnp.asarray(a), jnp.asarray(v), precision="highest")
    np.testing.assert_allclose(
        np.asarray(out), scipy.signal.convolve2d(a.astype(np.float64), v), rtol=1e-5, atol=1e-5
    )


def test_convolve2d_rejects_non_2d(device, timed):
    with pytest.raises(ValueError):
        timed(jsp_signal.convolve2d, jnp.ones((3,)), jnp.ones((2,)))


def test_convolve2d_gradient_is_correlation(device, timed):
    rng = np.random.default_rng(2)
    a, v = jnp.asarray(rng.standard_normal((5, 6))), jnp.asarray(rng.standard_normal((2, 3)))
    g = jnp.asarray(rng.standard_normal((6, 8)))
    grad = timed(jax.grad(lambda x: jnp.sum(jsp_signal.convolve2d(x, v) * g)), a)
    expected = scipy.signal.correlate2d(np.asarray(g), np.asarray(v), mode="valid")
    np.testing.assert_allclose(np.asarray(grad), expected, rtol=1e-10, atol=1e-10)
