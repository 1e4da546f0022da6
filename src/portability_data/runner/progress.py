"""Progress of a run, driven by the rows the runner's supervisor already journals.

The runner calls an observer at each case file and each row; nothing here talks to the worker,
so the measured hot path is unchanged. On a terminal the observer draws a bar (tqdm, where the
pipeline extras installed it); in a log (stdout or stderr not a TTY, or a terminal that reports zero
columns, where a bar draws nothing) it writes one short line per case file to stderr instead, with
the setting, the case's place and the run's elapsed time, and a line at least once a minute while a
long case runs, so logs stay readable and a bare accelerator machine needs nothing.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, TextIO

from portability_data.runner.run_summary import CaseCounts, cannot_run, why_not_run

BAR_REFRESH_S = 0.5  # the bar's counts are redrawn at most this often while rows stream in
BEAT_S = 60.0  # in a log, a line at least this often while a case (or a confirmation phase) runs


def setting_of(run_id: str) -> str:
    """`framework/device/mode[ census]` from a run id (supervisor.new_run_id: framework-device-mode
    [-census]-stamp-random; no framework, device or mode name has a dash)."""
    parts = run_id.split("-")
    if len(parts) < 3:
        return run_id
    return "/".join(parts[:3]) + (" census" if len(parts) > 3 and parts[3] == "census" else "")


def clock(seconds: float) -> str:
    """`m:ss` (or `h:mm:ss`): a run's elapsed time as a person reads it in a log."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class RunProgress:
    """Observer of a run; this base does nothing (run-stage and library callers stay silent)."""

    def started(self, run_id: str, n_cases: int, repeats: int) -> None:
        """The run is about to feed `n_cases` case files, `repeats` times."""

    def case_started(self, case: dict[str, Any], repeat: int) -> None:
        """A case file goes to the worker."""

    def row(self, row: dict[str, Any]) -> None:
        """A results row was journaled."""

    def case_finished(self, case: dict[str, Any], repeat: int) -> None:
        """The worker is done with the case file."""

    def confirming(self, n_subtests: int) -> None:
        """Failing subtests are about to be re-run alone, one fresh worker each."""

    def confirmed(self, test_id: str, verdict: str) -> None:
        """One failing subtest was re-run alone."""

    def close(self) -> None:
        """The run ended (finished, failed or interrupted)."""


class LineProgress(RunProgress):
    """One short line per case file (and per confirmation phase) on a stream: for logs. While a case
    runs longer than `beat_s`, a `still running` line every `beat_s` (from a daemon thread), so a
    log never stays silent for minutes (a JAX case compiles each op on first call)."""

    def __init__(self, stream: TextIO | None = None, beat_s: float = BEAT_S) -> None:
        self.stream = stream or sys.stderr
        self.beat_s = beat_s
        self.n_cases = self.repeats = self.position = 0
        self.counts = CaseCounts("")
        self.case_started_at = self.run_started_at = self.said_at = 0.0
        self.problem: str | None = None
        self.setting = ""
        self.current: str | None = None  # what the heartbeat says is running, None between cases
        self.confirm_total = self.confirm_done = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def started(self, run_id: str, n_cases: int, repeats: int) -> None:
        self.n_cases, self.repeats, self.position = n_cases, repeats, 0  # one object serves many runs
        self.setting, self.run_started_at = setting_of(run_id), time.monotonic()
        self.confirm_total = self.confirm_done = 0
        self._say(f"run {run_id}: {n_cases} case file(s) x {repeats} repeat(s)")
        self._start_beat()

    def case_started(self, case: dict[str, Any], repeat: int) -> None:
        self.position += 1
        self.counts = CaseCounts(case["case_id"])
        self.case_started_at = time.monotonic()
        self.problem = None
        self.current = self._where(case, repeat)

    def row(self, row: dict[str, Any]) -> None:
        self.counts.add(row)
        if cannot_run(row) and self.problem is None:
            self.problem = why_not_run(row)

    def case_finished(self, case: dict[str, Any], repeat: int) -> None:
        self.current = None
        self._say(self.case_line(case, repeat))

    def _where(self, case: dict[str, Any], repeat: int) -> str:
        """`jax/cpu/eager [ 3/96] jax.numpy.cos`: the setting, the case's place, its id."""
        total = self.n_cases * self.repeats
        where = f"[{self.position:>{len(str(total))}}/{total}] {case['case_id']}"
        if self.repeats > 1:
            where += f" (repeat {repeat + 1}/{self.repeats})"
        return f"{self.setting} {where}" if self.setting else where

    def case_line(self, case: dict[str, Any], repeat: int) -> str:
        """`torch/cpu/eager [  3/126] torch.argsort: 30 passed, 2 failed, 0 errors, 0 skipped (1.2 s;
        run 4:05)`."""
        where = self._where(case, repeat)
        if self.problem is not None:
            return f"{where}: {self.problem}"
        elapsed = time.monotonic() - self.case_started_at
        return f"{where}: {self.counts.short()} ({elapsed:.1f} s; run {self._run_clock()})"

    def confirming(self, n_subtests: int) -> None:
        self.confirm_total, self.confirm_done = n_subtests, 0
        if n_subtests:
            self._say(f"re-running {n_subtests} failing subtest(s) alone, each in a fresh worker")

    def confirmed(self, test_id: str, verdict: str) -> None:
        self.confirm_done += 1

    def close(self) -> None:
        self.current = None
        self._stop.set()

    def heartbeat(self) -> str | None:
        """The `still running` line, or None when nothing is running (between cases, after close)."""
        if self.current is not None:
            seconds = time.monotonic() - self.case_started_at
            so_far = self.counts.passed + self.counts.failed + self.counts.errors + self.counts.skipped
            return (
                f"{self.current}: still running, {so_far} subtest(s) done so far "
                f"({seconds:.0f} s; run {self._run_clock()})"
            )
        if self.confirm_total and self.confirm_done < self.confirm_total:
            return (
                f"{self.setting} re-running failing subtests alone: {self.confirm_done} of "
                f"{self.confirm_total} done (run {self._run_clock()})"
            )
        return None

    def _start_beat(self) -> None:
        self._stop.set()  # the previous run's thread, if any (bench hands one object to many runs)
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._beat_loop, args=(self._stop,), daemon=True)
        self._beat.start()

    def _beat_loop(self, stop: threading.Event) -> None:
        while not stop.wait(min(self.beat_s, 5.0)):
            if time.monotonic() - self.said_at >= self.beat_s:
                line = self.heartbeat()
                if line is not None:
                    self._say(line)

    def _run_clock(self) -> str:
        return clock(time.monotonic() - self.run_started_at)

    def _say(self, line: str) -> None:
        with self._lock:
            self.said_at = time.monotonic()
            print(line, file=self.stream, flush=True)


