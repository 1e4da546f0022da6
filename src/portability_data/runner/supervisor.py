"""The runner: executes cases on one device and mode, isolated, timed, resumable; writes a shard.

One worker process serves many case files (the framework is imported once). The runner watches
it: a subtest that crashes the worker (segfault, abort, exit), hangs past the timeout or grows
past the memory cap is recorded as crashed, timeout or memory, the worker is replaced, and the
run goes on with the rest of that case. Every finished row is appended to a journal (fsync'd
JSON lines) before anything else happens, so a runner killed with SIGKILL resumes with
`--resume <run_id>` with no row lost and none twice. At the end the rows become one immutable
shard, data/results/<source>/<run_id>.parquet, and one row of the runs table.

This module is the run's loop and its end (`run`, `close_partial`, `finish`); beside it: `spec`
(what to run, where), `journal` (the journal and resuming), `worker_process` (the worker process) and
`provenance` (host facts and code digests).

Light on purpose: the framework, pytest, NumPy, pyarrow and PyYAML only (docs/ARCHITECTURE.md,
"Layers": the runner-bare contract).
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import secrets
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow as pa

from portability_data.runner.compile_cache import cache_record
from portability_data.runner.confirmation import AloneRunner
from portability_data.runner.fault_rows import describe_fault, fault_event, fault_moment, not_rerun_event
from portability_data.runner.interrupt import RunInterrupted
from portability_data.runner.journal import Journal, RunState, refuse_changed_code, resume_state
from portability_data.runner.progress import RunProgress
from portability_data.runner.provenance import (
    OtherCpu,
    code_as_run,
    code_digests,
    code_state,
    cpu_model,
    host_facts,
    host_load,
    package_versions,
)
from portability_data.runner.spec import SOURCE, Paths, RunError, RunSpec, select_cases
from portability_data.runner.worker_process import (
    Worker,
    WorkerDied,
    WorkerHung,
    WorkerInfo,
    WorkerOverMemory,
    ready_timeout,
)
from portability_data.tables import contracts
from portability_data.tables.atomic import atomic_write_arrow


def new_run_id(spec: RunSpec) -> str:
    """framework-device-mode[-census]-UTC stamp-random: unique, and says what ran."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    suite = "-census" if spec.suite == "census" else ""
    return f"{spec.framework}-{spec.device}-{spec.mode}{suite}-{stamp}-{secrets.token_hex(3)}"


