"""tf.compat.v1.train.Feature: the bytes/float/int64 oneof of tf.train.Example: wire bytes, parsing."""

import struct

import numpy as np
import pytest
import tensorflow as tf


def test_feature_kinds(device, timed):
    with timed.region():
        empty = tf.compat.v1.train.Feature()
        b = tf.compat.v1.train.Feature(bytes_list=tf.train.BytesList(value=[b"a", b"\x00\xff"]))
        f = tf.compat.v1.train.Feature(float_list=tf.train.FloatList(value=[1.5, -2.0]))
        i = tf.compat.v1.train.Feature(int64_list=tf.train.Int64List(value=[3, -4]))
    assert empty.WhichOneof("kind") is None and empty.SerializeToString() == b""
    assert (b.WhichOneof("kind"), list(b.bytes_list.value)) == ("bytes_list", [b"a", b"\x00\xff"])
    assert (f.WhichOneof("kind"), list(f.float_list.value)) == ("float_list", [1.5, -2.0])
    assert (i.WhichOneof("kind"), list(i.int64_list.value)) == ("int64_list", [3, -4])


def test_feature_oneof_switches(device, timed):
    with timed.region():
        feature = tf.compat.v1.train.Feature(float_list=tf.train.FloatList(value=[1.0]))
        feature.int64_list.value.append(7)  # writing another member clears the first
    assert feature.WhichOneof("kind") == "int64_list"
    assert not feature.HasField("float_list") and list(feature.float_list.value) == []


def test_feature_wire_bytes(device, timed):
    with timed.region():
        i = tf.compat.v1.train.Feature(int64_list=tf.train.Int64List(value=[1])).SerializeToString()
        f = tf.compat.v1.train.Feature(float_list=tf.train.FloatList(value=[1.0, -0.0])).SerializeToString()
        b = tf.compat.v1.train.Feature(bytes_list=tf.train.BytesList(value=[b"hi"])).SerializeToString()
    # Field numbers: bytes_list 1, float_list 2, int64_list 3; floats packed as little-endian float32.
    assert i == b"\x1a\x03\x0a\x01\x01"
    assert f == b"\x12\x0a\x0a\x08" + struct.pack("<2f", 1.0, -0.0)
    assert b == b"\x0a\x04\x0a\x02hi"


def test_feature_floats_are_float32(device, timed):
    data = np.array([0.1, 1e40, -1e-50, np.nan, -np.inf, -0.0, 3.4028235e38])
    with timed.region():
        feature = tf.compat.v1.train.Feature(float_list=tf.train.FloatList(value=data.tolist()))
    got = np.array(feature.float_list.value)
    # Stored as float32: NumPy's rounding, overflow to inf, underflow to a signed zero, NaN kept.
    with np.errstate(over="ignore"):
        expected = data.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(got, expected)
    assert np.signbit(got[2]) and np.signbit(got[5])


@pytest.mark.parametrize(
    ("kind", "dtype"),
    [("float_list", tf.float32), ("int64_list", tf.int64), ("bytes_list", tf.string)],
)
@pytest.mark.parametrize("count", [0, 3, 262144], ids=lambda n: f"n{n}")  # 262144 float32: 1 MB
def test_feature_parsed_by_tensorflow(device, timed, kind, dtype, count):
    rng = np.random.default_rng(count)
    if kind == "float_list":
        values = rng.standard_normal(count).astype(np.float32)
        feature = tf.compat.v1.train.Feature(float_list=tf.train.FloatList(value=values))
    elif kind == "int64_list":
        values = rng.integers(-(2**40), 2**40, count)
        feature = tf.compat.v1.train.Feature(int64_list=tf.train.Int64List(value=values))
    else:
        values = np.array([f"w{v}".encode() for v in rng.integers(0, 1000, count)], dtype=object)
        feature = tf.compat.v1.train.Feature(bytes_list=tf.train.BytesList(value=list(values)))
    with timed.region() as region:
        serialized = tf.train.Example(features=tf.train.Features(feature={"x": feature})).SerializeToString()
        parsed = tf.io.parse_single_example(serialized, {"x": tf.io.FixedLenFeature([count], dtype)})
        region.result = parsed["x"]
    assert region.result.dtype == dtype and tuple(region.result.shape) == (count,)
    np.testing.assert_array_equal(region.result.numpy(), values)


@pytest.mark.parametrize(
    "make",
    [
        lambda: tf.compat.v1.train.Feature(int64_list=[1, 2]),  # a list is not an Int64List message
        lambda: tf.compat.v1.train.Feature(bytes_list=tf.train.BytesList(value=["text"])),  # str is not bytes
        lambda: tf.compat.v1.train.Feature(float_list=tf.train.FloatList(value=["1.0"])),
        lambda: tf.compat.v1.train.Feature(int64_list=tf.train.FloatList(value=[1.0])),  # wrong message type
    ],
    ids=["list_for_message", "str_for_bytes", "str_for_float", "wrong_message"],
)
def test_feature_refusals(device, timed, make):
    with pytest.raises(TypeError), timed.region():
        make()


def test_feature_unknown_field(device, timed):
    with pytest.raises(ValueError), timed.region():
        tf.compat.v1.train.Feature(string_list=None)
