"""tf.train.ExponentialMovingAverage: shadow = decay * shadow + (1 - decay) * value, per apply()."""

import numpy as np
import pytest
import tensorflow as tf

# the decay is held as float32 before the update, so float64 averages agree only to ~1e-7
TOL = {tf.float32: 1e-6, tf.float64: 1e-6, tf.float16: 2e-3, tf.bfloat16: 2e-2}


def _applier(ema):
    """ema.apply as a function of the variable; it returns the updated average (apply itself returns
    an op), read after the update."""

    def apply(var):
        ema.apply([var])
        return ema.average(var).read_value()

    return apply


def _ema(values, decay, init):
    shadow = init.astype(np.float64)
    for v in values:
        shadow = decay * shadow + (1 - decay) * v
    return shadow


@pytest.mark.parametrize("dtype", list(TOL), ids=lambda d: d.name)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (512, 512)], ids=str)
def test_ema_matches_recurrence(device, timed, dtype, shape):
    rng = np.random.default_rng(0)
    init = rng.uniform(-1, 1, shape).astype(dtype.as_numpy_dtype)
    var = tf.Variable(init)
    ema = tf.train.ExponentialMovingAverage(decay=0.9)
    timed.once(_applier(ema), var)
    steps = [rng.uniform(-1, 1, shape) for _ in range(3)]
    for step in steps:
        var.assign(step.astype(dtype.as_numpy_dtype))
        ema.apply([var])
    avg = ema.average(var)
    assert avg.dtype == dtype and tuple(avg.shape) == shape
    quantized = [s.astype(dtype.as_numpy_dtype).astype(np.float64) for s in steps]
    expected = _ema([init.astype(np.float64), *quantized], 0.9, init)
    tol = TOL[dtype]
    np.testing.assert_allclose(avg.numpy().astype(np.float64), expected, rtol=tol, atol=tol)


def test_num_updates_caps_decay(device, timed):
    var = tf.Variable([0.0, 10.0], dtype=tf.float64)
    ema = tf.train.ExponentialMovingAverage(decay=0.999, num_updates=tf.constant(0))
    apply = _applier(ema)
    timed.once(apply, var)  # decay used: min(0.999, 1/10) = 0.1, shadow starts at var
    var.assign([1.0, 20.0])
    timed.once(apply, var)
    np.testing.assert_allclose(
        ema.average(var).numpy(), 0.1 * np.array([0.0, 10.0]) + 0.9 * np.array([1.0, 20.0]), rtol=1e-6
    )


def test_zero_debias_leaves_variables_alone(device, timed):
    """zero_debias applies to averaged tensors only: a variable's shadow starts at its value."""
    var = tf.Variable(5.0, dtype=tf.float64)
    ema = tf.train.ExponentialMovingAverage(decay=0.5, zero_debias=True)
    timed.once(_applier(ema), var)
    np.testing.assert_allclose(ema.average(var).numpy(), 5.0 * 0.5 + 5.0 * 0.5, rtol=1e-6)
    var.assign(9.0)
    ema.apply([var])
    np.testing.assert_allclose(ema.average(var).numpy(), 0.5 * 5.0 + 0.5 * 9.0, rtol=1e-6)


def test_tensor_inputs_and_names(device, timed):
    var = tf.Variable(2.0, name="weights")
    ema = tf.train.ExponentialMovingAverage(0.25, name="avg")
    timed.once(_applier(ema), var)
    assert ema.name == "avg" and ema.average_name(var).startswith("weights/avg")
    assert ema.average(var).trainable is False


def test_integer_variable_rejected(device, timed):
    ema = tf.train.ExponentialMovingAverage(0.5)
    with pytest.raises(TypeError):
        timed.once(_applier(ema), tf.Variable([1, 2], dtype=tf.int32))