def run(
    spec: RunSpec,
    paths: Paths,
    resume: str | None = None,
    log: Any = None,
    params_hash: str | None = None,
    confirm: bool = True,
    progress: RunProgress | None = None,
    confirm_jobs: int = 1,
    jobs: int = 1,
    confirm_by: str = "fork",
) -> str:
    """Run the cases, journal every row, write the shard and the runs row; returns the run id.
    `progress` is told of each case file and row as they are journaled (nothing by default).
    `confirm_jobs` fresh workers confirm failures side by side (each still runs one subtest alone;
    confirmations record verdicts, never timings, so running them in parallel changes no number);
    `confirm_by` how the fresh workers are made (runner/confirmation.py: fork, or spawn).
    `jobs` workers run the cases side by side: census runs only (a census row is a verdict and a
    deviation, its timing is not used; a curated run's timings are the data and run alone). The
    runs row records it (runs.jobs). A resumed run keeps the jobs it started with."""
    spec.validate()
    if jobs < 1 or (jobs > 1 and spec.suite != "census"):
        raise RunError(
            f"jobs must be 1 for a {spec.suite} run (got {jobs}): curated timings are measured with "
            "one worker alone; only a census run (verdicts and deviations) may use --jobs > 1"
        )
    say = log or (lambda message: print(message, file=sys.stderr, flush=True))
    observer = progress or RunProgress()
    if resume:
        state = resume_state(resume, paths)
        spec = state.spec
        refuse_changed_code(state, paths)
        say(f"resuming {state.run_id}: {len(state.done)} row(s) already journaled")
    else:
        run_id = new_run_id(spec)
        journal = Journal(paths.journal_dir / f"{run_id}.jsonl")
        started = dt.datetime.now(dt.UTC).isoformat()
        key = params_hash or spec.params_hash()
        digests = code_digests(paths, spec)
        code = code_state(paths.repo_root)
        journal.start(
            {
                "run_id": run_id,
                "spec": asdict(spec),
                "started_at": started,
                "params_hash": key,
                "digests": digests,
                "jobs": jobs,
                "code": code,
            }
        )
        state = RunState(spec, run_id, journal, started, key, digests=digests, jobs=jobs, code=code)
    cases = select_cases(spec, paths)
    if not cases:
        raise RunError(f"no active cases for {spec.framework} under {paths.cases_dir}")
    with tempfile.TemporaryDirectory(prefix="portability-scratch-") as scratch_name:
        scratch = Path(scratch_name)
        log_path = paths.journal_dir / f"{state.run_id}.log"
        lock = threading.RLock()
        supervisors = [
            _Supervisor(state, paths, scratch, log_path, say, observer, lock) for _ in range(state.jobs)
        ]
        observer.started(state.run_id, len(cases), spec.repeats)
        other_cpu = OtherCpu()
        finished = False  # left False by Ctrl-C, SIGTERM/SIGHUP (the cli) or a fault of the run
        try:
            for repeat in range(spec.repeats):
                _run_repeat(supervisors, cases, repeat, lock, other_cpu)
            for extra in supervisors[1:]:
                extra.close()
            if confirm:
                rerun = supervisors[0].confirm_failures(confirm_jobs, confirm_by, cases)
                if rerun:
                    say(f"{rerun} failing subtest(s) re-run alone in a fresh worker")
            finished = True
        except KeyboardInterrupt:
            raise RunInterrupted(state.run_id) from None
        finally:
            observer.close()
            state.interrupted = state.interrupted or not finished
            for supervisor in supervisors:  # an interrupted run's workers are killed, not waited for
                supervisor.close(at_once=not finished)
            state.journal.close()
    if left := 0 if confirm else unconfirmed(state):
        say(f"{left} failing subtest(s) left unconfirmed (--no-confirm): the run closes partial (unknown)")
    return finish(state, paths, status="partial" if left else "complete")


def unconfirmed(state: RunState) -> int:
    """Failing (or fallen-back) subtests of the run with no confirmation verdict: a run left with
    any (`--no-confirm`) closes partial, as a run closed before its confirmations ended does, so
    aggregation reads those rows as unknown and never as the framework's failure."""
    _, rows = state.journal.read()
    done = state.journal.confirmations()
    return sum(1 for r in rows if r["outcome"] in contracts.CONFIRMED_OUTCOMES and r["test_id"] not in done)


def _run_repeat(
    supervisors: list[_Supervisor],
    cases: list[dict[str, Any]],
    repeat: int,
    lock: Any,
    other_cpu: OtherCpu | None = None,
) -> None:
    """One pass over the cases: in order with one supervisor; with several, each takes the next
    case not yet taken (a thread per supervisor, each waiting on its own worker process). The
    host's load average is sampled as a case starts, the CPU time of work outside the run's own
    processes as it ends (`other_cpu`: over the case, or since the last sample long enough)."""
    state = supervisors[0].state

    def one(supervisor: _Supervisor, case: dict[str, Any]) -> None:
        with lock:
            supervisor.progress.case_started(case, repeat)
            for load in host_load():
                state.host_load.append(load)
                state.journal.append_load(load)
        supervisor.run_case(case, repeat)
        with lock:
            cores = other_cpu.sample() if other_cpu is not None else None
            if cores is not None:
                state.host_other_cpu.append(cores)
                state.journal.append_other_cpu(cores)
            state.journal.sync()
            supervisor.progress.case_finished(case, repeat)

    if len(supervisors) == 1:
        for case in cases:
            one(supervisors[0], case)
        return
    queue = iter(cases)

    def drain(supervisor: _Supervisor) -> None:
        while True:
            with lock:
                case = next(queue, None)
            if case is None or state.interrupted:
                return
            one(supervisor, case)

    with ThreadPoolExecutor(max_workers=len(supervisors)) as pool:
        try:
            for future in [pool.submit(drain, supervisor) for supervisor in supervisors]:
                future.result()  # a fault of the run itself (not of a case) stops the run, as alone
        except BaseException:
            # interrupted (or the run's own fault): the other threads take no other case, and their
            # workers end now; what a killed worker seems to say is no row (`_record`)
            state.interrupted = True
            for supervisor in supervisors:
                if supervisor.worker is not None:
                    supervisor.worker.signal_kill()
            raise


