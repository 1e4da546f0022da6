"""The run's journal and the state read back from it: what makes a killed run resumable.

Every finished row is appended to the journal (JSON lines) before anything else happens, so a
runner killed with SIGKILL resumes with `--resume <run_id>` with no row lost and none twice.
`resume_state` rebuilds a run's state from its journal, for `--resume` and for `--close`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portability_data.runner.provenance import code_digests
from portability_data.runner.row_chain import confirm_digest, genesis, next_link, row_digest, write_chain
from portability_data.runner.spec import Paths, RunError, RunSpec
from portability_data.runner.worker_process import WorkerInfo
from portability_data.tables.contracts import LIMIT_OUTCOMES


class Journal:
    """Append-only JSON lines: a header with the run's spec, then one line per finished row.

    Every line is handed to the OS as soon as it is written, so a killed runner loses nothing; it
    is forced to disk (fsync) once per case file (``sync``), not per row: a sync costs about a
    millisecond, more than many subtests take, and a power cut loses one case file at most.

    Rows and confirmations carry a `link` (runner/row_chain.py): the chain `seal` writes beside the
    journal at the finish, which the submission check recomputes from the shard. A journal from
    before the chain has no links and gets none (``_head`` None): its rows stay unchained.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: Any = None
        self._head: str | None = None  # the last record's link (None: an unchained journal)
        self._records: list[list[Any]] = []  # (kind, test_id, repeat, digest), in journal order

    def start(self, header: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "x", encoding="utf-8") as handle:
            handle.write(json.dumps({"header": header}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self._head, self._records = genesis(header["run_id"]), []

    def append(self, row: dict[str, Any]) -> None:
        self._write(self._chained("row", row["test_id"], row["repeat"], row_digest(row), {"row": row}))

    def append_confirmation(self, confirmation: dict[str, Any]) -> None:
        """The verdict of a failing subtest re-run alone in a fresh worker."""
        test_id = confirmation["test_id"]
        digest = confirm_digest(test_id, confirmation.get("verdict"))
        self._write(self._chained("confirm", test_id, None, digest, {"confirm": confirmation}))

    def _chained(
        self, kind: str, test_id: str, repeat: int | None, digest: str, entry: dict[str, Any]
    ) -> dict[str, Any]:
        """The entry with its link to the previous record (unchanged in an unchained journal)."""
        if self._head is None:
            return entry
        self._head = next_link(self._head, digest)
        self._records.append([kind, test_id, repeat, digest])
        return {**entry, "link": self._head}

    def seal(self, run_id: str) -> Path | None:
        """Write the chain beside the journal (`<run_id>.chain.json`) as the last `read` verified
        it (the finish reads the journal first); None for an unchained journal."""
        if self._head is None:
            return None
        worker_log = self.path.with_name(f"{run_id}.log")  # the supervisor's workers write it there
        return write_chain(self.path, run_id, self._records, self._head, worker_log)

    def confirmations(self) -> dict[str, dict[str, Any]]:
        """test_id -> the confirmation journaled for it (a torn last line is dropped)."""
        return {
            entry["confirm"]["test_id"]: entry["confirm"] for entry in self._entries() if "confirm" in entry
        }

    def append_load(self, load: float) -> None:
        """The host's load average at a case start: journaled, so a resumed run keeps its samples."""
        self._write({"load": load})

    def loads(self) -> list[float]:
        return [float(entry["load"]) for entry in self._entries() if "load" in entry]

    def append_other_cpu(self, cores: float) -> None:
        """Other work on the host over a case, in cores (provenance.OtherCpu): journaled too."""
        self._write({"other_cpu": cores})

    def other_cpus(self) -> list[float]:
        return [float(entry["other_cpu"]) for entry in self._entries() if "other_cpu" in entry]

    def _entries(self) -> Iterator[dict[str, Any]]:
        """Every entry written so far, in order; a torn last line (killed mid-write) is dropped."""
        if self._handle is not None:
            self._handle.flush()
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue

    def append_info(self, info: dict[str, Any]) -> None:
        """What the first worker said of the device (model, versions, timer floor)."""
        self._write({"info": info})

    def _write(self, entry: dict[str, Any]) -> None:
        if self._handle is None:
            torn = self.path.stat().st_size > 0 and self._last_byte() != b"\n"
            self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (kept for the run)
            if torn:  # a line torn by a kill: end it, or the next record would be glued onto it
                self._handle.write("\n")
        self._handle.write(json.dumps(entry) + "\n")
        self._handle.flush()

    def _last_byte(self) -> bytes:
        with open(self.path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1)

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
        """The header and the rows; a torn last line (killed mid-write) is dropped. The chain is
        verified as it is read and continues from its last link (a resumed run keeps it): a record
        whose link is not its content's is refused, naming the line."""
        header: dict[str, Any] | None = None
        rows: dict[tuple[str, int], dict[str, Any]] = {}
        head: str | None = None
        records: list[list[Any]] = []
        for number, entry in enumerate(self._entries(), start=1):
            if "header" in entry:
                header = entry["header"]
                head = genesis(header["run_id"])
            elif "row" in entry or "confirm" in entry:
                if "row" in entry:
                    row = entry["row"]
                    rows[(row["test_id"], row["repeat"])] = row
                    record = ["row", row["test_id"], row["repeat"], row_digest(row)]
                else:
                    found = entry["confirm"]
                    digest = confirm_digest(found["test_id"], found.get("verdict"))
                    record = ["confirm", found["test_id"], None, digest]
                if "link" not in entry:
                    head = None  # a journal from before the chain: it stays unchained
                elif head is not None:
                    head = next_link(head, record[3])
                    if entry["link"] != head:
                        raise RunError(
                            f"{self.path}: line {number} ({record[1]}, repeat {record[2]}) does not "
                            "hash to its link: the journal was edited after it was written; close or "
                            "resume only a journal as the runner wrote it (or start a new run)"
                        )
                    records.append(record)
            elif "info" in entry and header is not None:
                header.setdefault("info", entry["info"])
        if header is None:
            raise RunError(f"{self.path}: journal has no header; it is not a run journal")
        if self._handle is None:  # what a resumed or closing run continues from
            self._head, self._records = head, records
        return header, list(rows.values())


@dataclass
class RunState:
    """A run as it goes: its spec and id, its journal, the rows done, the device and code facts."""

    spec: RunSpec
    run_id: str
    journal: Journal
    started_at: str
    params_hash: str
    done: set[tuple[str, int]] = field(default_factory=set)
    info: WorkerInfo | None = None
    digests: dict[str, Any] | None = None  # taken when the run starts: the code as it ran
    code: dict[str, Any] | None = None  # git_commit, code_modified when the run started (provenance)
    # 1-minute load average at each case start (journaled: a resumed run keeps the earlier ones)
    host_load: list[float] = field(default_factory=list)
    # CPU cores' worth of work outside the run's own process tree, per case (provenance.OtherCpu)
    host_other_cpu: list[float] = field(default_factory=list)
    jobs: int = 1  # workers running cases side by side (census only: curated timings run alone)
    # subtests a run limit stopped (timeout, memory cap): test id -> that first row's repeat and
    # outcome; later repeats do not run them again (contracts.LIMIT_OUTCOMES)
    limited: dict[str, tuple[int, str]] = field(default_factory=dict)
    # set when the run is interrupted (Ctrl-C, SIGTERM): no case starts and no row is journaled after
    interrupted: bool = False

    def note_limit(self, row: dict[str, Any]) -> None:
        """Remember a subtest a run limit stopped (its earliest repeat), as rows are journaled."""
        if row["outcome"] in LIMIT_OUTCOMES:
            first = self.limited.get(row["test_id"])
            if first is None or row["repeat"] < first[0]:
                self.limited[row["test_id"]] = (row["repeat"], row["outcome"])


def resume_state(run_id: str, paths: Paths) -> RunState:
    """The state of an unfinished run, read back from its journal (refused if its shard exists)."""
    path = paths.journal_dir / f"{run_id}.jsonl"
    if not path.exists():
        raise RunError(
            f"no journal for run {run_id!r} at {path}; list journals with `ls {paths.journal_dir}`"
        )
    journal = Journal(path)
    header, rows = journal.read()
    spec = RunSpec(**{**header["spec"], "cases": tuple(header["spec"].get("cases", ()))})
    if (paths.results_dir / spec.source / f"{run_id}.parquet").exists():  # the run's own source
        raise RunError(f"run {run_id} already finished: its shard exists; nothing to resume")
    state = RunState(
        spec,
        header["run_id"],
        journal,
        header["started_at"],
        header["params_hash"],
        digests=header.get("digests"),
        jobs=int(header.get("jobs", 1)),
        code=header.get("code"),
    )
    state.done = {(r["test_id"], r["repeat"]) for r in rows}
    for row in rows:
        state.note_limit(row)
    state.host_load = journal.loads()
    state.host_other_cpu = journal.other_cpus()
    if header.get("info"):
        state.info = WorkerInfo(**header["info"])
    elif rows:  # a journal from before info lines: the rows know the device, not the timer floor
        state.info = WorkerInfo(rows[0]["device_model"], rows[0]["framework_version"], None, None)
    return state


def refuse_changed_code(state: RunState, paths: Paths) -> None:
    """A run resumes only on the code that started it: its rows carry the harness and case digests
    its journal recorded at the start, so rows made by another harness or other case files would
    claim code that did not make them. Raises RunError naming what changed and what to do."""
    if not state.digests:
        return  # a journal from before runs recorded digests: nothing to hold it to
    now = code_digests(paths, state.spec)
    changed = []
    if now["harness_digest"] != state.digests.get("harness_digest"):
        then = str(state.digests.get("harness_digest"))[:12]
        changed.append(f"the harness ({then} then, {now['harness_digest'][:12]} now)")
    then_cases = json.loads(state.digests.get("case_digests") or "{}")
    now_cases = json.loads(now["case_digests"])
    edited = sorted(c for c in then_cases.keys() | now_cases.keys() if then_cases.get(c) != now_cases.get(c))
    if edited:
        shown = ", ".join(edited[:5]) + (f" and {len(edited) - 5} more" if len(edited) > 5 else "")
        changed.append(f"the case files of {shown}")
    if changed:
        raise RunError(
            f"run {state.run_id} was started on other code than this checkout's: {'; '.join(changed)} "
            "changed since. Resume it from a checkout of the commit it started on (`git worktree add "
            "<dir> <commit>`, then `portability run --resume` there), or write its rows as they stand "
            f"with `portability run --close {state.run_id}`."
        )
