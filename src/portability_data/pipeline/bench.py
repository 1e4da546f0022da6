"""`portability bench`: measure this machine. Runs the study's cases on every device this machine
has, under a profile of params.yaml (`bench.profiles`: quick = eager, 1 repeat; full = the run
stage's 3 repeats x both modes, and the census in both modes), and lands the shards under source
`local`.

The committed data (the study's shards and ours) stays the reference: a local run is its own
setting (aggregation keys settings on the source), so it is added beside them, never pooled into
them. Like the run stage, the bench measures only what this host lacks: a setting is skipped when
this host has a complete local run of the same profile over the same case files and harness (so a
second `portability bench && dvc repro` does nothing), and after a `git pull` that adds or edits
cases only those run (run_stage.missing_cases, with this host in the key: another machine's runs
never count), as one run of those cases beside the earlier ones.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portability_data.pipeline.run_stage import (
    cases_digest,
    existing_runs,
    finished_runs,
    missing_cases,
    setting_spec,
    subset_key,
    todays_harness,
)
from portability_data.runner.census_rows import manifest_paths
from portability_data.runner.provenance import cpu_model
from portability_data.runner.spec import LOCAL_SOURCE, Paths, RunSpec
from portability_data.runner.supervisor import run
from portability_data.tables.contracts import FRAMEWORKS

SOURCE = LOCAL_SOURCE

# Printed by a child interpreter per framework: the devices the framework can run on here. A child,
# so that importing three frameworks (and their device runtimes) never happens in one process.
_DETECT = {
    "torch": (
        "import torch\n"
        "found = ['cpu']\n"
        "if torch.cuda.is_available(): found.append('gpu')\n"
        "mps = getattr(torch.backends, 'mps', None)\n"
        "if mps is not None and mps.is_available(): found.append('mps')\n"
        # torch_xla (its own environment, the xla extra): its PJRT device, a TPU or another (xla)
        "try:\n"
        "    import torch_xla.runtime as xr\n"
        "    kind = xr.device_type()\n"
        "    if kind: found.append('tpu' if kind == 'TPU' else 'xla')\n"
        "except ImportError:\n"
        "    pass\n"
    ),
    "tensorflow": (
        "import tensorflow as tf\n"
        "found = ['cpu']\n"
        "if tf.config.list_physical_devices('GPU'): found.append('gpu')\n"
        "if tf.config.list_physical_devices('TPU'): found.append('tpu')\n"
    ),
    "jax": (
        "import jax\n"
        "found = ['cpu']\n"
        "for backend in ('gpu', 'tpu'):\n"
        "    try:\n"
        "        if jax.devices(backend): found.append(backend)\n"
        "    except RuntimeError:\n"
        "        pass\n"
    ),
}


class BenchError(RuntimeError):
    """The bench cannot start (unknown profile or framework); the message says what to fix."""


@dataclass(frozen=True)
class Setting:
    """One run the bench plans: framework x device x mode (`spec`: its whole suite, or only the
    cases this host lacks), and the local runs that already measured the rest. `done_run_id`: the
    newest of those when nothing is left to run, else None."""

    spec: RunSpec
    key: str
    done_run_id: str | None
    covering: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        suite = " census" if self.spec.suite == "census" else ""
        return f"{self.spec.framework}/{self.spec.device}/{self.spec.mode}{suite}"


def detect_devices(framework: str, python: str = sys.executable) -> tuple[list[str], str | None]:
    """(devices, problem): the devices the framework reaches here; problem says why none if it
    cannot even be imported (a framework that is not installed is skipped, not fatal)."""
    code = _DETECT[framework] + "import json; print(json.dumps(found))\n"
    try:
        found = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [], f"{framework} could not be asked for its devices ({exc})"
    if found.returncode != 0:
        last = (found.stderr.strip().splitlines() or ["no output"])[-1]
        return [], f"{framework} does not import here ({last})"
    return json.loads(found.stdout.strip().splitlines()[-1]), None


def host_key() -> str:
    """What makes a run this machine's: its name, CPU model and architecture."""
    return f"{platform.node()}|{cpu_model()}|{platform.machine()}"


def profile_of(bench_params: dict[str, Any], name: str) -> dict[str, Any]:
    profiles = bench_params["profiles"]
    if name not in profiles:
        raise BenchError(f"unknown profile {name!r}; params.yaml bench.profiles has {', '.join(profiles)}")
    return profiles[name]