class _Supervisor:
    """Feeds case files to a worker, turns its events into journaled rows, replaces it on faults.
    Several may share a run (`jobs`): the journal, the rows done and the progress are then touched
    under the run's lock only."""

    def __init__(
        self,
        state: RunState,
        paths: Paths,
        scratch: Path,
        log_path: Path,
        say: Any,
        progress: RunProgress | None = None,
        lock: Any = None,
    ) -> None:
        self.state, self.paths, self.scratch, self.log_path, self.say = state, paths, scratch, log_path, say
        self.progress = progress or RunProgress()
        self.worker: Worker | None = None
        self.lock = lock or threading.RLock()

    def _start_worker(self) -> tuple[Worker, dict[str, Any]]:
        """A new worker process, once it said it is ready (with what it found of the device)."""
        worker = Worker(self.state.spec, self.paths, self.scratch, self.log_path)
        try:
            ready = worker.next_event(timeout=ready_timeout(self.state.spec))
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
            with self.lock:
                if self.state.info is None:
                    self.state.info = info
                    self.state.journal.append_info(asdict(info))
        return self.worker

    def run_case(self, case: dict[str, Any], repeat: int) -> None:
        """Run one case's subtests not yet journaled for this repeat. A curated case is its whole
        file; a census case is the node ids it names (`select`: one entry of a shared module),
        and a collection error is then that entry's own (`<collection>[case id]`)."""
        own = case.get("select")
        collection = collection_id(case)

        def ours(test_id: str) -> bool:
            return test_id == collection or (test_id in own if own else test_id.startswith(case["test_file"]))

        with self.lock:
            done_here: set[str] = {t for (t, r) in self.state.done if r == repeat and ours(t)}
            for test_id, (first, outcome) in sorted(self.state.limited.items()):
                if first < repeat and ours(test_id) and test_id not in done_here:
                    self._record(case, repeat, not_rerun_event(test_id, first, outcome, self.state.spec))
                    done_here.add(test_id)
        if collection in done_here:
            return
        for _attempt in range(1000):  # one attempt per fault at most; bounded by the subtests
            worker = self._ensure_worker()
            # A stack dump from here on is this request's: a worker that dumps one dies (and is
            # replaced), so it holds one at most. Marked before the worker can start anything: a
            # subtest that dies at once may have dumped before its `start` event is read.
            worker.mark_log()
            if own:
                remaining = [str(self.paths.repo_root / t) for t in own if t not in done_here]
                if not remaining:
                    return
                worker.send({"select": remaining})
            else:
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
                        test_id = event["test_id"] if event.get("when") != "collect" else collection
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
                            fault_event(
                                collection,
                                "error",
                                "HarnessError",
                                event.get("error", ""),
                            ),
                        )
                        return
            except (WorkerHung, WorkerOverMemory, WorkerDied) as fault:
                where = worker.last_words(fault_moment(fault))
                if isinstance(fault, WorkerDied):
                    worker.close()
                else:
                    worker.kill()
                target = in_flight or collection
                described = describe_fault(fault, self.state.spec, where)
                self._record(case, repeat, fault_event(target, *described))
                done_here.add(target)
            if target == collection:
                return

    def confirm_failures(
        self, jobs: int = 1, method: str = "fork", cases: list[dict[str, Any]] | None = None
    ) -> int:
        """Re-run every failing subtest alone, each in a fresh worker (nothing else ran there
        before it: no earlier case, no framework cache, no compiled code), and journal the verdict
        and how the worker was made (`confirmation`: forked from an import-only process, or
        spawned). A subtest that passes alone failed because of what ran before it in the run: it
        is order-dependent, kept and visible, not the framework's failure. Timeouts and memory-cap
        kills are not re-run (another 15 minutes or another blown cap would say nothing new). A host
        fallback is re-run too: confirmed if it falls back again alone, order-dependent if it passes.
        A `<collection>` row (the case never ran its subtests: a collection error, or the worker
        died outside any subtest) is re-run as its whole case (`cases`: the run's case rows), alone
        in a fresh worker: the fault again confirms it, a clean run to the end is order-dependent.
        `jobs` workers run at once (each alone in its own process); verdicts are journaled here,
        in one thread, as they come. Returns the number of subtests re-run."""
        if self.worker is not None:
            self.worker.stop()
            self.worker = None
        _, rows = self.state.journal.read()
        done = self.state.journal.confirmations()
        by_case = {case["case_id"]: case for case in cases or []}
        nodes: dict[str, list[str] | None] = {}
        fell_back = set()
        for r in rows:
            if r["outcome"] not in contracts.CONFIRMED_OUTCOMES or r["test_id"] in done:
                continue
            if r["outcome"] == "host_fallback":
                fell_back.add(r["test_id"])
            if "::<collection>" not in r["test_id"]:
                nodes[r["test_id"]] = None
            elif r.get("case_id") in by_case:  # a case no longer selected cannot be re-run: left as is
                case = by_case[r["case_id"]]
                nodes[r["test_id"]] = list(case.get("select") or [case["test_file"]])
        failing = sorted(nodes)
        self.progress.confirming(len(failing))
        alone = AloneRunner(self.state.spec, self.paths, self.scratch, self.log_path, method)
        try:
            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool, alone.stopped_on_interrupt(pool):
                pending = {pool.submit(alone.run, test_id, nodes[test_id]): test_id for test_id in failing}
                for future in as_completed(pending):
                    test_id = pending[future]
                    ran = future.result()
                    outcome = ran["outcome"]
                    again = {"host_fallback"} if test_id in fell_back else contracts.FAILING_OUTCOMES
                    verdict = (
                        "confirmed"
                        if outcome in again
                        else "order_dependent"
                        if outcome == "passed"
                        else "inconclusive"
                    )
                    self.state.journal.append_confirmation({"test_id": test_id, "verdict": verdict, **ran})
                    self.state.journal.sync()
                    self.progress.confirmed(test_id, verdict)
        finally:
            alone.close()
        if alone.fork_refused:
            refused = alone.fork_refused
            self.say(f"confirmations spawned their workers (the forking worker refused: {refused})")
        return len(failing)

    def _record(self, case: dict[str, Any], repeat: int, event: dict[str, Any]) -> None:
        with self.lock:
            if self.state.interrupted:
                return
            row = build_row(self.state, case, repeat, event)
            self.state.journal.append(row)
            self.state.done.add((row["test_id"], repeat))
            self.state.note_limit(row)
            self.progress.row(row)

    def close(self, at_once: bool = False) -> None:
        """Let the worker finish and leave; `at_once` (the run was interrupted): kill it and its group."""
        if self.worker is not None and at_once:
            self.worker.kill()
        elif self.worker is not None:
            self.worker.stop()


