"""`portability bench --device D --budget S --out DIR`: measure one device path in priority order
until a time budget is spent, for a lent machine that is there for minutes (issue 58).

The parts run one after another (`DEFAULT_PARTS`: curated torch eager, then compiled, curated JAX
eager, then jit, then the torch and JAX census), each a normal `supervisor.run` of the runner
(journal, shard, runs row; the device judge of runner/device_oracle.py compares every sample with
the host CPU off the host). Each part runs in a child process of its own session, so that the
budget can stop it whatever it is doing (a hung CUDA call included): at the deadline the child and
its workers are killed, and the run is closed from its journal as `partial` (`close_partial`), so
no journaled row is lost. The bench's own journal (`bench_journal.json` in the output folder) says
which parts are complete, partial or failed: a second call skips the complete ones and runs, for a
partial one, only the cases its shard lacks (the case in flight at the cut again: aggregation keeps
the newest run of a case, pipeline/subtests.py's supersede).

Everything lands in the output folder laid out like a checkout's data/ (data/results/<source>/,
data/runs/<source>/, data/.journal/), so `portability submission package` can package it. Light
on purpose (runner layer): the framework is imported by the part's child and its workers only.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from portability_data.runner.spec import LOCAL_SOURCE, Paths, RunError, RunSpec, select_cases
from portability_data.tables.atomic import atomic_write_bytes

JOURNAL_FILE = "bench_journal.json"
CLOSE_GRACE_S = 5.0  # after SIGTERM, before SIGKILL: the worker may flush its last line


@dataclass(frozen=True)
class Part:
    """One run of the bench: a framework's suite in one mode (on the bench's device)."""

    framework: str
    mode: str
    suite: str = "curated"

    @property
    def label(self) -> str:
        return f"{self.framework}/{self.mode}" + ("/census" if self.suite == "census" else "")

    @classmethod
    def parse(cls, text: str) -> Part:
        """`torch/eager`, `jax/compiled/census`: the label read back (the `--parts` option)."""
        pieces = text.strip().split("/")
        if len(pieces) not in (2, 3) or (len(pieces) == 3 and pieces[2] not in ("census", "curated")):
            raise RunError(
                f"part {text!r}: write framework/mode or framework/mode/census, e.g. torch/eager, "
                "jax/compiled/census"
            )
        return cls(pieces[0], pieces[1], pieces[2] if len(pieces) == 3 else "curated")


# The priority: curated before census, torch before JAX, eager before compiled.
DEFAULT_PARTS = (
    Part("torch", "eager"),
    Part("torch", "compiled"),
    Part("jax", "eager"),
    Part("jax", "compiled"),
    Part("torch", "eager", "census"),
    Part("jax", "eager", "census"),
    Part("torch", "compiled", "census"),
    Part("jax", "compiled", "census"),
)


@dataclass(frozen=True)
class Limits:
    """How each part runs and when the bench stops starting parts. `min_part_s`: a part is not
    started with less left (a GPU worker takes seconds to start); `reserve_s`: kept at the end
    for closing the cut run and packaging."""

    device: str
    budget_s: float
    repeats: int = 1
    timeout_s: float = 60.0
    memory_mb: int = 8192
    source: str = LOCAL_SOURCE
    min_part_s: float = 20.0
    reserve_s: float = 15.0


def paths_in(out: Path, repo_root: Path) -> Paths:
    """The runner's paths with the output folder in place of the checkout's data/: cases and
    harness from the checkout, journals, shards and runs rows under out/data/."""
    repo_root, out = Path(repo_root).resolve(), Path(out).resolve()
    data = out / "data"
    return Paths(repo_root, repo_root / "cases", data / "results", data / "runs", data / ".journal")


class BenchJournal:
    """The bench's state in the output folder (JSON, written atomically after every change):
    per part its status and run ids, and each call's start, budget and end."""

    def __init__(self, out: Path) -> None:
        self.path = Path(out) / JOURNAL_FILE
        if self.path.is_file():
            try:
                self.state: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise RunError(
                    f"{self.path}: not the bench's journal ({exc}); give another --out, or remove it"
                ) from None
        else:
            self.state = {"parts": {}, "calls": []}

    def check_device(self, limits: Limits) -> None:
        """A folder holds one device's bench: another device's resume would mix settings."""
        found = self.state.setdefault("device", limits.device)
        if found != limits.device:
            raise RunError(f"{self.path}: a bench of device {found}, not {limits.device}; use another --out")
        self.state.setdefault("source", limits.source)
        if self.state["source"] != limits.source:
            raise RunError(
                f"{self.path}: its runs are source {self.state['source']}, not {limits.source}; "
                "resume with the same --source, or use another --out"
            )

    def part(self, part: Part) -> dict[str, Any]:
        entry: dict[str, Any] = self.state["parts"].setdefault(
            part.label, {"status": "pending", "run_ids": []}
        )
        return entry

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(self.path, (json.dumps(self.state, indent=2, sort_keys=True) + "\n").encode())


