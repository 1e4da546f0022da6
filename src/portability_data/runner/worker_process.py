"""The case worker process as the supervisor sees it: started, fed, watched, killed.

One worker (`python -m portability_data.runner.worker`) serves many case files. This module starts
it in a scrubbed environment, reads its events from a pipe, polls its resident memory against the
cap, and names the ways it can go down (died, over memory, hung), so that the supervisor's loop
deals in events and faults only, never in pipes, process groups or /proc.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from portability_data.runner.compile_cache import cache_environment, plugin_cache_environment
from portability_data.runner.fork_worker import xla_on_cpu
from portability_data.runner.last_words import last_words
from portability_data.runner.spec import Paths, RunSpec

# Environment a case worker may see; everything else (tokens, cloud credentials) is scrubbed.
ENV_ALLOWED = {"PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "PYTHONHASHSEED"}
ENV_ALLOWED_PREFIXES = (
    "LC_",
    "CUDA_",
    "NVIDIA_",
    "XLA_",
    "TPU_",
    "JAX_",
    "TF_",
    "PJRT_",
    "OMP_",
    "MKL_",
    "PORTABILITY_",
)
ENV_DENIED_WORDS = ("TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "API_KEY", "ACCESS_KEY")


WORKER_MODULE = "portability_data.runner.worker"  # a case worker: many case files, one process
FORK_WORKER_MODULE = "portability_data.runner.fork_worker"  # forks one fresh worker per request
READY_FLOOR_S = 300.0  # a worker may take this long to import its framework and find the device
MEMORY_POLL_S = 0.05  # how often a busy event stream pauses for a look at the worker's memory
LAST_WORDS_S = 5.0  # how long a hung worker sent SIGABRT has to dump its stack before it is killed
LAST_WORDS_BYTES = 1 << 20  # the most of the log read back for a dump (a dump is a few KB)


@dataclass
class WorkerInfo:
    """What a worker said of the device when it was ready (journaled once per run)."""

    device_model: str
    framework_version: str
    timer_floor_ms: float | None
    driver: str | None
    build: dict[str, Any] | None = None


class Worker:
    """A supervised case worker process: events over a pipe, RSS polled for the memory cap."""

    def __init__(
        self, spec: RunSpec, paths: Paths, scratch: Path, log_path: Path, module: str = WORKER_MODULE
    ) -> None:
        self.spec, self.paths, self.scratch = spec, paths, scratch
        # A fork worker's own memory is shared with the child it forked (the imports): only the
        # child, the fresh worker, counts against the cap.
        self.count_root = module != FORK_WORKER_MODULE
        read_fd, write_fd = os.pipe()
        env = worker_environment(spec, paths, scratch, write_fd)
        self.log = open(log_path, "ab")  # noqa: SIM115 (lives as long as the worker)
        self.process = subprocess.Popen(
            [sys.executable, "-m", module],
            stdin=subprocess.PIPE,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            cwd=scratch,
            env=env,
            pass_fds=(write_fd,),
            start_new_session=True,
        )
        os.close(write_fd)
        self.events = os.fdopen(read_fd, "rb")
        self._buffer = b""
        self._memory_checked = 0.0
        self._log_mark = 0  # the log's size when the current request was sent (mark_log)

    def next_event(self, timeout: float) -> dict[str, Any] | None:
        """The next event, or None on timeout; raises WorkerDied if the process ended."""
        deadline = time.monotonic() + timeout
        while True:
            if b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                event: dict[str, Any] = json.loads(line)
                return event
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self.events], [], [], min(remaining, 0.1))
            if ready:
                chunk = os.read(self.events.fileno(), 1 << 16)
                if not chunk:
                    self.process.wait()
                    raise WorkerDied(self.process.returncode)
                self._buffer += chunk
            # Memory is read from /proc while the worker is quiet, and at most every
            # MEMORY_POLL_S while events stream in (a read walks the worker's threads: ~0.25 ms).
            now = time.monotonic()
            if not ready or now - self._memory_checked >= MEMORY_POLL_S:
                self._memory_checked = now
                rss = self.rss_mb()
                if rss > self.spec.memory_mb:
                    raise WorkerOverMemory(rss)

    def rss_mb(self) -> float:
        """Resident memory of the worker and its children, from /proc (0 where unknown)."""
        total = 0
        for pid in _process_tree(self.process.pid):
            if pid == self.process.pid and not self.count_root:
                continue
            try:
                with open(f"/proc/{pid}/statm") as handle:
                    total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError, IndexError):
                continue
        return total / 2**20

    def mark_log(self) -> None:
        """Note where the log ends now: a stack dump after this mark is of what runs from now on."""
        with contextlib.suppress(OSError, ValueError):
            self._log_mark = os.fstat(self.log.fileno()).st_size

    def last_words(self, moment: str) -> str | None:
        """Where the current subtest was when the worker went down (runner.last_words): a worker
        still running (hung, or over the memory cap) is first sent SIGABRT, with no core file, so
        that pytest's faulthandler dumps its stack to the log; a crashed one has dumped it already.
        The child processes it was running (a compiler) are named too. None without a dump."""
        running: list[str] = []
        if self.process.poll() is None:
            tree = list(_process_tree(self.process.pid))
            # the process running the subtest: the worker, or the child a fork worker made
            targets = [self.process.pid] if self.count_root else _children(self.process.pid)
            running = [_command(pid) for pid in tree if pid != self.process.pid and pid not in targets]
            for pid in targets:
                with contextlib.suppress(OSError):  # a core file of a hung worker helps nobody
                    resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGABRT)
            self._await_dump(targets)
        try:
            with open(self.log.name, "rb") as handle:
                end = handle.seek(0, os.SEEK_END)
                handle.seek(max(self._log_mark, end - LAST_WORDS_BYTES))
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return None
        return last_words(text, moment, [name for name in running if name])

    def _await_dump(self, targets: list[int]) -> None:
        """Until the signalled processes have ended (the dump written) or LAST_WORDS_S passed."""
        deadline = time.monotonic() + LAST_WORDS_S
        while time.monotonic() < deadline:
            if self.count_root:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=0.05)
                    return
            elif not any(_alive(pid) for pid in targets):
                return
            time.sleep(0.05)

    def send(self, request: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()

    def kill(self) -> None:
        """Kill the worker and everything it started (its own process group)."""
        self.signal_kill()
        self.process.wait()
        self.close()

    def signal_kill(self) -> None:
        """SIGKILL to the worker's process group, from any thread: the thread reading its events
        then sees it gone (WorkerDied) and cleans up, as after a crash."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def stop(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=30)
        self.kill()

    def close(self) -> None:
        for handle in (self.events, self.log, self.process.stdin):
            try:
                if handle is not None:
                    handle.close()
            except OSError:
                pass