# contracts.CONFIRMED_OUTCOMES are re-run alone before they count (timeout and memory are not: see
# confirm_failures): the failing ones, and host fallback (a graph left pending by an earlier subtest
# must not be counted).


# The measures a case may report (harness.MEASURES), as results columns.
MEASURE_COLUMNS = (
    "oracle",
    "samples",
    "samples_failed",
    "samples_compared",
    "max_abs_error",
    "max_rel_error",
    "result_dtype",
    "oracle_dtype",
    "dtype_mismatches",
)
# What the device said of a subtest's calls (harness._device_events), as results columns.
DEVICE_EVENT_COLUMNS = (
    "host_fallback_ops",
    "host_fallback_calls",
    "device_compiles",
    "device_compiles_timed",
)


def collection_id(case: dict[str, Any]) -> str:
    """The test id under which a case's collection error is recorded."""
    suffix = f"[{case['case_id']}]" if case.get("select") else ""
    return f"{case['test_file']}::<collection>{suffix}"


def subtest_name(test_id: str) -> str:
    """The subtest's name across devices: the test name after the file (no device token in ours)."""
    return test_id.split("::", 1)[1] if "::" in test_id else test_id


def build_row(state: RunState, case: dict[str, Any], repeat: int, event: dict[str, Any]) -> dict[str, Any]:
    """One results row from a worker event, with its failure classified by the rule table."""
    from portability_data.runner.failures import classify_failure_detail

    outcome = event["outcome"]
    category = rule = subcategory = None
    if outcome in contracts.FAILING_OUTCOMES:
        category, rule, subcategory = classify_failure_detail(
            state.spec.framework,
            event.get("error_type") or "",
            event.get("error_message") or "",
            outcome=outcome,
        )
    info = state.info
    measures = event.get("measures") or {}
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
        **{name: measures.get(name) for name in MEASURE_COLUMNS},
        **{name: event.get(name) for name in DEVICE_EVENT_COLUMNS},
    }


