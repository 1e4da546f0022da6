"""tf.strings.length: per-element string length in bytes or UTF-8 code points, against Python's len."""

import numpy as np
import pytest
import tensorflow as tf

WORDS = ["", "a", "héllo", "日本語", "🙂x", "tab\tnew\nline", "\x00nul"]


def byte_lengths(words: np.ndarray) -> np.ndarray:
    return np.vectorize(lambda w: len(w.encode("utf-8")), otypes=[np.int32])(words)


def char_lengths(words: np.ndarray) -> np.ndarray:
    return np.vectorize(len, otypes=[np.int32])(words)


@pytest.mark.parametrize("unit", ["BYTE", "UTF8_CHAR"])
def test_length_units(device, timed, unit):
    words = np.array(WORDS, dtype=object)
    out = timed(tf.strings.length, tf.constant(list(words)), unit=unit)
    assert out.dtype == tf.int32 and tuple(out.shape) == (len(WORDS),)
    expected = byte_lengths(words) if unit == "BYTE" else char_lengths(words)
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0), (3, 5), (1, 2, 3)], ids=str)
def test_length_shapes(device, timed, shape):
    rng = np.random.default_rng(0)
    words = np.array(rng.choice(WORDS, size=shape), dtype=object)
    out = timed(tf.strings.length, tf.constant(words.tolist() if shape else str(words), tf.string))
    assert tuple(out.shape) == shape
    np.testing.assert_array_equal(out.numpy(), byte_lengths(words))


def test_length_large(device, timed):
    # 65536 strings of 0..31 random ASCII letters: about 1 MB of text.
    rng = np.random.default_rng(1)
    sizes = rng.integers(0, 32, 65536)
    letters = rng.integers(97, 123, int(sizes.sum())).astype(np.uint8).tobytes()
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    words = [letters[s : s + n] for s, n in zip(starts, sizes)]
    out = timed(tf.strings.length, tf.constant(words))
    np.testing.assert_array_equal(out.numpy(), sizes)


def test_length_of_raw_bytes(device, timed):
    # BYTE counts any bytes; UTF8_CHAR counts the bytes that start a code point (not 10xxxxxx).
    data = [b"\xe6\x97\xa5", b"\xff\xfe", b"ab\xc3\xa9"]
    x = tf.constant(data)
    np.testing.assert_array_equal(timed(tf.strings.length, x).numpy(), [3, 2, 4])
    np.testing.assert_array_equal(timed(tf.strings.length, x, unit="UTF8_CHAR").numpy(), [1, 2, 3])


def test_length_refuses_bad_unit(device, timed):
    # Eager checks the op's allowed attr values (InvalidArgumentError); graph building says ValueError.
    with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.strings.length, tf.constant(["abc"]), unit="UTF16_CHAR")


def test_length_refuses_numbers(device, timed):
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError)):
        timed(tf.strings.length, tf.constant([1, 2, 3]))