class BarProgress(LineProgress):
    """A tqdm bar over the case files with running totals; problems are printed above it."""

    def __init__(self, tqdm_class: Any, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self.tqdm_class = tqdm_class
        self.bar: Any = None
        self.totals = CaseCounts("total")
        self.drawn_at = 0.0

    def started(self, run_id: str, n_cases: int, repeats: int) -> None:
        self.n_cases, self.repeats = n_cases, repeats
        self._say(f"run {run_id}: {n_cases} case file(s) x {repeats} repeat(s)")
        self.bar = self._new_bar(n_cases * repeats, "case")

    def _new_bar(self, total: int, unit: str) -> Any:
        return self.tqdm_class(
            total=total, unit=unit, file=self.stream, dynamic_ncols=True, mininterval=BAR_REFRESH_S
        )

    def case_started(self, case: dict[str, Any], repeat: int) -> None:
        super().case_started(case, repeat)
        if self.bar is not None:
            label = case["case_id"] if len(case["case_id"]) <= 40 else "..." + case["case_id"][-37:]
            self.bar.set_description_str(label, refresh=False)

    def row(self, row: dict[str, Any]) -> None:
        super().row(row)
        self.totals.add(row)
        now = time.monotonic()
        if self.bar is not None and now - self.drawn_at >= BAR_REFRESH_S:
            self.drawn_at = now
            self.bar.set_postfix_str(self._totals(), refresh=True)

    def case_finished(self, case: dict[str, Any], repeat: int) -> None:
        if self.bar is None:
            return
        if self.problem is not None:
            self.bar.write(self.case_line(case, repeat), file=self.stream)
        self.bar.set_postfix_str(self._totals(), refresh=False)
        self.bar.update(1)

    def confirming(self, n_subtests: int) -> None:
        self._close_bar()
        if n_subtests:
            self._say(f"re-running {n_subtests} failing subtest(s) alone, each in a fresh worker")
            self.bar = self._new_bar(n_subtests, "subtest")

    def confirmed(self, test_id: str, verdict: str) -> None:
        if self.bar is not None:
            self.bar.update(1)
            if self.bar.n >= self.bar.total:
                self._close_bar()  # before the runner's own closing words

    def close(self) -> None:
        self._close_bar()

    def _close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def _totals(self) -> str:
        t = self.totals
        return f"passed {t.passed} failed {t.failed} errors {t.errors} skipped {t.skipped}"


def has_columns(stream: TextIO) -> bool:
    """Whether the stream is a terminal that reports a width: a terminal of zero columns (some
    IDE consoles, a bare `script` or container TTY) gets no bar drawn at all, so it gets lines."""
    try:
        return os.get_terminal_size(stream.fileno()).columns > 0
    except (OSError, ValueError, AttributeError):
        return False


def terminal_progress(stream: TextIO | None = None) -> RunProgress:
    """A bar when a person watches (stdout and the stream are terminals of some width, tqdm is
    installed), else one line per case file on the stream (stderr by default)."""
    stream = stream or sys.stderr
    if sys.stdout.isatty() and stream.isatty() and has_columns(stream):
        try:
            from tqdm import tqdm
        except ImportError:  # a bare accelerator machine: the core dependencies only
            return LineProgress(stream)
        return BarProgress(tqdm, stream)
    return LineProgress(stream)
