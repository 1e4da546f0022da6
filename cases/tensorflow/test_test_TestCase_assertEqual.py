"""tf.test.TestCase.assertEqual (paper: assert_equal): unittest's assertEqual as inherited by TF's TestCase,
applied to Python values and to scalar TF tensors (whose == runs on the device)."""

import numpy as np
import pytest
import tensorflow as tf


@pytest.fixture
def case():
    return tf.test.TestCase()


@pytest.mark.parametrize(
    "dtype",
    [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.bool],
    ids=lambda d: d.name,
)
def test_equal_scalar_tensors(device, timed, case, dtype):
    a = tf.cast(tf.constant(1), dtype)
    b = tf.cast(tf.constant(1.0), dtype)
    with timed.region() as region:
        region.result = case.assertEqual(a, b)
    other = tf.cast(tf.constant(0), dtype)
    with pytest.raises(AssertionError):
        case.assertEqual(a, other)


@pytest.mark.parametrize(
    "first,second",
    [
        (3, 3),
        ("abc", "abc"),
        ([1, [2, 3]], [1, [2, 3]]),
        ({"a": (1, 2)}, {"a": (1, 2)}),
        (1, 1.0),
        (list(range(200000)), list(range(200000))),
    ],
    ids=["int", "str", "list", "dict", "int-float", "large-list"],
)
def test_equal_python_values(device, timed, case, first, second):
    with timed.region() as region:
        region.result = case.assertEqual(first, second)


@pytest.mark.parametrize(
    "first,second",
    [(3, 4), ("abc", "abd"), ([1, 2], [1, 2, 3]), ((1,), [1])],
    ids=["int", "str", "list", "tuple-list"],
)
def test_unequal_raises_with_message(device, timed, case, first, second):
    with pytest.raises(AssertionError, match="custom note"), timed.region():
        case.assertEqual(first, second, msg="custom note")


def test_tensor_value_from_computation(device, timed, case):
    x = tf.reduce_sum(tf.ones((512, 1024)))
    with timed.region() as region:
        region.result = case.assertEqual(x, 512 * 1024)
    np.testing.assert_equal(x.numpy(), 524288.0)


def test_non_scalar_tensor_is_ambiguous(device, timed, case):
    with pytest.raises(ValueError), timed.region():
        case.assertEqual(tf.constant([1, 2]), tf.constant([1, 2]))


def test_dicts_go_through_tf_assert_dict_equal(device, timed, case):
    """For dicts unittest dispatches to assertDictEqual, which TF overrides (assertAllEqual per key)."""
    with timed.region() as region:
        region.result = case.assertEqual({"a": np.array([1, 2])}, {"a": np.array([1, 2])})
    with pytest.raises(AssertionError):
        case.assertEqual({"a": 1}, {"a": 2})
    with pytest.raises(AssertionError):
        case.assertEqual({"a": 1}, {"b": 1})
