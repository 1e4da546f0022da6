"""tf.keras.config.backend: the backend name, and that keras.ops really compute on it, against NumPy."""

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
import tensorflow as tf

keras = tf.keras


def test_backend_is_tensorflow(device, timed):
    with timed.region() as region:
        region.result = keras.config.backend()
    name = region.result
    assert isinstance(name, str)
    assert name == "tensorflow" == keras.backend.backend()
    assert os.environ.get("KERAS_BACKEND", "tensorflow") == name


DTYPES = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int32]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_ops_compute_on_the_reported_backend(device, timed, dtype):
    with timed.region() as region:
        region.result = keras.config.backend()
    a = np.array([[1.0, -2.0, 0.5], [4.0, 3.0, -1.0]]).astype(dtype)
    b = np.array([[2.0, 1.0, 4.0], [0.0, -3.0, 2.0]]).astype(dtype)
    out = keras.ops.add(keras.ops.multiply(a, b), b)
    # The tensorflow backend returns tf.Tensor on the pinned device, in the input dtype.
    assert region.result == "tensorflow" and isinstance(out, tf.Tensor)
    assert out.dtype == tf.as_dtype(np.dtype(dtype))
    assert out.device.endswith(device.removeprefix("/"))
    np.testing.assert_array_equal(tf.cast(out, tf.float64).numpy(), (a * b + b).astype(np.float64))


@pytest.mark.parametrize("shape", [(0,), (1,), (512, 512)], ids=str)
def test_backend_tensors_shapes(device, timed, shape):
    with timed.region() as region:
        region.result = keras.config.backend()
    data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    out = keras.ops.convert_to_tensor(data)
    assert region.result == "tensorflow" and isinstance(out, tf.Tensor) and tuple(out.shape) == shape
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(out), data)


def _backend_in_fresh_process(name: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KERAS_BACKEND": name}
    code = "import keras; print(keras.config.backend())"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def test_backend_follows_keras_backend_variable(device, timed):
    # KERAS_BACKEND, read at import, picks the backend; numpy needs nothing beyond NumPy.
    with timed.region() as region:
        region.result = _backend_in_fresh_process("numpy")
    assert region.result.returncode == 0, region.result.stderr[-2000:]
    assert region.result.stdout.strip().splitlines()[-1] == "numpy"


def test_unknown_backend_is_refused(device, timed):
    with timed.region() as region:
        region.result = _backend_in_fresh_process("no_such_backend")
    assert region.result.returncode != 0
    assert "ValueError" in region.result.stderr and "no_such_backend" in region.result.stderr
