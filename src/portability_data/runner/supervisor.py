"""The runner: executes cases on one device and mode, isolated, timed, resumable; writes a shard.

One worker process serves many case files (the framework is imported once). The runner watches
it: a subtest that crashes the worker (segfault, abort, exit), hangs past the timeout or grows
past the memory cap is recorded as crashed, timeout or memory, the worker is replaced, and the
run goes on with the rest of that case. Every finished row is appended to a journal (fsync'd
JSON lines) before anything else happens, so a runner killed with SIGKILL resumes with
`--resume <run_id>` with no row lost and none twice. At the end the rows become one immutable
shard, data/results/<source>/<run_id>.parquet, and one row of the runs table.

Light on purpose: the framework, pytest, NumPy, pyarrow and PyYAML only (DESIGN.md).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import platform
import re
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from portability_data.runner.case_rows import load_rows
from portability_data.runner.progress import RunProgress
from portability_data.tables import contracts
from portability_data.tables.atomic import atomic_write_arrow

SOURCE = "portability"
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


MEMORY_POLL_S = 0.05  # how often a busy event stream pauses for a look at the worker's memory


class RunError(RuntimeError):
    """The run cannot start or go on (absent device, bad arguments, unknown run to resume)."""


@dataclass(frozen=True)
class RunSpec:
    """What to run: the run's parameters, hashed into the runs table."""

    framework: str
    device: str
    mode: str = "eager"
    repeats: int = 3
    timeout_s: float = 900.0
    memory_mb: int = 8192
    cases: tuple[str, ...] = ()
    source: str = SOURCE

    def validate(self) -> None:
        if self.framework not in contracts.FRAMEWORKS:
            raise RunError(
                f"unknown framework {self.framework!r}; use one of {', '.join(contracts.FRAMEWORKS)}"
            )
        if self.device not in contracts.DEVICES:
            raise RunError(f"unknown device {self.device!r}; use one of {', '.join(contracts.DEVICES)}")
        if self.mode not in contracts.MODES:
            raise RunError(f"unknown mode {self.mode!r}; use one of {', '.join(contracts.MODES)}")
        if self.repeats < 1:
            raise RunError(f"repeats must be >= 1, got {self.repeats}")
        if self.timeout_s <= 0:
            raise RunError(f"timeout must be > 0 seconds, got {self.timeout_s}")
        if self.memory_mb <= 0:
            raise RunError(f"memory cap must be > 0 MB, got {self.memory_mb}")

    def params_hash(self, cases_digest: str = "") -> str:
        """sha256 of the parameters and of the case files run (so a changed case is a new run)."""
        payload = json.dumps({**asdict(self), "cases_digest": cases_digest}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass
class Paths:
    """Where a run reads cases and writes its journal, shard and runs row."""

    repo_root: Path
    cases_dir: Path
    results_dir: Path
    runs_dir: Path
    journal_dir: Path

    @classmethod
    def under(cls, repo_root: Path) -> Paths:
        repo_root = Path(repo_root).resolve()
        return cls(
            repo_root,
            repo_root / "cases",
            repo_root / "data" / "results",
            repo_root / "data" / "runs",
            repo_root / "data" / ".journal",
        )


# --------------------------------------------------------------------------- the journal


class Journal:
    """Append-only JSON lines: a header with the run's spec, then one line per finished row.

    Every line is handed to the OS as soon as it is written, so a killed runner loses nothing; it
    is forced to disk (fsync) once per case file (``sync``), not per row: a sync costs about a
    millisecond, more than many subtests take, and a power cut loses one case file at most.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: Any = None

    def start(self, header: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "x", encoding="utf-8") as handle:
            handle.write(json.dumps({"header": header}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def append(self, row: dict[str, Any]) -> None:
        self._write({"row": row})

    def append_confirmation(self, confirmation: dict[str, Any]) -> None:
        """The verdict of a failing subtest re-run alone in a fresh worker."""
        self._write({"confirm": confirmation})

    def confirmations(self) -> dict[str, dict[str, Any]]:
        """test_id -> the confirmation journaled for it (a torn last line is dropped)."""
        if self._handle is not None:
            self._handle.flush()
        found: dict[str, dict[str, Any]] = {}
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if "confirm" in entry:
                    found[entry["confirm"]["test_id"]] = entry["confirm"]
        return found

    def append_info(self, info: dict[str, Any]) -> None:
        """What the first worker said of the device (model, versions, timer floor)."""
        self._write({"info": info})

    def _write(self, entry: dict[str, Any]) -> None:
        if self._handle is None:
            self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (kept for the run)
        self._handle.write(json.dumps(entry) + "\n")
        self._handle.flush()

    def sync(self) -> None:
        """Force what was written to disk."""
        if self._handle is not None:
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        if self._handle is not None:
            self.sync()
            self._handle.close()
            self._handle = None

    def read(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The header and the rows; a torn last line (killed mid-write) is dropped."""
        if self._handle is not None:
            self._handle.flush()
        header: dict[str, Any] | None = None
        rows: dict[tuple[str, int], dict[str, Any]] = {}
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if "header" in entry:
                    header = entry["header"]
                elif "row" in entry:
                    row = entry["row"]
                    rows[(row["test_id"], row["repeat"])] = row
                elif "info" in entry and header is not None:
                    header.setdefault("info", entry["info"])
        if header is None:
            raise RunError(f"{self.path}: journal has no header; it is not a run journal")
        return header, list(rows.values())


# --------------------------------------------------------------------------- the worker


@dataclass
class WorkerInfo:
    device_model: str
    framework_version: str
    timer_floor_ms: float | None
    driver: str | None
    build: dict[str, Any] | None = None


class Worker:
    """A supervised case worker process: events over a pipe, RSS polled for the memory cap."""

    def __init__(self, spec: RunSpec, paths: Paths, scratch: Path, log_path: Path) -> None:
        self.spec, self.paths, self.scratch = spec, paths, scratch
        read_fd, write_fd = os.pipe()
        env = worker_environment(spec, paths, scratch, write_fd)
        self.log = open(log_path, "ab")  # noqa: SIM115 (lives as long as the worker)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "portability_data.runner.worker"],
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

    def next_event(self, timeout: float) -> dict[str, Any] | None:
        """The next event, or None on timeout; raises WorkerDied if the process ended."""
        deadline = time.monotonic() + timeout
        while True:
            if b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                return json.loads(line)
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
            try:
                with open(f"/proc/{pid}/statm") as handle:
                    total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError, IndexError):
                continue
        return total / 2**20

    def send(self, request: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()

    def kill(self) -> None:
        """Kill the worker and everything it started (its own process group)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.close()

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
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    stack.extend(int(child) for child in handle.read().split())
        except (OSError, ValueError):
            continue


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
    return env


# --------------------------------------------------------------------------- the run


@dataclass
class RunState:
    spec: RunSpec
    run_id: str
    journal: Journal
    started_at: str
    params_hash: str
    done: set[tuple[str, int]] = field(default_factory=set)
    info: WorkerInfo | None = None
    digests: dict[str, Any] | None = None  # taken when the run starts: the code as it ran


def new_run_id(spec: RunSpec) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{spec.framework}-{spec.device}-{spec.mode}-{stamp}-{secrets.token_hex(3)}"


def select_cases(spec: RunSpec, paths: Paths) -> list[dict[str, Any]]:
    """The active cases of the framework (all, or those named), each with a test file."""
    rows = [
        r for r in load_rows(paths.cases_dir, paths.repo_root, (spec.framework,)) if r["status"] == "active"
    ]
    if spec.cases:
        wanted = set(spec.cases)
        unknown = wanted - {r["case_id"] for r in rows}
        if unknown:
            raise RunError(f"unknown or inactive case(s) for {spec.framework}: {', '.join(sorted(unknown))}")
        rows = [r for r in rows if r["case_id"] in wanted]
    return sorted(rows, key=lambda r: r["case_id"])


def run(
    spec: RunSpec,
    paths: Paths,
    resume: str | None = None,
    log: Any = None,
    params_hash: str | None = None,
    confirm: bool = True,
    progress: RunProgress | None = None,
) -> str:
    """Run the cases, journal every row, write the shard and the runs row; returns the run id.
    `progress` is told of each case file and row as they are journaled (nothing by default)."""
    spec.validate()
    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    observer = progress or RunProgress()
    if resume:
        state = _resume_state(resume, paths)
        spec = state.spec
        say(f"resuming {state.run_id}: {len(state.done)} row(s) already journaled")
    else:
        run_id = new_run_id(spec)
        journal = Journal(paths.journal_dir / f"{run_id}.jsonl")
        started = dt.datetime.now(dt.UTC).isoformat()
        key = params_hash or spec.params_hash()
        digests = code_digests(paths, spec)
        journal.start(
            {
                "run_id": run_id,
                "spec": asdict(spec),
                "started_at": started,
                "params_hash": key,
                "digests": digests,
            }
        )
        state = RunState(spec, run_id, journal, started, key, digests=digests)
    cases = select_cases(spec, paths)
    if not cases:
        raise RunError(f"no active cases for {spec.framework} under {paths.cases_dir}")
    with tempfile.TemporaryDirectory(prefix="portability-scratch-") as scratch_name:
        scratch = Path(scratch_name)
        log_path = paths.journal_dir / f"{state.run_id}.log"
        supervisor = _Supervisor(state, paths, scratch, log_path, say, observer)
        observer.started(state.run_id, len(cases), spec.repeats)
        try:
            for repeat in range(spec.repeats):
                for case in cases:
                    observer.case_started(case, repeat)
                    supervisor.run_case(case, repeat)
                    state.journal.sync()
                    observer.case_finished(case, repeat)
            if confirm:
                rerun = supervisor.confirm_failures()
                if rerun:
                    say(f"{rerun} failing subtest(s) re-run alone in a fresh worker")
        finally:
            observer.close()
            supervisor.close()
            state.journal.close()
    return finish(state, paths)


class _Supervisor:
    """Feeds case files to a worker, turns its events into journaled rows, replaces it on faults."""

    def __init__(
        self,
        state: RunState,
        paths: Paths,
        scratch: Path,
        log_path: Path,
        say: Any,
        progress: RunProgress | None = None,
    ) -> None:
        self.state, self.paths, self.scratch, self.log_path, self.say = state, paths, scratch, log_path, say
        self.progress = progress or RunProgress()
        self.worker: Worker | None = None

    def _start_worker(self) -> tuple[Worker, dict[str, Any]]:
        """A new worker process, once it said it is ready (with what it found of the device)."""
        worker = Worker(self.state.spec, self.paths, self.scratch, self.log_path)
        try:
            ready = worker.next_event(timeout=max(self.state.spec.timeout_s, 300))
        except (WorkerDied, WorkerOverMemory) as exc:
            raise RunError(f"the case worker did not start: {exc}; see {self.log_path}") from None
        if ready is None or ready.get("event") != "ready":
            message = ready.get("error") if ready else "no answer"
            worker.kill()
            raise RunError(f"cannot run {self.state.spec.framework} on {self.state.spec.device}: {message}")
        return worker, ready

    def _ensure_worker(self) -> Worker:
        if self.worker is None or self.worker.process.poll() is not None:
            if self.worker is not None:
                self.worker.close()
            self.worker, ready = self._start_worker()
            info = WorkerInfo(
                ready["device_model"],
                ready["framework_version"],
                ready["timer_floor_ms"],
                ready.get("driver"),
                ready.get("build"),
            )
            if self.state.info is None:
                self.state.info = info
                self.state.journal.append_info(asdict(info))
        return self.worker

    def run_case(self, case: dict[str, Any], repeat: int) -> None:
        done_here: set[str] = {
            t for (t, r) in self.state.done if r == repeat and t.startswith(case["test_file"])
        }
        done_here |= {
            t for (t, r) in self.state.done if r == repeat and t == f"{case['test_file']}::<collection>"
        }
        if f"{case['test_file']}::<collection>" in done_here:
            return
        for _attempt in range(1000):  # one attempt per fault at most; bounded by the subtests
            worker = self._ensure_worker()
            worker.send(
                {"file": str(self.paths.repo_root / case["test_file"]), "deselect": sorted(done_here)}
            )
            in_flight: str | None = None
            started = time.monotonic()
            try:
                while True:
                    budget = self.state.spec.timeout_s - (time.monotonic() - started) if in_flight else 3600.0
                    event = worker.next_event(timeout=max(budget, 0.01))
                    if event is None:
                        if in_flight is None:
                            raise WorkerHung("collection")
                        raise WorkerHung(in_flight)
                    kind = event.get("event")
                    if kind == "start":
                        in_flight, started = event["test_id"], time.monotonic()
                    elif kind == "result":
                        test_id = (
                            event["test_id"]
                            if event.get("when") != "collect"
                            else f"{case['test_file']}::<collection>"
                        )
                        if test_id not in done_here:
                            self._record(case, repeat, {**event, "test_id": test_id})
                            done_here.add(test_id)
                        in_flight = None
                    elif kind == "done":
                        return
                    elif kind == "internal":
                        self._record(
                            case,
                            repeat,
                            _fault_event(
                                f"{case['test_file']}::<collection>",
                                "error",
                                "HarnessError",
                                event.get("error", ""),
                            ),
                        )
                        return
            except (WorkerHung, WorkerOverMemory, WorkerDied) as fault:
                if isinstance(fault, WorkerDied):
                    worker.close()
                else:
                    worker.kill()
                target = in_flight or f"{case['test_file']}::<collection>"
                self._record(case, repeat, _fault_event(target, *self._describe(fault)))
                done_here.add(target)
            if target.endswith("::<collection>"):
                return

    def confirm_failures(self) -> int:
        """Re-run every failing subtest alone, each in a fresh worker (nothing else ran there
        before it: no earlier case, no framework cache, no compiled code), and journal the verdict.
        A subtest that passes alone failed because of what ran before it in the run: it is
        order-dependent, kept and visible, not the framework's failure. Timeouts and memory-cap
        kills are not re-run (another 15 minutes or another blown cap would say nothing new).
        Returns the number of subtests re-run."""
        if self.worker is not None:
            self.worker.stop()
            self.worker = None
        _, rows = self.state.journal.read()
        done = self.state.journal.confirmations()
        failing = sorted(
            {
                r["test_id"]
                for r in rows
                if r["outcome"] in CONFIRMED_OUTCOMES and not r["test_id"].endswith("::<collection>")
            }
            - set(done)
        )
        self.progress.confirming(len(failing))
        for test_id in failing:
            outcome, error_type = self._run_alone(test_id)
            verdict = (
                "confirmed"
                if outcome in FAILING_OUTCOMES
                else "order_dependent"
                if outcome == "passed"
                else "inconclusive"
            )
            self.state.journal.append_confirmation(
                {"test_id": test_id, "verdict": verdict, "outcome": outcome, "error_type": error_type}
            )
            self.state.journal.sync()
            self.progress.confirmed(test_id, verdict)
        return len(failing)

    def _run_alone(self, test_id: str) -> tuple[str, str | None]:
        """(outcome, error type) of one subtest run by itself in a new worker."""
        worker, _ = self._start_worker()
        try:
            worker.send({"select": [str(self.paths.repo_root / test_id)]})
            outcome: tuple[str, str | None] = ("unknown", None)
            while True:
                event = worker.next_event(timeout=self.state.spec.timeout_s)
                if event is None:
                    return ("timeout", "Timeout")
                if event.get("event") == "result" and event.get("when") != "collect":
                    outcome = (event["outcome"], event.get("error_type"))
                elif event.get("event") == "result":
                    return ("error", event.get("error_type"))
                elif event.get("event") in ("done", "internal"):
                    return outcome
        except WorkerDied as died:
            return ("crashed", describe_exit(died.returncode))
        except WorkerOverMemory:
            return ("memory", "MemoryCapExceeded")
        finally:
            worker.kill()

    def _describe(self, fault: Exception) -> tuple[str, str, str]:
        """(outcome, error type, message) of a subtest that took its worker down."""
        if isinstance(fault, WorkerHung):
            return "timeout", "Timeout", f"no result after {self.state.spec.timeout_s:g} s"
        if isinstance(fault, WorkerOverMemory):
            return "memory", "MemoryCapExceeded", f"{fault} of {self.state.spec.memory_mb} MB"
        return "crashed", "WorkerCrashed", str(fault)

    def _record(self, case: dict[str, Any], repeat: int, event: dict[str, Any]) -> None:
        row = build_row(self.state, case, repeat, event)
        self.state.journal.append(row)
        self.state.done.add((row["test_id"], repeat))
        self.progress.row(row)

    def close(self) -> None:
        if self.worker is not None:
            self.worker.stop()


class WorkerHung(RuntimeError):
    pass


FAILING_OUTCOMES = frozenset({"failed", "error", "timeout", "crashed", "memory"})
# Failing outcomes re-run alone before they count (timeout and memory are not: see confirm_failures).
CONFIRMED_OUTCOMES = frozenset({"failed", "error", "crashed"})


def _fault_event(test_id: str, outcome: str, error_type: str, message: str) -> dict[str, Any]:
    return {
        "test_id": test_id,
        "outcome": outcome,
        "error_type": error_type,
        "error_message": message,
        "op_latencies_ms": [],
        "test_time_ms": None,
    }


def subtest_name(test_id: str) -> str:
    """The subtest's name across devices: the test name after the file (no device token in ours)."""
    return test_id.split("::", 1)[1] if "::" in test_id else test_id


def build_row(state: RunState, case: dict[str, Any], repeat: int, event: dict[str, Any]) -> dict[str, Any]:
    """One results row from a worker event, with its failure classified by the rule table."""
    from portability_data.runner.failures import classify_failure_detail

    outcome = event["outcome"]
    category = rule = subcategory = None
    if outcome in FAILING_OUTCOMES:
        category, rule, subcategory = classify_failure_detail(
            state.spec.framework,
            event.get("error_type") or "",
            event.get("error_message") or "",
            outcome=outcome,
        )
    info = state.info
    return {
        "run_id": state.run_id,
        "source": state.spec.source,
        "case_id": case["case_id"],
        "framework": state.spec.framework,
        "function": contracts.canonical_name(case["function"]),
        "test_id": event["test_id"],
        "subtest": subtest_name(event["test_id"]),
        "repeat": repeat,
        "outcome": outcome,
        "failure_category": category,
        "failure_rule": rule,
        "error_type": event.get("error_type"),
        "error_message": (event.get("error_message") or None) and str(event["error_message"])[:2000],
        "op_latencies_ms": [float(v) for v in event.get("op_latencies_ms") or []],
        "test_time_ms": event.get("test_time_ms"),
        "device": state.spec.device,
        "device_model": info.device_model if info else state.spec.device,
        "mode": state.spec.mode,
        "framework_version": info.framework_version if info else "unknown",
        "execution": event.get("execution"),
        "graph_breaks": event.get("graph_breaks"),
        "confirmation": None,
        "failure_subcategory": subcategory,
    }


def _resume_state(run_id: str, paths: Paths) -> RunState:
    path = paths.journal_dir / f"{run_id}.jsonl"
    if not path.exists():
        raise RunError(
            f"no journal for run {run_id!r} at {path}; list journals with `ls {paths.journal_dir}`"
        )
    if (paths.results_dir / "portability" / f"{run_id}.parquet").exists():
        raise RunError(f"run {run_id} already finished: its shard exists; nothing to resume")
    journal = Journal(path)
    header, rows = journal.read()
    spec = RunSpec(**{**header["spec"], "cases": tuple(header["spec"].get("cases", ()))})
    state = RunState(
        spec,
        header["run_id"],
        journal,
        header["started_at"],
        header["params_hash"],
        digests=header.get("digests"),
    )
    state.done = {(r["test_id"], r["repeat"]) for r in rows}
    if header.get("info"):
        state.info = WorkerInfo(**header["info"])
    elif rows:  # a journal from before info lines: the rows know the device, not the timer floor
        state.info = WorkerInfo(rows[0]["device_model"], rows[0]["framework_version"], None, None)
    return state


def close_partial(run_id: str, paths: Paths) -> str:
    """Write the shard of a run that will not be finished (the machine is gone, the budget spent)
    from its journal as it stands, with runs.status = partial; `--resume` is then refused."""
    state = _resume_state(run_id, paths)
    return finish(state, paths, status="partial")


def shard_path(paths: Paths, run_id: str, source: str = SOURCE) -> Path:
    """Where the run's results shard lands (written once, by `finish`)."""
    return paths.results_dir / source / f"{run_id}.parquet"


def finish(state: RunState, paths: Paths, status: str = "complete") -> str:
    """Turn the journal into the immutable shard and the runs row (both atomic, never replaced)."""
    _, rows = state.journal.read()
    rows.sort(key=lambda r: (r["repeat"], r["case_id"], r["test_id"]))
    if state.info is not None:
        for row in rows:  # rows journaled before the worker said ready (resume) get the device facts
            if row["framework_version"] == "unknown":
                row["framework_version"] = state.info.framework_version
    confirmations = state.journal.confirmations()
    for row in rows:
        found = confirmations.get(row["test_id"])
        if found is not None and row["outcome"] in CONFIRMED_OUTCOMES:
            row["confirmation"] = found["verdict"]
    shard = pa.Table.from_pylist(rows, schema=contracts.RESULTS)
    atomic_write_arrow(shard_path(paths, state.run_id, state.spec.source), shard, exclusive=True)
    info = state.info or WorkerInfo(state.spec.device, "unknown", 0.0, None)
    run_row = {
        "run_id": state.run_id,
        "source": state.spec.source,
        "framework": state.spec.framework,
        "framework_version": info.framework_version,
        "device": state.spec.device,
        "device_model": info.device_model,
        "mode": state.spec.mode,
        "repeats": state.spec.repeats,
        "timeout_s": float(state.spec.timeout_s),
        "host": platform.node() or "unknown",
        "os": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": _cpu_model(),
        "accelerator": None if state.spec.device == "cpu" else info.device_model,
        "driver": info.driver,
        "packages": json.dumps(_package_versions(state.spec.framework), sort_keys=True),
        "git_commit": _git_commit(paths.repo_root),
        "params_hash": state.params_hash,
        "timer_floor_ms": info.timer_floor_ms,
        "started_at": dt.datetime.fromisoformat(state.started_at),
        "finished_at": dt.datetime.now(dt.UTC),
        "status": status,
        "n_results": len(rows),
        **host_facts(),
        "build": json.dumps(info.build, sort_keys=True) if info.build is not None else None,
        **(state.digests or {"harness_digest": None, "cases_digest": None, "case_digests": None}),
    }
    runs_path = paths.runs_dir / state.spec.source / f"{state.run_id}.parquet"
    atomic_write_arrow(runs_path, pa.Table.from_pylist([run_row], schema=contracts.RUNS), exclusive=True)
    return state.run_id


def _cpu_model() -> str:
    from portability_data.runner.harness import _cpu_model as model

    return model()


# CPU features that change which kernels a framework picks (vector width, bf16/fp16, matrix units).
CPU_FEATURES = (
    "sse4_2", "avx", "f16c", "fma", "avx2", "avx512f", "avx512dq", "avx512bw", "avx512vl",
    "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8",
    "asimd", "sve", "sve2",
)  # fmt: skip


def host_facts() -> dict[str, Any]:
    """The host beyond its CPU name: the features its kernels can use, cores and memory."""
    flags: set[str] = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                flags.update(line.split(":", 1)[1].split())
                break
    memory_mb = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_mb = int(line.split()[1]) // 1024
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return {
        "cpu_flags": " ".join(f for f in CPU_FEATURES if f in flags) or None,
        "cpu_count": cpus,
        "memory_mb": memory_mb,
    }


HARNESS_FILES = ("harness.py", "worker.py")  # the code that decides how a case runs and is timed
# The runner package's own dotted path, as the harness files name it. It is written as the package
# root before hashing, so the digest is of the code, not of where the package lives: the move of
# the flat modules into runner/ (issue 17) is not a harness change, and every other byte is.
RUNNER_PACKAGE = re.compile(rb"\bportability_data\.runner\b")


def _sha256(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def relocatable(source: bytes) -> bytes:
    """A harness file as hashed: its bytes with the runner package's dotted path made neutral."""
    return RUNNER_PACKAGE.sub(b"portability_data", source)


def harness_digest_of(harness_files: list[bytes], conftest: bytes) -> str:
    """The harness digest of the HARNESS_FILES' bytes (in that order) and the cases' conftest."""
    return _sha256(*(relocatable(part) for part in [*harness_files, conftest]))


def harness_digest(cases_dir: Path) -> str:
    """sha256 over the harness and worker code and the cases' conftest (which loads the harness)."""
    here = Path(__file__).resolve().parent
    conftest = cases_dir / "conftest.py"
    return harness_digest_of(
        [(here / name).read_bytes() for name in HARNESS_FILES],
        conftest.read_bytes() if conftest.exists() else b"",
    )


def case_digests(paths: Paths, case_ids: Any, framework: str) -> dict[str, str]:
    """case_id -> sha256 of its row file and test file, as they are on disk now."""
    rows = {r["case_id"]: r for r in load_rows(paths.cases_dir, paths.repo_root, (framework,))}
    found = {}
    for case_id in sorted(case_ids):
        row = rows.get(case_id)
        if row is None:
            continue
        parts = [(paths.repo_root / row["_row_file"]).read_bytes()]
        if row.get("test_file"):
            parts.append((paths.repo_root / row["test_file"]).read_bytes())
        found[case_id] = _sha256(*parts)
    return found


def code_digests(paths: Paths, spec: RunSpec) -> dict[str, Any]:
    """The runs row's digests: what code ran the cases, and which version of each case ran."""
    cases = [r["case_id"] for r in select_cases(spec, paths)]
    digests = case_digests(paths, cases, spec.framework)
    return {
        "harness_digest": harness_digest(paths.cases_dir),
        "cases_digest": _sha256(*(f"{k}={v}".encode() for k, v in sorted(digests.items()))),
        "case_digests": json.dumps(digests, sort_keys=True),
    }


def _package_versions(framework: str) -> dict[str, str]:
    from importlib import metadata

    names = {"torch": ["torch"], "tensorflow": ["tensorflow", "tensorflow-cpu"], "jax": ["jax", "jaxlib"]}
    found = {"python": platform.python_version()}
    for name in [*names[framework], "numpy", "pytest", "portability-data"]:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _git_commit(repo_root: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo_root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None
