"""tf.get_logger: the "tensorflow" logging.Logger, its level shared with tf.compat.v1.logging, its records."""

import logging

import pytest
import tensorflow as tf

# get_logger is a host-side accessor of a Python logging.Logger: nothing in it is a tensor computation
# that tf.function(jit_compile=True) could take, so every subtest is timed with timed.region().


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def capture():
    """A handler on the tensorflow logger; the logger's level and handlers are restored afterwards."""
    logger = logging.getLogger("tensorflow")
    handler, level = _Capture(), logger.level
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_get_logger_is_the_tensorflow_logger(device, timed):
    with timed.region() as region:
        first, second = tf.get_logger(), tf.get_logger()
        region.result = first
    assert isinstance(first, logging.Logger)
    assert first is second is logging.getLogger("tensorflow")
    assert first.name == "tensorflow"


LEVELS = [logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL]


@pytest.mark.parametrize("threshold", LEVELS, ids=logging.getLevelName)
@pytest.mark.parametrize("level", LEVELS, ids=logging.getLevelName)
def test_get_logger_filters_by_level(device, timed, capture, level, threshold):
    with timed.region() as region:
        logger = tf.get_logger()
        logger.setLevel(threshold)
        logger.log(level, "value %d of %s", 42, "x")
        region.result = list(capture.records)
    if level >= threshold:
        (record,) = capture.records
        assert record.levelno == level and record.name == "tensorflow"
        assert record.getMessage() == "value 42 of x"
    else:
        assert capture.records == []


@pytest.mark.parametrize("verbosity", [logging.DEBUG, logging.INFO, logging.ERROR], ids=logging.getLevelName)
def test_get_logger_level_shared_with_v1_logging(device, timed, capture, verbosity):
    # tf.compat.v1.logging.set_verbosity sets this logger's level, and get_verbosity reads it back.
    with timed.region() as region:
        tf.compat.v1.logging.set_verbosity(verbosity)
        logger = tf.get_logger()
        region.result = logger.level
    assert logger.getEffectiveLevel() == verbosity
    logger.setLevel(logging.WARNING)
    assert tf.compat.v1.logging.get_verbosity() == logging.WARNING


def test_get_logger_receives_v1_logging_calls(device, timed, capture):
    tf.get_logger().setLevel(logging.INFO)
    with timed.region() as region:
        tf.compat.v1.logging.info("info %s", "a")
        tf.compat.v1.logging.error("error %s", "b")
        region.result = list(capture.records)
    assert [(r.levelname, r.getMessage()) for r in capture.records] == [
        ("INFO", "info a"),
        ("ERROR", "error b"),
    ]
    # Through the tf_logging wrappers, the record names the function that logged.
    assert {r.funcName for r in capture.records} == {"test_get_logger_receives_v1_logging_calls"}


def _log_here(logger: logging.Logger) -> int:
    line = _log_here.__code__.co_firstlineno + 2
    logger.warning("from helper")
    return line


def test_get_logger_record_names_the_caller(device, timed, capture):
    # The logging documentation: funcName, filename and lineno of a record are those of the logging call.
    with timed.region() as region:
        line = _log_here(tf.get_logger())
        region.result = list(capture.records)
    (record,) = capture.records
    assert record.getMessage() == "from helper"
    assert (record.funcName, record.filename, record.lineno) == ("_log_here", "test_get_logger.py", line)


def test_get_logger_large_message(device, timed, capture):
    """A 1 MB message passes intact."""
    text = "ab" * (1 << 19)
    with timed.region() as region:
        tf.get_logger().error(text)
        region.result = list(capture.records)
    (record,) = capture.records
    assert record.getMessage() == text