def part_spec(part: Part, limits: Limits, cases: tuple[str, ...] = ()) -> RunSpec:
    spec = RunSpec(
        framework=part.framework,
        device=limits.device,
        mode=part.mode,
        repeats=limits.repeats,
        timeout_s=limits.timeout_s,
        memory_mb=limits.memory_mb,
        cases=cases,
        source=limits.source,
        suite=part.suite,
    )
    spec.validate()
    return spec


def remaining_cases(spec: RunSpec, paths: Paths, run_ids: list[str]) -> tuple[str, ...]:
    """The part's cases its earlier (partial) runs did not finish: those with no row in their
    shards, and the last case a run holds rows of unless that run reached every case (it was then
    cut in flight; cases run one at a time in case id order: `select_cases`, jobs 1)."""
    wanted = [row["case_id"] for row in select_cases(spec, paths)]
    finished: set[str] = set()
    for run_id in run_ids:
        shard = paths.results_dir / spec.source / f"{run_id}.parquet"
        if not shard.is_file():
            continue
        held = set(pq.read_table(shard, columns=["case_id"]).column("case_id").to_pylist())
        if set(wanted) - held and held:
            held.discard(max(held))
        finished |= held
    return tuple(case for case in wanted if case not in finished)


def adopt_unclosed(paths: Paths, source: str) -> list[tuple[str, str]]:
    """Close, as partial, every run in the folder whose journal has rows but no shard (the bench
    itself was killed mid-part: its part's child had no one to close it); returns (part label, run
    id) for each, so the bench journal credits them to their parts."""
    from portability_data.runner.journal import resume_state
    from portability_data.runner.supervisor import close_partial

    adopted = []
    for run_id in sorted(_journals(paths)):
        if (paths.results_dir / source / f"{run_id}.parquet").is_file():
            continue
        if not _rows_journaled(paths.journal_dir / f"{run_id}.jsonl"):
            continue  # a run that never measured: nothing to keep
        spec = resume_state(run_id, paths).spec
        close_partial(run_id, paths)
        adopted.append((Part(spec.framework, spec.mode, spec.suite).label, run_id))
    return adopted


def _journals(paths: Paths) -> set[str]:
    return {p.stem for p in paths.journal_dir.glob("*.jsonl")} if paths.journal_dir.is_dir() else set()


def _stop(child: subprocess.Popen[str]) -> None:
    """End the part's child and every process under it: TERM, then KILL. Its case workers lead
    sessions of their own (worker_process), out of the child's process group, so they are found
    by their parentage first, while they are still the child's: a worker left behind would sleep
    out a hung case and hold a lent device after the bench ended."""
    from portability_data.runner.provenance import descendants

    under = descendants(child.pid)
    for sig, wait in ((signal.SIGTERM, CLOSE_GRACE_S), (signal.SIGKILL, 30.0)):
        for pid in under:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(timeout=wait)
            if sig == signal.SIGKILL:
                return
        except subprocess.TimeoutExpired:
            continue


def run_part(
    spec: RunSpec, paths: Paths, seconds: float, say: Callable[[str], None]
) -> tuple[str | None, str]:
    """Run one part for at most `seconds`: (run id, status): complete, partial (cut by the budget
    and closed from its journal), or failed (the run could not start; no run id when no journal)."""
    from portability_data.runner.supervisor import close_partial

    before = _journals(paths)
    command = [
        sys.executable,
        "-m",
        "portability_data.runner.budget_bench",
        json.dumps(_child_args(spec, paths)),
    ]
    child = subprocess.Popen(command, start_new_session=True, text=True, stderr=subprocess.PIPE)
    try:
        _, err = child.communicate(timeout=max(seconds, 0.1))
        cut = False
    except subprocess.TimeoutExpired:
        _stop(child)
        err, cut = (child.stderr.read() if child.stderr else ""), True
    new = sorted(_journals(paths) - before)
    run_id = new[-1] if new else None
    if run_id is not None and (paths.results_dir / spec.source / f"{run_id}.parquet").is_file():
        return run_id, "complete"
    if run_id is None or not _rows_journaled(paths.journal_dir / f"{run_id}.jsonl"):
        # nothing measured (the worker never started, or the cut came first): no shard of no rows
        last = (err or "").strip().splitlines()[-1:] or ["no message"]
        say(f"  nothing measured: {'the budget ran out first' if cut else last[0]}")
        return None, "partial" if cut else "failed"
    close_partial(run_id, paths)  # cut by the budget, or died on its own: its rows kept, as partial
    if not cut:
        last = (err or "").strip().splitlines()[-1:] or ["no message"]
        say(f"  the run stopped on its own: {last[0]}")
    return run_id, "partial" if cut else "failed"


