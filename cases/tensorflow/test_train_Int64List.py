"""tf.train.Int64List: protobuf list of int64: contents, wire bytes by hand, range checks, parsing."""

import numpy as np
import pytest
import tensorflow as tf

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def varint(n: int) -> bytes:
    """Protobuf varint of an int64 (negative values as their 64-bit two's complement)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def packed(values: list[int]) -> bytes:
    """Field 1 (value), wire type 2 (packed), as proto3 packs repeated scalars."""
    payload = b"".join(varint(v) for v in values)
    return (b"\x0a" + varint(len(payload)) + payload) if values else b""


@pytest.mark.parametrize("count", [0, 1, 9, 131072], ids=lambda n: f"n{n}")  # 131072 int64: 1 MB
def test_int64list_values_and_wire_format(device, timed, count):
    values = np.random.default_rng(count).integers(INT64_MIN, INT64_MAX, count, dtype=np.int64, endpoint=True)
    with timed.region() as region:
        region.result = None
        msg = tf.train.Int64List(value=values.tolist())
        wire = msg.SerializeToString()
    assert list(msg.value) == values.tolist()
    assert wire == packed(values.tolist())
    assert tf.train.Int64List.FromString(wire) == msg


def test_int64list_hand_encoding(device, timed):
    with timed.region():
        wire = tf.train.Int64List(value=[1, 300, -1, 0]).SerializeToString()
    # 1 -> 01; 300 -> ac 02; -1 -> nine ff then 01 (ten bytes); 0 -> 00: 14 bytes of payload.
    assert wire == b"\x0a\x0e\x01\xac\x02" + b"\xff" * 9 + b"\x01\x00"


def test_int64list_extremes_and_numpy(device, timed):
    with timed.region():
        msg = tf.train.Int64List(value=[INT64_MIN, INT64_MAX, np.int64(-5), np.int32(7), np.uint8(255)])
    assert list(msg.value) == [INT64_MIN, INT64_MAX, -5, 7, 255]
    assert all(type(v) is int for v in msg.value)


def test_int64list_is_mutable_list(device, timed):
    with timed.region():
        msg = tf.train.Int64List()
        msg.value.append(3)
        msg.value.extend([4, 5])
        msg.value[0] = -3
        del msg.value[1]
    assert list(msg.value) == [-3, 5] and len(msg.value) == 2
    msg.Clear()
    assert list(msg.value) == [] and msg.SerializeToString() == b""


@pytest.mark.parametrize(
    ("bad", "error"),
    [(2**63, ValueError), (INT64_MIN - 1, ValueError), (1.5, TypeError), ("7", TypeError), (True, TypeError)],
    ids=["above_max", "below_min", "float", "str", "bool"],
)
def test_int64list_refusals(device, timed, bad, error):
    with pytest.raises(error), timed.region():
        tf.train.Int64List(value=[1, bad])


@pytest.mark.parametrize("count", [0, 5, 4096], ids=lambda n: f"n{n}")
def test_int64list_parsed_by_tensorflow(device, timed, count):
    values = np.random.default_rng(7).integers(INT64_MIN, INT64_MAX, count, dtype=np.int64, endpoint=True)
    with timed.region() as region:
        example = tf.train.Example(
            features=tf.train.Features(
                feature={"ids": tf.train.Feature(int64_list=tf.train.Int64List(value=values))}
            )
        )
        parsed = tf.io.parse_single_example(
            example.SerializeToString(), {"ids": tf.io.FixedLenFeature([count], tf.int64)}
        )
        region.result = parsed["ids"]
    assert region.result.dtype == tf.int64
    np.testing.assert_array_equal(region.result.numpy(), values)