def plan(
    params: dict[str, Any],
    repo_root: Path,
    profile: str,
    frameworks: tuple[str, ...] = (),
    devices: dict[str, list[str]] | None = None,
) -> list[Setting]:
    """Every framework x device x mode of the profile: up to date (a complete local run of the whole
    suite, or proven local runs that measured every current case as it is now), or the cases to
    run (all of them when no earlier local run of this host can be credited)."""
    chosen = profile_of(params["bench"], profile)
    run_params = params["run"]
    for name in frameworks:
        if name not in FRAMEWORKS:
            raise BenchError(f"unknown framework {name!r}; use one of {', '.join(FRAMEWORKS)}")
    paths = Paths.under(repo_root)
    rows = finished_runs(paths.runs_dir / SOURCE) if (paths.runs_dir / SOURCE).is_dir() else []
    done = existing_runs(paths.runs_dir / SOURCE, rows)
    host = host_key()
    settings = []
    for suite in chosen.get("suites", ["curated"]):
        # the census runs under its own section (1 repeat, its limits); the curated set under the profile's
        section = params["census"] if suite == "census" else run_params
        repeats = int(section["repeats"]) if suite == "census" else chosen["repeats"]
        for framework in frameworks or tuple(run_params["frameworks"]):
            if suite == "census" and not manifest_paths(paths.cases_dir, framework):
                continue  # no census source for this framework yet
            suite_digest = cases_digest(paths.repo_root, framework, suite)
            for device in (devices or {}).get(framework, ["cpu"]):
                harness = todays_harness(paths.cases_dir, device)
                for mode in chosen["modes"]:
                    spec = setting_spec(framework, device, mode, repeats, section, SOURCE, suite=suite)
                    keys = [spec.params_hash(suite_digest + h + host) for h in harness]
                    key = next((k for k in keys if done.get(k, {}).get("status") == "complete"), keys[0])
                    settings.append(_planned(spec, key, done, rows, paths, harness, host))
    return settings


def _planned(
    spec: RunSpec,
    key: str,
    done: dict[str, dict[str, Any]],
    rows: list[dict[str, Any]],
    paths: Paths,
    harness: tuple[str, ...],
    host: str,
) -> Setting:
    """One setting's plan: skipped, the cases this host lacks, or the whole suite."""
    found = done.get(key)
    if found is not None and found["status"] == "complete":
        return Setting(spec, key, found["run_id"], (found["run_id"],))
    missing, supplying = missing_cases(spec, paths, harness, rows, host)
    if not supplying:
        return Setting(spec, key, None)
    if not missing:
        return Setting(spec, key, supplying[-1], tuple(supplying))
    subset, subset_hash = subset_key(spec, missing, harness[0], host)
    return Setting(subset, subset_hash, None, tuple(supplying))


def detect_and_plan(
    params: dict[str, Any],
    repo_root: Path,
    profile: str,
    frameworks: tuple[str, ...] = (),
    say: Any = print,
) -> list[Setting]:
    """What `bench` would run: the devices each framework finds here (a framework that does not
    import is skipped, and said so), then `plan` over them. Runs nothing."""
    profile_of(params["bench"], profile)  # an unknown profile fails before any import
    wanted = frameworks or tuple(params["run"]["frameworks"])
    devices: dict[str, list[str]] = {}
    for framework in wanted:
        found, problem = detect_devices(framework)
        if problem:
            say(f"{framework}: skipped: {problem}")
            continue
        devices[framework] = found
        say(f"{framework}: devices found: {', '.join(found)}")
    return plan(params, repo_root, profile, tuple(devices), devices)


def dry_run(
    params: dict[str, Any],
    repo_root: Path,
    profile: str = "quick",
    frameworks: tuple[str, ...] = (),
    say: Any = print,
) -> bool:
    """`bench --dry-run`: the plan of `bench`, each run it would start probed by one real worker
    (`runner.probe`), measured and written nothing. True when every planned run can start."""
    from portability_data.runner import probe

    settings = detect_and_plan(params, repo_root, profile, frameworks, say)
    to_run = []
    for setting in settings:
        if setting.done_run_id:
            covered = ", ".join(setting.covering)
            say(f"{setting.label}: this machine has it already ({covered}); would be skipped")
        else:
            if setting.spec.cases:
                say(f"{setting.label}: would run {len(setting.spec.cases)} new or changed case(s) only")
            to_run.append(setting.spec)
    return probe.dry_run(to_run, Paths.under(repo_root), say)