def _rows_journaled(journal: Path) -> bool:
    """Whether a run's journal holds a row (a run cut before its first row has nothing to close)."""
    with open(journal, encoding="utf-8") as handle:
        return any(line.startswith('{"row"') for line in handle)


def _child_args(spec: RunSpec, paths: Paths) -> dict[str, Any]:
    return {"spec": asdict(spec), "paths": {k: str(v) for k, v in asdict(paths).items()}}


def _child(payload: str) -> None:
    """The part's child process: one normal run of the runner (its shard and runs row on success)."""
    from portability_data.runner.supervisor import run

    given = json.loads(payload)
    spec = RunSpec(**{**given["spec"], "cases": tuple(given["spec"]["cases"])})
    paths = Paths(**{k: Path(v) for k, v in given["paths"].items()})
    run(spec, paths)


def bench_device(
    parts: tuple[Part, ...],
    limits: Limits,
    out: Path,
    repo_root: Path,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run the parts in order until the budget is spent; returns the bench journal's state. A part
    the journal holds as complete is skipped; a partial one continues with its remaining cases."""
    started = time.monotonic()
    deadline = started + limits.budget_s - limits.reserve_s
    paths = paths_in(out, repo_root)
    journal = BenchJournal(out)
    journal.check_device(limits)
    for label, orphan in adopt_unclosed(paths, limits.source):
        say(f"{label}: {orphan} was left unclosed (the bench was killed): closed partial, its rows kept")
        journal.state["parts"].setdefault(label, {"status": "partial", "run_ids": []})["run_ids"].append(
            orphan
        )
        journal.state["parts"][label]["status"] = "partial"
    call: dict[str, Any] = {
        "started_at": dt.datetime.now(dt.UTC).isoformat(),
        "budget_s": limits.budget_s,
        "ran": [],
    }
    journal.state["calls"].append(call)
    journal.save()
    for part in parts:
        entry = journal.part(part)
        if entry["status"] == "complete":
            say(f"{part.label}: complete already ({', '.join(entry['run_ids'])}); skipped")
            continue
        left = deadline - time.monotonic()
        if left < limits.min_part_s:
            say(
                f"{part.label}: not started ({left:.0f} s left of the budget, "
                f"a part needs {limits.min_part_s:.0f})"
            )
            continue
        spec = part_spec(part, limits)
        if entry["run_ids"]:
            todo = remaining_cases(spec, paths, entry["run_ids"])
            if not todo:
                entry["status"] = "complete"
                journal.save()
                continue
            spec = part_spec(part, limits, todo)
            say(f"{part.label}: resuming: {len(todo)} case(s) its earlier run(s) did not finish")
        say(f"{part.label}: running on {limits.device} for at most {left:.0f} s")
        entry["status"] = "running"
        journal.save()
        run_id, status = run_part(spec, paths, left, say)
        if run_id is not None:
            entry["run_ids"].append(run_id)
        if status == "partial" or (status == "failed" and entry["run_ids"]):
            status = (
                "complete"
                if not remaining_cases(part_spec(part, limits), paths, entry["run_ids"])
                else status
            )
        entry["status"] = status
        call["ran"].append({"part": part.label, "run_id": run_id, "status": status})
        journal.save()
        say(f"{part.label}: {status}" + (f" ({run_id})" if run_id else ""))
    call["finished_at"] = dt.datetime.now(dt.UTC).isoformat()
    call["elapsed_s"] = round(time.monotonic() - started, 1)
    journal.save()
    return journal.state


if __name__ == "__main__":  # a part's child (run_part)
    _child(sys.argv[1])