def close_partial(run_id: str, paths: Paths) -> str:
    """Write the shard of a run that will not be finished (the machine is gone, the budget spent)
    from its journal as it stands, with runs.status = partial; `--resume` is then refused."""
    state = resume_state(run_id, paths)
    return finish(state, paths, status="partial")


def shard_path(paths: Paths, run_id: str, source: str = SOURCE) -> Path:
    """Where the run's results shard lands (written once, by `finish`)."""
    return paths.results_dir / source / f"{run_id}.parquet"


def finish(state: RunState, paths: Paths, status: str = "complete") -> str:
    """Turn the journal into the immutable shard and the runs row (both atomic, never replaced)."""
    _, rows = state.journal.read()
    state.journal.seal(state.run_id)  # the chain the package carries (runner/row_chain.py)
    rows.sort(key=lambda r: (r["repeat"], r["case_id"], r["test_id"]))
    if state.info is not None:
        for row in rows:  # rows journaled before the worker said ready (resume) get the device facts
            if row["framework_version"] == "unknown":
                row["framework_version"] = state.info.framework_version
    confirmations = state.journal.confirmations()
    compiler, runtime = state.spec.resolved_compiler(), state.spec.path.runtime
    for row in rows:
        row["compiler"], row["runtime"] = compiler, runtime  # the setting's, as the runs row's
        found = confirmations.get(row["test_id"])
        if found is not None and row["outcome"] in contracts.CONFIRMED_OUTCOMES:
            row["confirmation"] = found["verdict"]
    shard = pa.Table.from_pylist(rows, schema=contracts.RESULTS)
    atomic_write_arrow(shard_path(paths, state.run_id, state.spec.source), shard, exclusive=True)
    info = state.info or WorkerInfo(state.spec.device, "unknown", 0.0, None)
    commit, modified = code_as_run(state.code, code_state(paths.repo_root))
    run_row = {
        "run_id": state.run_id,
        "source": state.spec.source,
        "framework": state.spec.framework,
        "framework_version": info.framework_version,
        "device": state.spec.device,
        "device_model": info.device_model,
        "mode": state.spec.mode,
        "compiler": compiler,
        "runtime": runtime,
        "repeats": state.spec.repeats,
        "timeout_s": float(state.spec.timeout_s),
        "host": platform.node() or "unknown",
        "os": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "accelerator": None if state.spec.device == "cpu" else info.device_model,
        "driver": info.driver,
        "packages": json.dumps(package_versions(state.spec.framework), sort_keys=True),
        "git_commit": commit,
        "code_modified": modified,
        "params_hash": state.params_hash,
        "timer_floor_ms": info.timer_floor_ms,
        "started_at": dt.datetime.fromisoformat(state.started_at),
        "finished_at": dt.datetime.now(dt.UTC),
        "status": status,
        "n_results": len(rows),
        **host_facts(),
        "build": _build_json(info.build, state.spec),
        **(state.digests or {"harness_digest": None, "cases_digest": None, "case_digests": None}),
        "host_load_mean": _mean(state.host_load),
        "host_load_max": round(max(state.host_load), 2) if state.host_load else None,
        "host_other_cpu_mean": _mean(state.host_other_cpu),
        "host_other_cpu_max": round(max(state.host_other_cpu), 2) if state.host_other_cpu else None,
        "jobs": state.jobs,
    }
    runs_path = paths.runs_dir / state.spec.source / f"{state.run_id}.parquet"
    atomic_write_arrow(runs_path, pa.Table.from_pylist([run_row], schema=contracts.RUNS), exclusive=True)
    return state.run_id


def _build_json(build: dict[str, Any] | None, spec: RunSpec) -> str | None:
    """The worker's build facts, with the compile cache its workers used (compile_cache.cache_record:
    the folder, or "off"), so a reader knows a re-run read compiled programs from disk."""
    cache = cache_record(spec.framework, spec.device, suite=spec.suite)
    if cache is not None:
        build = {**(build or {}), "compile_cache": cache}
    return json.dumps(build, sort_keys=True) if build is not None else None


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None
