"""`portability bench`: measure this machine. Runs the study's cases on every device this machine
has, under a profile of params.yaml (`bench.profiles`: quick = eager, 1 repeat; full = the run
stage's 3 repeats x both modes, and the census in both modes), and lands the shards under source
`local`.

The committed data (the study's shards and ours) stays the reference: a local run is its own
setting (aggregation keys settings on the source), so it is added beside them, never pooled into
them. A run is skipped when this host already has a complete local run of the same profile over
the same case files and harness, so a second `portability bench && dvc repro` does nothing.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from portability_data.pipeline.run_stage import cases_digest, existing_runs, setting_spec
from portability_data.runner.census_rows import manifest_paths
from portability_data.runner.provenance import cpu_model, harness_digest
from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run
from portability_data.tables.contracts import FRAMEWORKS

SOURCE = "local"

# Printed by a child interpreter per framework: the devices the framework can run on here. A child,
# so that importing three frameworks (and their device runtimes) never happens in one process.
_DETECT = {
    "torch": (
        "import torch\n"
        "found = ['cpu']\n"
        "if torch.cuda.is_available(): found.append('gpu')\n"
        "mps = getattr(torch.backends, 'mps', None)\n"
        "if mps is not None and mps.is_available(): found.append('mps')\n"
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
    """One run the bench plans: framework x device x mode, and whether this host has it already."""

    spec: RunSpec
    key: str
    done_run_id: str | None


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
    """Every framework x device x mode of the profile, each with its skip key and earlier run."""
    chosen = profile_of(params["bench"], profile)
    run_params = params["run"]
    for name in frameworks:
        if name not in FRAMEWORKS:
            raise BenchError(f"unknown framework {name!r}; use one of {', '.join(FRAMEWORKS)}")
    paths = Paths.under(repo_root)
    done = existing_runs(paths.runs_dir / SOURCE) if (paths.runs_dir / SOURCE).is_dir() else {}
    harness = harness_digest(paths.cases_dir)
    settings = []
    for suite in chosen.get("suites", ["curated"]):
        # the census runs under its own section (1 repeat, its limits); the curated set under the profile's
        section = params["census"] if suite == "census" else run_params
        repeats = int(section["repeats"]) if suite == "census" else chosen["repeats"]
        for framework in frameworks or tuple(run_params["frameworks"]):
            if suite == "census" and not manifest_paths(paths.cases_dir, framework):
                continue  # no census source for this framework yet
            digest = cases_digest(paths.repo_root, framework, suite) + harness + host_key()
            for device in (devices or {}).get(framework, ["cpu"]):
                for mode in chosen["modes"]:
                    spec = setting_spec(framework, device, mode, repeats, section, SOURCE, suite=suite)
                    key = spec.params_hash(digest)
                    found = done.get(key)
                    complete = found is not None and found["status"] == "complete"
                    settings.append(Setting(spec, key, found["run_id"] if complete else None))
    return settings


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
        spec = setting.spec
        if setting.done_run_id:
            say(f"{spec.framework}/{spec.device}/{spec.mode}: this machine has it already "
                f"({setting.done_run_id}); would be skipped")  # fmt: skip
        else:
            to_run.append(spec)
    return probe.dry_run(to_run, Paths.under(repo_root), say)


@dataclass
class BenchReport:
    """What a bench did: the runs that cover this machine, and which of them ran now."""

    covering: list[str]
    ran_now: list[str]
    not_run: list[str]  # run ids in which some case file could not run at all (not the framework's)


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
    report = BenchReport([], [], [])
    paths = Paths.under(repo_root)
    for setting in settings:
        spec = setting.spec
        label = f"{spec.framework}/{spec.device}/{spec.mode}" + (" census" if spec.suite == "census" else "")
        if setting.done_run_id:
            say(f"{label}: this machine has it already ({setting.done_run_id})")
            report.covering.append(setting.done_run_id)
            continue
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
        if summary.not_run:
            report.not_run.append(run_id)
    return report
