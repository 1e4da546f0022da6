"""A re-run spot check where CI can (issue 55): the digest chain proves a shard is what the runner
wrote, not that the runner ran honestly on the hardware named. For a submitted run on the one device
CI has (cpu), a seeded sample of its subtests is re-run here with the project's own runner, into a
scratch folder (never data/), and each one's outcome (and a failure's category) is compared with the
submitted rows.

Outcomes may legitimately differ across CPU models and framework versions, so a disagreement is a
warning with the evidence, and a run is compared only where the installed framework version is the
run's own (otherwise it is skipped, saying why). One rule refuses: more than half of the compared
sample disagreeing. On the same framework version and device type, a correct run agrees on nearly
every subtest (a CPU's own numerics move a tolerance-edge subtest or two, never most of them);
a majority that disagrees is a submission that does not describe what this code does, which a
reviewer must look at before merging, whatever the machine.
"""

from __future__ import annotations

import importlib.metadata
import random
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from portability_data.dataset.submission.files import SubmissionError
from portability_data.runner.spec import RunError

DEFAULT_SAMPLE = 8
CI_DEVICES = ("cpu",)  # the devices CI's machine has: a run on any other is not re-run


@dataclass(frozen=True)
class Disagreement:
    """A sampled subtest whose re-run outcome is not the submitted one (in one repeat)."""

    run_id: str
    case_id: str
    subtest: str
    repeat: int
    submitted: str
    rerun: str

    def render(self) -> str:
        return (
            f"WARNING: {self.run_id}: case {self.case_id} subtest {self.subtest} repeat {self.repeat}: "
            f"submitted {self.submitted}, "
            f"re-run here {self.rerun} [spot-check]; a reviewer compares the run's machine and this one"
        )


@dataclass
class SpotReport:
    """What the spot check did with each run: lines to print, warnings (the disagreements' and a
    sample that could not run), runs refused."""

    lines: list[str] = field(default_factory=list)
    disagreements: list[Disagreement] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def outcome_of(row: dict[str, Any]) -> str:
    """The outcome as compared: a failure with its category (a failure of another kind disagrees)."""
    category = row.get("failure_category")
    return f"{row['outcome']} ({category})" if category else str(row["outcome"])


def sample_subtests(rows: list[dict[str, Any]], run_id: str, n: int, seed: int) -> list[str]:
    """N test ids of the run, the same for the same seed and run id on every machine (CI's and the
    contributor's), so that a reviewer can re-run exactly CI's sample."""
    test_ids = sorted({str(r["test_id"]) for r in rows})
    return sorted(random.Random(f"{seed}:{run_id}").sample(test_ids, min(n, len(test_ids))))


