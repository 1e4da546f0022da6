"""tf.dtypes.as_dtype: maps NumPy dtypes, type names, DataType enums and DType objects to tf.DType.

The timed function converts the dtype and casts its input to it (in compiled mode inside
tf.function(jit_compile=True), where the conversion happens at trace time), as user code picks a dtype."""

import numpy as np
import pytest
import tensorflow as tf

PAIRS = [
    (np.float32, tf.float32),
    (np.float64, tf.float64),
    (np.float16, tf.float16),
    (np.int8, tf.int8),
    (np.int16, tf.int16),
    (np.int32, tf.int32),
    (np.int64, tf.int64),
    (np.uint8, tf.uint8),
    (np.uint16, tf.uint16),
    (np.uint32, tf.uint32),
    (np.uint64, tf.uint64),
    (np.bool_, tf.bool),
    (np.complex64, tf.complex64),
    (np.complex128, tf.complex128),
]


@pytest.mark.parametrize("np_type,expected", PAIRS, ids=lambda v: getattr(v, "name", ""))
def test_as_dtype_from_numpy(device, timed, np_type, expected):
    seen = []

    def f(x):
        from_type, from_dtype = tf.dtypes.as_dtype(np_type), tf.dtypes.as_dtype(np.dtype(np_type))
        seen.append((from_type, from_dtype))
        return tf.cast(x, from_type)

    out = timed(f, tf.constant([0, 1, 2]))
    from_type, from_dtype = seen[-1]
    assert from_type == expected and from_dtype == expected
    assert out.dtype == expected
    np.testing.assert_array_equal(out.numpy(), np.array([0, 1, 2]).astype(np_type))
    assert from_type.as_numpy_dtype == np_type
    assert from_type.size == np.dtype(np_type).itemsize


@pytest.mark.parametrize(
    "name,expected",
    [
        ("float32", tf.float32),
        ("bfloat16", tf.bfloat16),
        ("string", tf.string),
        ("half", tf.float16),
        ("double", tf.float64),
        ("resource", tf.resource),
        ("variant", tf.variant),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_as_dtype_from_name(device, timed, name, expected):
    seen = []

    def f(x):
        dt = tf.dtypes.as_dtype(name)
        seen.append(dt)
        # string, resource and variant hold no numbers to cast to: the input passes through.
        return tf.cast(x, dt) if dt.is_numpy_compatible and dt != tf.string else tf.identity(x)

    out = timed(f, tf.constant([1.5, -2.0]))
    assert seen[-1] == expected
    if expected not in (tf.string, tf.resource, tf.variant):
        assert out.dtype == expected
        np.testing.assert_array_equal(out.numpy().astype(np.float64), [1.5, -2.0])


def test_as_dtype_enum_and_identity(device, timed):
    seen = []

    def f(x):
        dts = [tf.dtypes.as_dtype(d.as_datatype_enum) for d in (tf.float32, tf.int64, tf.bfloat16)]
        seen.append(dts)
        return [tf.cast(x, d) for d in dts]

    out = timed(f, tf.constant([3.0]))
    assert seen[-1] == [tf.float32, tf.int64, tf.bfloat16]
    assert [o.dtype for o in out] == [tf.float32, tf.int64, tf.bfloat16]
    assert [float(o.numpy()[0]) for o in out] == [3.0, 3.0, 3.0]
    assert tf.dtypes.as_dtype(tf.float16) is tf.float16
    assert tf.dtypes.as_dtype(float) == tf.float32 and tf.dtypes.as_dtype(bool) == tf.bool
    with pytest.raises(TypeError):
        tf.dtypes.as_dtype(int)  # Python int has no single width: rejected


def test_as_dtype_properties_round_trip(device, timed):
    """A dtype's properties survive the conversion and a tensor of it has that dtype on the device."""
    seen = []

    def f(x):
        dt = tf.dtypes.as_dtype("bfloat16")
        seen.append(dt)
        return tf.zeros((3,), dtype=dt) + tf.cast(x, dt)

    out = timed(f, tf.constant([0.5, 1.0, 2.0]))
    dt = seen[-1]
    assert out.dtype == dt
    np.testing.assert_array_equal(out.numpy().astype(np.float64), [0.5, 1.0, 2.0])
    assert dt.is_floating and not dt.is_integer and dt.size == 2
    t = tf.zeros((3,), dtype=dt)
    assert t.dtype == dt
    assert tf.dtypes.as_dtype("int8").min == -128 and tf.dtypes.as_dtype("uint16").max == 65535


@pytest.mark.parametrize(
    "bad", ["float31", object(), np.dtype([("a", np.int32)])], ids=["name", "object", "record"]
)
def test_as_dtype_rejects_unknown(device, timed, bad):
    with pytest.raises(TypeError):
        timed(lambda x: tf.cast(x, tf.dtypes.as_dtype(bad)), tf.constant([1.0]))
