"""Progress of a run, driven by the rows the runner's supervisor already journals.

The runner calls an observer at each case file and each row; nothing here talks to the worker,
so the measured hot path is unchanged. On a terminal the observer draws a bar (tqdm, where the
pipeline extras installed it); in a log (stdout or stderr not a TTY) it writes one short line per
case file to stderr instead, so logs stay readable and a bare accelerator machine needs nothing.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from portability_data.runner.run_summary import CaseCounts, cannot_run, why_not_run

BAR_REFRESH_S = 0.5  # the bar's counts are redrawn at most this often while rows stream in


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
    """One short line per case file (and per confirmation phase) on a stream: for logs."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.n_cases = self.repeats = self.position = 0
        self.counts = CaseCounts("")
        self.case_started_at = 0.0
        self.problem: str | None = None

    def started(self, run_id: str, n_cases: int, repeats: int) -> None:
        self.n_cases, self.repeats, self.position = n_cases, repeats, 0  # one object serves many runs
        self._say(f"run {run_id}: {n_cases} case file(s) x {repeats} repeat(s)")

    def case_started(self, case: dict[str, Any], repeat: int) -> None:
        self.position += 1
        self.counts = CaseCounts(case["case_id"])
        self.case_started_at = time.monotonic()
        self.problem = None

    def row(self, row: dict[str, Any]) -> None:
        self.counts.add(row)
        if cannot_run(row) and self.problem is None:
            self.problem = why_not_run(row)

    def case_finished(self, case: dict[str, Any], repeat: int) -> None:
        self._say(self.case_line(case, repeat))

    def case_line(self, case: dict[str, Any], repeat: int) -> str:
        """`[  3/126] torch.argsort: 30 passed, 2 failed, 0 errors, 0 skipped (1.2 s)`."""
        total = self.n_cases * self.repeats
        where = f"[{self.position:>{len(str(total))}}/{total}] {case['case_id']}"
        if self.repeats > 1:
            where += f" (repeat {repeat + 1}/{self.repeats})"
        elapsed = time.monotonic() - self.case_started_at
        if self.problem is not None:
            return f"{where}: {self.problem}"
        return f"{where}: {self.counts.short()} ({elapsed:.1f} s)"

    def confirming(self, n_subtests: int) -> None:
        if n_subtests:
            self._say(f"re-running {n_subtests} failing subtest(s) alone, each in a fresh worker")

    def _say(self, line: str) -> None:
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


def terminal_progress(stream: TextIO | None = None) -> RunProgress:
    """A bar when a person watches (stdout and the stream are terminals, tqdm is installed),
    else one line per case file on the stream (stderr by default)."""
    stream = stream or sys.stderr
    if sys.stdout.isatty() and stream.isatty():
        try:
            from tqdm import tqdm
        except ImportError:  # a bare accelerator machine: the core dependencies only
            return LineProgress(stream)
        return BarProgress(tqdm, stream)
    return LineProgress(stream)