class WorkerDied(RuntimeError):
    def __init__(self, returncode: int | None) -> None:
        self.returncode = returncode
        super().__init__(describe_exit(returncode))


class WorkerOverMemory(RuntimeError):
    def __init__(self, rss_mb: float) -> None:
        self.rss_mb = rss_mb
        super().__init__(f"worker resident memory {rss_mb:.0f} MB passed the cap")


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "worker ended"
    if returncode < 0:
        try:
            return f"worker killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"worker killed by signal {-returncode}"
    return f"worker exited with status {returncode}"


def _process_tree(root: int) -> Iterator[int]:
    """The root pid and its descendants, from /proc/<pid>/task/*/children."""
    stack = [root]
    while stack:
        pid = stack.pop()
        yield pid
        stack.extend(_children(pid))


def _children(pid: int) -> list[int]:
    """The direct children of a process, from /proc/<pid>/task/*/children ([] where it is gone)."""
    found: list[int] = []
    with contextlib.suppress(OSError, ValueError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(child) for child in handle.read().split())
    return found


def _alive(pid: int) -> bool:
    """Running (not ended, nor a zombie waiting for its parent to read its status)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def _command(pid: int) -> str:
    """A process's command name (`iree-compile`), '' where it is gone."""
    try:
        with open(f"/proc/{pid}/comm") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def worker_environment(spec: RunSpec, paths: Paths, scratch: Path, events_fd: int) -> dict[str, str]:
    """A scrubbed environment: only what the frameworks need; no tokens or credentials."""
    env = {
        key: value
        for key, value in os.environ.items()
        if (key in ENV_ALLOWED or key.startswith(ENV_ALLOWED_PREFIXES))
        and not any(word in key.upper() for word in ENV_DENIED_WORDS)
    }
    package_root = str(Path(__file__).resolve().parents[2])  # src/, the folder holding portability_data
    env.update(
        {
            "HOME": str(scratch),
            "TMPDIR": str(scratch),
            "PYTHONPATH": package_root,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PORTABILITY_DEVICE": spec.device,
            "PORTABILITY_MODE": spec.mode,
            "PORTABILITY_FRAMEWORK": spec.framework,
            "PORTABILITY_ROOTDIR": str(paths.repo_root),
            "PORTABILITY_EVENTS_FD": str(events_fd),
            "TF_CPP_MIN_LOG_LEVEL": "2",
            # Only the harness plugin (named by cases/conftest.py): a pytest plugin that happens to be
            # installed (one that reorders tests or reseeds random) must not change a run, and
            # finding the installed ones reads every package's metadata at each case file.
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
    )
    # persistent compile caches (JAX, torch_xla) for re-runs, outside the repository (compile_cache)
    env.update(cache_environment(spec.framework, spec.device, suite=spec.suite))
    env.update(plugin_cache_environment())  # jax2onnx's plugin programs (compile_cache), resolved here
    if xla_on_cpu(spec.device, env):
        # XLA's CPU backend uses no GPU: hidden, a CUDA build of torch (torch_xla's) initialises no
        # driver, in a spawned worker as in the confirmations' fork server (fork_worker.preload)
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


class WorkerHung(RuntimeError):
    """No result from the worker within the subtest's timeout (the message names the subtest)."""


def ready_timeout(spec: RunSpec) -> float:
    """How long a starting worker may take to say ready or fatal: importing a framework and finding
    its device can take minutes on a cold machine, so at least READY_FLOOR_S, or the spec's timeout
    where that is longer (one rule for runs and dry runs)."""
    return max(float(spec.timeout_s), READY_FLOOR_S)
