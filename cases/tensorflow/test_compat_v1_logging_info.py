"""tf.compat.v1.logging.info: an INFO record on the 'tensorflow' logger, %-formatted, gated by verbosity."""

import contextlib
import logging
from collections.abc import Iterator

import numpy as np
import pytest
import tensorflow as tf

v1_logging = tf.compat.v1.logging


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def _captured(verbosity: int) -> Iterator[list[logging.LogRecord]]:
    """Records reaching the TensorFlow logger at the given verbosity; verbosity restored after."""
    logger = tf.get_logger()
    handler, before = _Collect(), v1_logging.get_verbosity()
    logger.addHandler(handler)
    v1_logging.set_verbosity(verbosity)
    try:
        yield handler.records
    finally:
        v1_logging.set_verbosity(before)
        logger.removeHandler(handler)


@pytest.mark.parametrize(
    "msg,args,expected",
    [
        ("%d steps", (5,), "5 steps"),
        ("loss=%.3f after %s", (0.12345, "warmup"), "loss=0.123 after warmup"),
        ("%(a)s-%(b)d", ({"a": "x", "b": 7},), "x-7"),
        ("no args: 100%", (), "no args: 100%"),  # without args the message is taken as is
        ("", (), ""),
    ],
    ids=["int", "float_str", "mapping", "no_args", "empty"],
)
def test_info_formats_message(device, timed, msg, args, expected):
    with _captured(v1_logging.INFO) as records, timed.region() as region:
        region.result = v1_logging.info(msg, *args)
    assert len(records) == 1
    record = records[0]
    assert record.getMessage() == expected
    assert record.levelno == logging.INFO == v1_logging.INFO and record.levelname == "INFO"
    assert record.name == "tensorflow"


DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16, tf.int32]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_info_formats_tensor_values(device, timed, dtype):
    """A tensor argument is formatted at logging time: %s gives its str, %.1f its (scalar) value."""
    vector = tf.constant([1.5, -2.0], dtype) if dtype.is_floating else tf.constant([3, -4], dtype)
    scalar = tf.reduce_sum(vector)
    with _captured(v1_logging.INFO) as records, timed.region() as region:
        region.result = v1_logging.info("v=%s sum=%.1f", vector, scalar)
    expected_sum = float(np.sum(tf.cast(vector, tf.float64).numpy()))
    assert records[0].getMessage() == f"v={vector!s} sum={expected_sum:.1f}"
    assert dtype.name in records[0].getMessage()


@pytest.mark.parametrize(
    "verbosity,emitted",
    [("DEBUG", True), ("INFO", True), ("WARN", False), ("ERROR", False), ("FATAL", False)],
)
def test_info_is_gated_by_verbosity(device, timed, verbosity, emitted):
    with _captured(getattr(v1_logging, verbosity)) as records, timed.region() as region:
        region.result = v1_logging.info("gated %d", 1)
    assert len(records) == (1 if emitted else 0)


@pytest.mark.parametrize("size", [1, 1000, 1 << 20], ids=str)
def test_info_long_messages(device, timed, size):
    """Messages up to 1 MB arrive whole, non-ASCII included."""
    text = ("αβ" * size)[:size]
    with _captured(v1_logging.INFO) as records, timed.region() as region:
        region.result = v1_logging.info("%s", text)
    assert records[0].getMessage() == text


def test_info_reports_the_callers_location(device, timed):
    """The record points at the calling line in this file, not at TensorFlow's wrapper."""
    with _captured(v1_logging.INFO) as records, timed.region() as region:
        region.result = v1_logging.info("where")
    assert records[0].filename == "test_compat_v1_logging_info.py"
    assert records[0].funcName == "test_info_reports_the_callers_location"


def test_info_with_exc_info(device, timed):
    with _captured(v1_logging.INFO) as records, timed.region() as region:
        try:
            raise ValueError("boom")
        except ValueError:
            region.result = v1_logging.info("failed step %d", 3, exc_info=True)
    assert records[0].getMessage() == "failed step 3"
    assert records[0].exc_info is not None and records[0].exc_info[0] is ValueError


def test_info_refuses_unknown_keyword(device, timed):
    with _captured(v1_logging.INFO), pytest.raises(TypeError), timed.region():
        v1_logging.info("x", colour="red")
