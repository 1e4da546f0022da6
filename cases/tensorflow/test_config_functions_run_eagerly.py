"""tf.config.functions_run_eagerly: the flag run_functions_eagerly sets, and tf.function bodies obeying it."""

import threading

import numpy as np
import pytest
import tensorflow as tf


@pytest.fixture
def restore_flag():
    """run_functions_eagerly is process-global: put the original value back whatever happens."""
    original = tf.config.functions_run_eagerly()
    try:
        yield original
    finally:
        tf.config.run_functions_eagerly(original)


def test_default_is_false(device, timed, restore_flag):
    with timed.region() as region:
        region.result = tf.config.functions_run_eagerly()
    assert region.result is False


@pytest.mark.parametrize("jit_compile", [False, True], ids=["function", "jit"])
@pytest.mark.parametrize("setting", [True, False], ids=["eager", "graph"])
@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16], ids=lambda d: d.name)
def test_setting_is_reported_and_obeyed(device, timed, restore_flag, dtype, setting, jit_compile):
    seen: list[bool] = []

    @tf.function(jit_compile=jit_compile)
    def affine(x):
        seen.append(tf.executing_eagerly())  # Python side effect: runs at trace time or on every eager call
        return x * 2.0 + 1.0

    data = np.array([-1.5, 0.0, 0.25, 3.0], np.float32)
    tf.config.run_functions_eagerly(setting)
    with timed.region() as region:
        flag = tf.config.functions_run_eagerly()
        out = [affine(tf.constant(data, dtype)) for _ in range(3)]
        region.result = flag
    assert region.result is setting
    # Run eagerly: the body runs (eagerly) on each of the 3 calls; otherwise it is traced once, as a graph.
    assert seen == ([True] * 3 if setting else [False])
    for value in out:
        assert value.dtype == dtype
        np.testing.assert_array_equal(tf.cast(value, tf.float32).numpy(), data * 2.0 + 1.0)


def test_flag_is_process_wide(device, timed, restore_flag):
    # Unlike device scopes, the setting is global: another thread sees it.
    tf.config.run_functions_eagerly(True)
    from_thread: list[bool] = []
    with timed.region() as region:
        worker = threading.Thread(target=lambda: from_thread.append(tf.config.functions_run_eagerly()))
        worker.start()
        worker.join()
        region.result = tf.config.functions_run_eagerly()
    assert region.result is True and from_thread == [True]


@pytest.mark.parametrize("value,expected", [(1, True), (0, False), ("", False), ([0], True)], ids=repr)
def test_truthy_values_become_booleans(device, timed, restore_flag, value, expected):
    tf.config.run_functions_eagerly(value)
    with timed.region() as region:
        region.result = tf.config.functions_run_eagerly()
    assert region.result is expected


def test_tf_data_functions_stay_graphs(device, timed, restore_flag):
    # Documented: the setting does not apply to tf.data functions.
    tf.config.run_functions_eagerly(True)
    seen: list[bool] = []

    def double(x):
        seen.append(tf.executing_eagerly())
        return x * 2

    with timed.region() as region:
        region.result = list(tf.data.Dataset.range(4).map(double).as_numpy_iterator())
        flag = tf.config.functions_run_eagerly()
    assert flag is True
    assert region.result == [0, 2, 4, 6]
    assert seen == [False]


def test_gradients_through_an_eagerly_run_function(device, timed, restore_flag):
    @tf.function
    def cube(x):
        return x**3

    tf.config.run_functions_eagerly(True)
    x = tf.constant([1.0, -2.0, 0.5], tf.float64)
    with timed.region() as region:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = cube(x)
        region.result = tape.gradient(y, x)
    np.testing.assert_allclose(region.result.numpy(), 3.0 * x.numpy() ** 2)
