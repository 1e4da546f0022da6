"""An interrupted run: Ctrl-C, or SIGTERM and SIGHUP, which the cli turns into the same interrupt.

A run's case workers lead sessions of their own (worker_process: a hung case is killed with its
whole group), so a signal to the runner's process group does not reach them, and a runner killed by
SIGTERM's default action would leave them running on, unwatched. Interrupted instead, the runner kills
them and journals nothing more (supervisor.run), then says how to resume or close the run.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any


class RunInterrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C; SIGTERM or SIGHUP through the cli) after its journal
    started: its workers are gone, its rows so far are journaled, and `run_id` resumes or closes it."""

    def __init__(self, run_id: str) -> None:
        super().__init__(run_id)
        self.run_id = run_id


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP (a `kill`, a closed terminal) interrupt like Ctrl-C while a run runs, so that
    it ends its workers (each leads a session of its own, out of reach of a kill of the runner's
    group) instead of leaving them to run on unwatched."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    before = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
