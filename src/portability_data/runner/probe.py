"""A dry run: can each planned run start here, and what would it run? Nothing measured or written.

`probe` starts one real case worker for a spec, as a run starts it (the same `Worker`, so the same
scrubbed environment and the same `portability_data.runner.worker` code), waits for its `ready` or
`fatal` event, stops it and returns what it said. `dry_run` probes a list of specs and prints the
plan: per framework x device x mode the device model and framework version the worker reports, its
timer floor, the number of active case files and the repeats, or, for a device the worker cannot
reach, its reason and what to do. The worker's home, temporary folder and log are a temporary
folder: nothing under data/ is created (no journal, shard or runs row).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from portability_data.runner.spec import Paths, RunError, RunSpec, select_cases
from portability_data.runner.worker_process import (
    Worker,
    WorkerDied,
    WorkerInfo,
    WorkerOverMemory,
    ready_timeout,
)


@dataclass(frozen=True)
class Probe:
    """What one worker said when started for a spec: ready (with the device facts) or why not."""

    spec: RunSpec
    info: WorkerInfo | None  # the ready event's facts; None when the worker could not start
    problem: str | None  # the worker's fatal error, its exit, or no answer in time
    seconds: float  # from starting the worker to its answer

    @property
    def reachable(self) -> bool:
        return self.info is not None


def probe(spec: RunSpec, paths: Paths) -> Probe:
    """Start one case worker for `spec` exactly as a run does, wait for its `ready` or `fatal`
    event (at most `ready_timeout(spec)`), stop it and return what it said. Runs no case; writes
    only to a temporary folder (the worker's home and log), removed before returning."""
    spec.validate()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="portability-probe-") as scratch_name:
        scratch = Path(scratch_name)
        log_path = scratch / "worker.log"
        worker = Worker(spec, paths, scratch, log_path)
        event: dict[str, Any] | None
        try:
            event = worker.next_event(timeout=ready_timeout(spec))
        except (WorkerDied, WorkerOverMemory) as exc:
            event = {"event": "fatal", "error": f"the worker did not start: {exc}{_log_tail(log_path)}"}
        finally:
            seconds = time.monotonic() - started
        if event is not None and event.get("event") == "ready":
            worker.stop()  # end of its input: the worker leaves its request loop and exits
            info = WorkerInfo(
                event["device_model"],
                event["framework_version"],
                event["timer_floor_ms"],
                event.get("driver"),
                event.get("build"),
            )
            return Probe(spec, info, None, seconds)
        worker.kill()
        if event is None:
            problem = f"no answer from the worker in {ready_timeout(spec):g} s{_log_tail(log_path)}"
        else:
            problem = str(event.get("error") or f"unexpected first event {event.get('event')!r}")
        return Probe(spec, None, problem, seconds)


def _log_tail(log_path: Path, lines: int = 3) -> str:
    """The last lines the worker printed (its log is removed with the scratch folder)."""
    try:
        text = log_path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return f" (worker output: {' | '.join(tail)})" if tail else ""


def what_to_do(spec: RunSpec) -> str:
    """A next step for a person whose device the worker could not reach: the device path's."""
    return spec.path.what_to_do


def plan_line(probe_: Probe, cases: int) -> str:
    """One line of the plan for a reachable setting."""
    spec, info = probe_.spec, probe_.info
    assert info is not None
    floor = "unknown" if info.timer_floor_ms is None else f"{info.timer_floor_ms:.4g} ms"
    driver = f", driver {info.driver}" if info.driver else ""
    compiler = spec.resolved_compiler()
    return (
        f"{spec.framework}/{spec.device}/{spec.mode}{'/' + compiler if compiler else ''}: ready: "
        f"device model {info.device_model!r}, "
        f"{spec.framework} {info.framework_version}{driver}, timer floor {floor}; would run "
        f"{cases} case{'' if cases == 1 else 's'} x {spec.repeats} repeat{'' if spec.repeats == 1 else 's'} "
        f"(worker up in {probe_.seconds:.1f} s)"
    )


def unreachable_line(probe_: Probe) -> str:
    """One line for a setting whose worker could not start: the worker's reason and what to do."""
    spec = probe_.spec
    return (
        f"{spec.framework}/{spec.device}/{spec.mode}: UNREACHABLE: {spec.framework} cannot run on "
        f"{spec.device} here: {probe_.problem}; what to do: {what_to_do(spec)}"
    )


def dry_run(specs: Sequence[RunSpec], paths: Paths, say: Callable[[str], Any] | None = None) -> bool:
    """Probe every spec and say its plan line (or why it cannot run); True when all can run.
    A spec with no active case file to run cannot run either (`run` refuses it)."""
    tell = say or (lambda text: print(text, flush=True))
    ready = 0
    for spec in specs:
        label = f"{spec.framework}/{spec.device}/{spec.mode}"
        try:
            cases = len(select_cases(spec, paths))
        except RunError as exc:
            tell(f"{label}: CANNOT RUN: {exc}")
            continue
        found = probe(spec, paths)
        if not found.reachable:
            tell(unreachable_line(found))
        elif cases == 0:
            tell(f"{label}: CANNOT RUN: no active cases for {spec.framework} under {paths.cases_dir}")
        else:
            tell(plan_line(found, cases))
            ready += 1
    total = len(specs)
    verdict = "can start here" if ready == total else f"{total - ready} of them cannot start (above)"
    tell(f"dry run: {total} run(s) planned, {verdict}; nothing was measured or written")
    return ready == total