def installed_version(framework: str) -> str | None:
    """The framework's installed version here, read without importing it (None: not installed)."""
    for dist in (framework, f"{framework}-cpu"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def shard_of(runs_row: Path) -> Path:
    """The shard beside a runs row: .../runs/<source>/<id>.parquet -> .../results/<source>/<id>.parquet
    (the layout of data/ and of a submission folder)."""
    parts = list(runs_row.parts)
    if len(parts) < 3 or parts[-3] != "runs":
        raise SubmissionError(
            f"{runs_row}: not a runs row (expected .../runs/<source>/<run id>.parquet); give the runs rows "
            "of data/runs/ or of a submission folder"
        )
    parts[-3] = "results"
    return Path(*parts)


def runs_rows(paths: Sequence[Path]) -> list[Path]:
    """The runs rows among the paths (a folder: every runs row under it; shards are found from them)."""
    found: list[Path] = []
    for path in paths:
        if not path.exists():
            raise SubmissionError(f"{path}: no such file; give runs rows or a submission folder")
        if path.is_dir():
            found += sorted(path.glob("**/runs/*/*.parquet"))
        elif path.parts[-3:-2] == ("runs",):
            found.append(path)
    return found


Rerun = Callable[[dict[str, Any], list[str], Path], list[dict[str, Any]]]


def rerun_cases(run: dict[str, Any], case_ids: list[str], repo_root: Path) -> list[dict[str, Any]]:
    """Re-run the named cases of the run's setting once, on this machine's cpu, with the cases and
    harness of `repo_root`, writing the journal, shard and runs row into a scratch folder. The runner
    selects whole cases (a curated case is one test file): the sampled subtests' cases are run whole
    and only the sampled subtests are compared."""
    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.supervisor import run as run_cases
    from portability_data.runner.supervisor import shard_path

    mode = str(run["mode"])
    spec = RunSpec(
        framework=str(run["framework"]),
        device=str(run["device"]),
        mode=mode,
        repeats=1,
        timeout_s=float(run["timeout_s"]),
        cases=tuple(sorted(case_ids)),
        source="local",
        suite="census" if "-census-" in str(run["run_id"]) else "curated",
        compiler=None if mode == "eager" else run.get("compiler"),
    )
    with tempfile.TemporaryDirectory(prefix="portability-spot-check-") as scratch_name:
        scratch = Path(scratch_name)
        root = Path(repo_root).resolve()
        paths = Paths(root, root / "cases", scratch / "results", scratch / "runs", scratch / "journal")
        run_id = run_cases(spec, paths, log=lambda message: None)
        return pq.read_table(shard_path(paths, run_id, spec.source)).to_pylist()


def spot_check(
    paths: Sequence[Path],
    repo_root: Path,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 0,
    rerun: Rerun | None = None,
) -> SpotReport:
    """Spot-check every runs row among `paths` (see the module's docstring for what and why)."""
    if sample < 1:
        raise SubmissionError(f"--sample must be >= 1, got {sample}")
    report = SpotReport()
    rerun = rerun or rerun_cases  # looked up at call time: a test may stand in for the runner
    for runs_path in runs_rows(paths):
        for run in pq.read_table(runs_path).to_pylist():
            _check_run(run, runs_path, repo_root, sample, seed, rerun, report)
    if not report.lines:
        report.lines.append("no runs rows given: nothing to spot-check")
    return report


def _check_run(
    run: dict[str, Any],
    runs_path: Path,
    repo_root: Path,
    sample: int,
    seed: int,
    rerun: Rerun,
    report: SpotReport,
) -> None:
    run_id, device, framework = str(run["run_id"]), str(run["device"]), str(run["framework"])
    if device not in CI_DEVICES:
        report.lines.append(
            f"{run_id}: skipped, device {device}: CI cannot re-run it (CI has {', '.join(CI_DEVICES)})"
        )
        return
    here = installed_version(framework)
    if here is None:
        report.lines.append(f"{run_id}: skipped, {framework} is not installed here")
        return
    if here != run["framework_version"]:
        report.lines.append(
            f"{run_id}: skipped, {framework} {run['framework_version']} was run and {here} is installed "
            "here: outcomes may differ across versions, so they are not compared"
        )
        return
    shard = shard_of(runs_path)
    if not shard.is_file():
        raise SubmissionError(
            f"{runs_path}: run {run_id} has no shard {shard}; add the shard to the submission"
        )
    rows = [r for r in pq.read_table(shard).to_pylist() if r["run_id"] == run_id]
    if not rows:
        report.lines.append(f"{run_id}: skipped, shard {shard} holds no row of it")
        return
    chosen = sample_subtests(rows, run_id, sample, seed)
    sampled = [r for r in rows if r["test_id"] in set(chosen)]
    try:
        rerun_rows = rerun(run, sorted({str(r["case_id"]) for r in sampled}), repo_root)
    except RunError as exc:  # a case gone since the run, a compiler absent here: said, not hidden
        report.warnings.append(f"WARNING: {run_id}: the sample could not be re-run here [spot-check]: {exc}")
        report.lines.append(f"{run_id}: not compared, the runner refused the re-run (see the warning)")
        return
    again = {r["test_id"]: r for r in rerun_rows}
    missing = sorted(t for t in chosen if t not in again)
    disagreeing: set[str] = set()
    for row in sorted(sampled, key=lambda r: (r["test_id"], r["repeat"])):
        found = again.get(row["test_id"])
        if found is not None and outcome_of(found) != outcome_of(row):
            disagreeing.add(row["test_id"])
            case_id, subtest, repeat = str(row["case_id"]), str(row["subtest"]), int(row["repeat"])
            found_one = Disagreement(run_id, case_id, subtest, repeat, outcome_of(row), outcome_of(found))
            report.disagreements.append(found_one)
            report.warnings.append(found_one.render())
    for test_id in missing:
        report.warnings.append(
            f"WARNING: {run_id}: sampled subtest {test_id} did not run here [spot-check]; is its case "
            "renamed since the run?"
        )
    compared = len(chosen) - len(missing)
    summary = (
        f"{run_id}: {compared} of {len(chosen)} sampled subtest(s) re-run on cpu "
        f"({framework} {here}, seed {seed}), "
        f"{compared - len(disagreeing)} agree, {len(disagreeing)} disagree"
    )
    report.lines.append(summary)
    if compared and len(disagreeing) * 2 > compared:
        report.refused.append(
            f"{runs_path}: run {run_id}: {len(disagreeing)} of {compared} re-run subtests disagree "
            "with the shard [spot-check]; re-run the run on unmodified code (`portability run`) and "
            "submit that run"
        )