@dataclass
class BenchReport:
    """What a bench did: the runs that cover this machine, and which of them ran now."""

    covering: list[str]
    ran_now: list[str]
    not_run: list[str]  # run ids in which some case file could not run at all (not the framework's)
    measured: list[Measured] = field(default_factory=list)  # per setting, in the order planned
    profile: str = "quick"


@dataclass(frozen=True)
class Measured:
    """One setting of the bench as it ended: how many case files its runs measured, and which runs
    (ran now, or found from an earlier bench)."""

    label: str
    repeats: int
    cases: int
    run_ids: tuple[str, ...]
    ran_now: bool


REPORT_FILES = ("reports/report.md", "reports/report.html")  # the report stage's outs (dvc.yaml)


def closing_lines(report: BenchReport, repo_root: Path) -> list[str]:
    """The bench's last words: what was measured here, per framework x mode, where the shards are,
    and the next step (`dvc repro`) with the report it builds, so a newcomer knows where to look."""
    local = Paths.under(repo_root).results_dir / SOURCE
    where = local.relative_to(repo_root) if local.is_relative_to(repo_root) else local
    now = sum(1 for m in report.measured if m.ran_now)
    lines = [
        f"bench done (profile {report.profile}): {len(report.measured)} setting(s) of this machine, "
        f"{now} measured now, {len(report.measured) - now} already measured by an earlier bench"
    ]
    for m in report.measured:
        how = "measured now" if m.ran_now else "measured earlier"
        lines.append(
            f"  {m.label}: {m.cases} case file(s) x {m.repeats} repeat(s), {how}: {', '.join(m.run_ids)}"
        )
    lines.append(f"shards: {where}/ (source local: this machine's, never pooled with the project's)")
    lines.append(
        f"next: `dvc repro` sets them beside the study's and ours and builds the report: "
        f"{REPORT_FILES[0]} (and {REPORT_FILES[1]}, offline)"
    )
    return lines


def _cases_in(paths: Paths, run_ids: tuple[str, ...]) -> int:
    """How many distinct case files the runs' shards hold together."""
    import pyarrow.parquet as pq

    from portability_data.runner.supervisor import shard_path

    cases: set[str] = set()
    for run_id in run_ids:
        shard = shard_path(paths, run_id, SOURCE)
        if shard.is_file():
            cases.update(pq.read_table(shard, columns=["case_id"]).column("case_id").to_pylist())
    return len(cases)


def bench(
    params: dict[str, Any],
    repo_root: Path,
    profile: str = "quick",
    frameworks: tuple[str, ...] = (),
    say: Any = print,
    progress: Any = None,
) -> BenchReport:
    """Run what this host lacks for the profile, each run with its progress and summary table."""
    from portability_data.runner.run_summary import RunSummary
    from portability_data.runner.supervisor import shard_path

    settings = detect_and_plan(params, repo_root, profile, frameworks, say)
    report = BenchReport([], [], [], profile=profile)
    paths = Paths.under(repo_root)
    for setting in settings:
        spec, label = setting.spec, setting.label
        report.covering.extend(r for r in setting.covering if r not in report.covering)
        if setting.done_run_id:
            say(f"{label}: this machine has it already ({', '.join(setting.covering)})")
            runs = setting.covering
            report.measured.append(Measured(label, spec.repeats, _cases_in(paths, runs), runs, False))
            continue
        if spec.cases:
            say(
                f"{label}: running {len(spec.cases)} new or changed case(s) ({spec.repeats} repeat(s)); "
                f"the others are measured by {', '.join(setting.covering)}"
            )
        else:
            say(f"{label}: running ({spec.repeats} repeat(s))")
        census = spec.suite == "census"
        confirm_jobs = int(params["census"].get("confirm_jobs", 1)) if census else 1
        jobs = int(params["census"].get("jobs", 1)) if census else 1
        run_id = run(
            spec, paths, params_hash=setting.key, progress=progress, confirm_jobs=confirm_jobs, jobs=jobs
        )
        summary = RunSummary.of_shard(run_id, shard_path(paths, run_id, SOURCE))
        say("\n".join(summary.report()))
        report.covering.append(run_id)
        report.ran_now.append(run_id)
        runs = (*setting.covering, run_id)
        report.measured.append(Measured(label, spec.repeats, _cases_in(paths, runs), runs, True))
        if summary.not_run:
            report.not_run.append(run_id)
    return report
