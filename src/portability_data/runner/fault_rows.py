"""Rows for subtests that produced no result of their own: one a run limit or a worker fault
stopped (timeout, memory, crashed), and a later repeat's row for one a limit stopped before
(NotRerun). The runner writes them in its place; each message says what stopped it and where."""

from __future__ import annotations

from typing import Any

from portability_data.runner.spec import RunSpec
from portability_data.runner.worker_process import WorkerHung, WorkerOverMemory


def limit_message(outcome: str, spec: RunSpec) -> str:
    """What stopped a subtest at a run limit (contracts.LIMIT_OUTCOMES), in the run's own figures."""
    if outcome == "timeout":
        return f"no result after {spec.timeout_s:g} s"
    return f"worker resident memory passed the cap of {spec.memory_mb} MB"


def _kind(fault: Exception) -> tuple[str, str, str]:
    """(outcome, error type, moment of its last words) of a worker fault: the one dispatch on its
    class, for the row (describe_fault) and for where it was (runner.last_words)."""
    if isinstance(fault, WorkerHung):
        return "timeout", "Timeout", "timeout"
    if isinstance(fault, WorkerOverMemory):
        return "memory", "MemoryCapExceeded", "memory cap"
    return "crashed", "WorkerCrashed", "crash"


def fault_moment(fault: Exception) -> str:
    """The moment a worker's last words are of (runner.last_words)."""
    return _kind(fault)[2]


def describe_fault(fault: Exception, spec: RunSpec, where: str | None = None) -> tuple[str, str, str]:
    """(outcome, error type, message) of a subtest that took its worker down; `where`: the
    worker's last words (where it was), appended when it left some."""
    outcome, error_type, _ = _kind(fault)
    if outcome == "timeout":
        message = limit_message("timeout", spec)
    elif outcome == "memory":
        message = f"{fault} of {spec.memory_mb} MB"
    else:
        message = str(fault)
    return outcome, error_type, f"{message}; {where}" if where else message


def not_rerun_event(test_id: str, first: int, outcome: str, spec: RunSpec) -> dict[str, Any]:
    """The row of a later repeat of a subtest a run limit stopped: not run, and saying why, so
    that every repeat still has its row and none claims an outcome."""
    return fault_event(
        test_id,
        "skipped",
        "NotRerun",
        f"not run in this repeat: the run stopped it in repeat {first + 1} "
        f"({outcome}: {limit_message(outcome, spec)}); "
        "a later repeat can change neither its failed status nor give it a latency",
    )


def fault_event(test_id: str, outcome: str, error_type: str, message: str) -> dict[str, Any]:
    """A result event with no timings, as the worker would have sent had it answered."""
    return {
        "test_id": test_id,
        "outcome": outcome,
        "error_type": error_type,
        "error_message": message,
        "op_latencies_ms": [],
        "test_time_ms": None,
    }
