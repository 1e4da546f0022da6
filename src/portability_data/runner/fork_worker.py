"""Fresh case workers made by fork, for confirmations: one subtest alone, without paying the
framework's import each time.

A failing subtest counts as the framework's failure once it fails again alone in a fresh worker
(supervisor `confirm_failures`). A spawned worker spends most of such a confirmation importing:
here 1.3 s for jax, 2.6 s for torch, 8.7 s for tensorflow, against a fraction of a second for most
subtests. This process does what a worker does before it touches the device (imports pytest, the
harness and the framework) and nothing more: no device, no op, no case. Then, per request, it
forks; the child is the fresh worker: it runs `worker.main` on that one request (device, timer
floor, ready, the subtest, done) and exits, and this process says how it ended (`exited`, the exit
status, negative for a signal). Nothing ran here that a spawned worker would not have done before
its first case, so the child is alone as a spawned one is; no compiled code, cache or earlier
case can be inherited, because none exists yet.

Forking is safe only where no other thread can hold a lock at the fork: the process refuses
(`fatal`) when a Python thread besides the main one exists, and reports its native thread count
(OpenBLAS's server thread, jemalloc's background thread: both libraries re-arm themselves at fork)
in `ready`, which the confirmation journals. The supervisor then falls back to spawned workers.
"""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from typing import Any, TextIO


def _emit(stream: TextIO, event: dict[str, Any]) -> None:
    stream.write(json.dumps(event, default=str) + "\n")
    stream.flush()


def native_threads() -> int:
    """Threads of this process as the kernel counts them (Python's and the libraries' own)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1


def main() -> int:
    events = os.fdopen(int(os.environ["PORTABILITY_EVENTS_FD"]), "w", buffering=1)
    framework = os.environ["PORTABILITY_FRAMEWORK"]
    try:
        import pytest  # noqa: F401 (imported here once, inherited by every child)

        from portability_data.runner import harness, worker  # noqa: F401

        __import__(framework)
    except Exception as exc:  # the framework does not import: the spawned path will say why
        _emit(events, {"event": "fatal", "error": f"{type(exc).__name__}: {exc}"})
        return 3
    if threading.active_count() != 1:
        names = ", ".join(thread.name for thread in threading.enumerate())
        _emit(events, {"event": "fatal", "error": f"not fork-safe: Python threads running ({names})"})
        return 3
    _emit(events, {"event": "ready", "native_threads": native_threads()})
    for line in sys.stdin:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the fresh worker: this one request, then gone
            code = 70
            try:
                sys.stdin = io.StringIO(line)
                code = worker.main()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        _emit(events, {"event": "exited", "returncode": os.waitstatus_to_exitcode(status)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
