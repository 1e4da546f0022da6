"""tf.compat.v1.logging.warn: a WARNING record on the tensorflow logger, %-formatted lazily, filtered."""

import contextlib
import logging
from collections.abc import Iterator

import pytest
import tensorflow as tf

v1 = tf.compat.v1


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def recorded(verbosity: int = logging.INFO) -> Iterator[Recorder]:
    """Records the TensorFlow logger's output at a verbosity, restoring the logger afterwards.

    The recorder is the only handler meanwhile (no propagation to pytest's capture or the root logger), so
    what a record does is decided here, not by whichever handlers the process happens to have."""
    logger = tf.get_logger()
    previous = v1.logging.get_verbosity()
    handlers, propagate = list(logger.handlers), logger.propagate
    handler = Recorder()
    for old in handlers:
        logger.removeHandler(old)
    logger.addHandler(handler)
    logger.propagate = False
    v1.logging.set_verbosity(verbosity)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        for old in handlers:
            logger.addHandler(old)
        logger.propagate = propagate
        v1.logging.set_verbosity(previous)


@pytest.mark.parametrize(
    ("msg", "args"),
    [
        ("plain message", ()),
        ("step %d of %s: loss=%.3f", (7, "train", 0.123456)),
        ("%r and %%", ({"k": [1, 2]},)),
        ("unicode: %s", ("日本語 🙂",)),
    ],
    ids=["plain", "mixed", "repr_percent", "unicode"],
)
def test_warn_formats_message(device, timed, msg, args):
    with recorded() as rec, timed.region() as region:
        region.result = v1.logging.warn(msg, *args)
    assert region.result is None
    assert len(rec.records) == 1
    record = rec.records[0]
    assert record.levelno == logging.WARNING and record.levelname == "WARNING"
    assert record.name == "tensorflow"
    assert record.getMessage() == msg % args


def test_warn_reports_the_caller(device, timed):
    # TensorFlow's logger skips its own frames, so the record names this file and function.
    with recorded() as rec, timed.region():
        v1.logging.warn("where")
    assert rec.records[0].pathname == __file__
    assert rec.records[0].funcName == "test_warn_reports_the_caller"


@pytest.mark.parametrize(
    ("verbosity", "emitted"),
    [(logging.DEBUG, True), (logging.WARNING, True), (logging.ERROR, False), (logging.FATAL, False)],
    ids=["debug", "warning", "error", "fatal"],
)
def test_warn_respects_verbosity(device, timed, verbosity, emitted):
    before = v1.logging.get_verbosity()
    with recorded(verbosity) as rec, timed.region():
        v1.logging.warn("filtered? %s", verbosity)
    assert len(rec.records) == int(emitted)
    assert v1.logging.get_verbosity() == before


def test_warn_same_as_warning(device, timed):
    with recorded() as rec, timed.region():
        v1.logging.warn("a %d", 1)
        v1.logging.warning("a %d", 1)
    first, second = rec.records
    assert (first.levelno, first.getMessage()) == (second.levelno, second.getMessage())


def test_warn_large_message(device, timed):
    text = "x" * (1 << 20)  # 1 MB passes through unchanged
    with recorded() as rec, timed.region():
        v1.logging.warn("%s", text)
    assert rec.records[0].getMessage() == text


def test_warn_exc_info(device, timed):
    with recorded() as rec:
        try:
            raise KeyError("missing")
        except KeyError:
            with timed.region():
                v1.logging.warn("caught", exc_info=True)
    exc_type, exc, _ = rec.records[0].exc_info
    assert exc_type is KeyError and exc.args == ("missing",)


def test_warn_bad_arguments_fail_lazily(device, timed):
    # Formatting is deferred to the handler: the call succeeds, rendering the message raises.
    with recorded() as rec, timed.region():
        v1.logging.warn("%d items", "not a number")
    with pytest.raises(TypeError):
        rec.records[0].getMessage()
