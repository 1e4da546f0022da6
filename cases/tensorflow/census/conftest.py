"""The TensorFlow census's failure reports in Python's own traceback format (pytest --tb=native).

A census subtest that fails re-raises the framework's exception; pytest's default report then
reads and parses the source of every TensorFlow frame it passes through (generated op wrappers of
tens of thousands of lines), ~0.4 s per failing subtest here, paid again by its confirmation, where
a third of the census's pairs fail by design (dtypes a kernel does not take). The rows never read
that report: a failure's type and message come from the exception itself (harness `_error_of`)."""

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.option.tbstyle = "native"
