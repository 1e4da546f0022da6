"""Confirmations: a failing subtest re-run alone in a fresh worker, and how that worker was made.

A failing row counts as the framework's failure only if the subtest fails again with nothing run
before it in its process (no earlier case, no framework cache, no compiled code). The fresh worker
is forked from a process that has imported the framework and touched nothing else
(`fork_worker`), or, where that process refuses (a thread that could hold a lock at the fork) or
cannot start, spawned as a new interpreter as the runner's workers are. Both are alone; forking
skips the import (seconds per confirmation, most of its cost). Each verdict journals which it was
(`worker`: fork or spawn), the forking process's native thread count, and what it had read before
forking (`preloaded`: the census manifests, torch's test databases, an export path's packages;
fork_worker.preload).

A row that says the case never ran its subtests (`<collection>`: a collection error, or the worker
crashing outside any subtest, as torch's c10d thread aborting after a test) is confirmed the same
way, by its whole case alone (the case file, or a census entry's node ids): the fault again (a
collection error, a crash or a timeout outside any subtest) confirms it; a case that then runs
through to its end is order-dependent, whatever its subtests' own outcomes (they are rows of their
own); a fault while one of its subtests runs is that subtest's, so the case's verdict is
inconclusive.

Each thread of the confirming pool keeps its own forking process and replaces it after a timeout
or a memory kill (those take the whole process group down). An interrupted run (Ctrl-C, SIGTERM)
kills every worker of the pool at once and starts no other: verdicts journaled so far stay, the rest
are confirmed when the run is resumed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.worker_process import (
    FORK_WORKER_MODULE,
    WORKER_MODULE,
    Worker,
    WorkerDied,
    WorkerOverMemory,
    describe_exit,
    ready_timeout,
)

METHODS = ("fork", "spawn")


class AloneRunner:
    """Runs one subtest at a time, each in a fresh worker; safe to share across a thread pool."""

    def __init__(
        self, spec: RunSpec, paths: Paths, scratch: Path, log_path: Path, method: str = "fork"
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown confirmation method {method!r}; use one of {', '.join(METHODS)}")
        self.spec, self.paths, self.scratch, self.log_path = spec, paths, scratch, log_path
        self.method = method
        self._local = threading.local()
        self._workers: list[Worker] = []  # started and not yet killed: all ended on an interrupt
        self._lock = threading.Lock()
        self._interrupted = False
        self.fork_refused: str | None = None  # why forking fell back to spawning, once it did

    def run(self, test_id: str, nodes: list[str] | None = None) -> dict[str, Any]:
        """{outcome, error_type, worker, native_threads, preloaded} of the subtest run by itself; with
        `nodes` (a `<collection>` row's whole case), of the case: `passed` if it ran to its end."""
        nodes = nodes or [test_id]
        forker = self._forker() if self.method == "fork" else None
        if forker is None:
            outcome, error_type = self._spawned(nodes, whole=nodes != [test_id])
            return {
                "outcome": outcome,
                "error_type": error_type,
                "worker": "spawn",
                "native_threads": None,
                "preloaded": [],
            }
        worker, threads, preloaded = forker
        outcome, error_type = self._forked(worker, nodes, whole=nodes != [test_id])
        return {
            "outcome": outcome,
            "error_type": error_type,
            "worker": "fork",
            "native_threads": threads,
            "preloaded": preloaded,
        }

    def close(self) -> None:
        with self._lock:
            for worker in self._workers:
                worker.stop()
            self._workers.clear()

    @contextlib.contextmanager
    def stopped_on_interrupt(self, pool: ThreadPoolExecutor) -> Iterator[None]:
        """On an exception out of the block (an interrupt), end every worker now (each thread then
        sees its worker gone and returns) and cancel the queued subtests, so that the pool's exit
        does not wait out the running ones' timeouts."""
        try:
            yield
        except BaseException:
            with self._lock:
                self._interrupted = True
                for worker in self._workers:
                    worker.signal_kill()
            pool.shutdown(wait=False, cancel_futures=True)
            raise

    def _start(self, module: str) -> tuple[Worker, dict[str, Any] | None, str]:
        """A worker of `module` (kept in `_workers` until it is killed) and its first event if it is
        `ready` (else None and why)."""
        with self._lock:
            if self._interrupted:
                raise RuntimeError("the run was interrupted: no worker is started")
            worker = Worker(self.spec, self.paths, self.scratch, self.log_path, module=module)
            self._workers.append(worker)
        try:
            first = worker.next_event(timeout=ready_timeout(self.spec))
        except (WorkerDied, WorkerOverMemory) as exc:
            self._kill(worker)
            return worker, None, str(exc)
        if first is None or first.get("event") != "ready":
            self._kill(worker)
            return worker, None, (first or {}).get("error") or "no answer"
        return worker, first, ""

    def _kill(self, worker: Worker) -> None:
        worker.kill()
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)

    def _forker(self) -> tuple[Worker, int, list[str]] | None:
        """This thread's forking process (started if it has none or it ended); None: spawn."""
        if self.fork_refused is not None:
            return None
        current: tuple[Worker, int, list[str]] | None = getattr(self._local, "forker", None)
        if current is not None and current[0].process.poll() is None:
            return current
        worker, ready, why = self._start(FORK_WORKER_MODULE)
        if ready is None:
            self.fork_refused = why
            return None
        forker = (worker, int(ready.get("native_threads", -1)), list(ready.get("preloaded", [])))
        self._local.forker = forker
        return forker

    def _discard_forker(self) -> None:
        self._kill(self._local.forker[0])
        self._local.forker = None

    def _forked(self, worker: Worker, nodes: list[str], whole: bool) -> tuple[str, str | None]:
        """The child's result events, then its exit: a child that died before `done` crashed. A
        `whole` case passes when it runs to its end (its subtests' outcomes are not its own)."""
        worker.send({"select": [str(self.paths.repo_root / node) for node in nodes]})
        outcome: tuple[str, str | None] = ("passed", None) if whole else ("unknown", None)
        finished, running = False, None
        try:
            while True:
                event = worker.next_event(timeout=self.spec.timeout_s)
                if event is None:
                    self._discard_forker()
                    return _fault("timeout", "Timeout", whole, running)
                kind = event.get("event")
                if kind == "start":
                    running = event.get("test_id")
                elif kind == "result" and event.get("when") != "collect":
                    running = None
                    outcome = outcome if whole else (event["outcome"], event.get("error_type"))
                elif kind == "result":
                    outcome, finished = ("error", event.get("error_type")), True
                elif kind in ("done", "internal"):
                    finished = True
                elif kind == "fatal":  # the child found no device: says nothing of the subtest
                    outcome, finished = ("unknown", event.get("error")), True
                elif kind == "exited":
                    code = event.get("returncode")
                    if finished or code == 0:
                        return outcome
                    return _fault("crashed", describe_exit(code), whole, running)
        except WorkerDied as died:  # the forking process itself went: not the subtest's doing
            self._discard_forker()
            return ("unknown", f"forking worker ended ({describe_exit(died.returncode)})")
        except WorkerOverMemory:
            self._discard_forker()
            return _fault("memory", "MemoryCapExceeded", whole, running)

    def _spawned(self, nodes: list[str], whole: bool) -> tuple[str, str | None]:
        """The subtest (or the `whole` case) in a new interpreter, killed afterwards."""
        worker, ready, why = self._start(WORKER_MODULE)
        if ready is None:
            return ("unknown", f"worker did not start: {why}")
        running = None
        try:
            worker.send({"select": [str(self.paths.repo_root / node) for node in nodes]})
            outcome: tuple[str, str | None] = ("passed", None) if whole else ("unknown", None)
            while True:
                event = worker.next_event(timeout=self.spec.timeout_s)
                if event is None:
                    return _fault("timeout", "Timeout", whole, running)
                if event.get("event") == "start":
                    running = event.get("test_id")
                elif event.get("event") == "result" and event.get("when") != "collect":
                    running = None
                    outcome = outcome if whole else (event["outcome"], event.get("error_type"))
                elif event.get("event") == "result":
                    return ("error", event.get("error_type"))
                elif event.get("event") in ("done", "internal"):
                    return outcome
        except WorkerDied as died:
            return _fault("crashed", describe_exit(died.returncode), whole, running)
        except WorkerOverMemory:
            return _fault("memory", "MemoryCapExceeded", whole, running)
        finally:
            self._kill(worker)


def _fault(outcome: str, error: str | None, whole: bool, running: str | None) -> tuple[str, str | None]:
    """A fault's outcome; for a `whole` case a fault while one of its subtests ran is that
    subtest's own (a row of its own), so it says nothing of the case: unknown (inconclusive)."""
    if whole and running:
        return ("unknown", f"{outcome} while {running} ran (that subtest's own fault)")
    return (outcome, error)
