"""Shared fixtures: an offline Hub, the repository root, and throwaway case repositories."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import pandas as pd

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE_DIR = REPO_ROOT.parent / "shared" / "reference" / "mince2023"


# The README's test command runs the suite on every core, a worker each (pytest-xdist `-n auto`), each
# test file whole in one worker (`--dist loadfile`: a module's fixtures are made once), at most this
# many: each worker imports the frameworks and starts runs of its own (a few GB of memory at its peak).
MOST_TEST_WORKERS = 4
MEMORY_PER_TEST_WORKER_GB = 5


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per core this process may use, as memory allows, at most MOST_TEST_WORKERS."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    by_memory = MOST_TEST_WORKERS  # where /proc/meminfo is not there to say
    with contextlib.suppress(OSError, StopIteration, ValueError):
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        available_kb = int(next(line for line in meminfo if line.startswith("MemAvailable:")).split()[1])
        by_memory = int(available_kb / 2**20 // MEMORY_PER_TEST_WORKER_GB)
    return max(1, min(cores, by_memory, MOST_TEST_WORKERS))


def pytest_configure(config: pytest.Config) -> None:
    from tests import beside

    if not hasattr(config, "workerinput"):  # the controller, before any worker starts
        bytecode_once(sys.flags.dont_write_bytecode, REPO_ROOT)
    beside.configure(config)


def bytecode_once(dont_write: bool, root: Path) -> None:
    """Where PYTHONDONTWRITEBYTECODE is set (this project's CI and build machines set it), no process
    writes the bytecode of what it imports, so each of the suite's runs, workers and commands
    compiled our modules from source again (issue 57: ~0.2 s of CPU for what a pipeline command
    imports). compileall writes it regardless: once here, then every process reads it (Python checks
    each file against its source's mtime and size, so an edit is compiled again)."""
    if not dont_write:
        return
    import compileall

    for folder in ("src", "tests"):
        compileall.compile_dir(root / folder, quiet=2)


def pytest_unconfigure(config: pytest.Config) -> None:
    from tests import beside

    beside.unconfigure(config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test unit, e2e or env from what it reaches (tests/tiers.py), so that
    `pytest -m unit` is the quick tier and no hand-written mark can drift from the code."""
    from tests.tiers import COLLECTED, TIERS, Reach, reached_by, tier_of

    reach = Reach()
    collected = config.stash.setdefault(COLLECTED, {})
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        asked = {mark.name for mark in item.iter_markers() if mark.name in TIERS}
        if "unit" in asked:
            raise pytest.UsageError(f"{item.nodeid}: the unit tier is read from the code, not marked by hand")
        defs = item._fixtureinfo.name2fixturedefs
        fixtures = [defs[name][-1].func for name in item.fixturenames if defs.get(name)]
        tier = max([tier_of(reached_by(reach, item.function, fixtures)), *asked], key=TIERS.index)
        item.add_marker(tier)
        collected[item.nodeid] = tier


def pytest_collection_finish(session: pytest.Session) -> None:
    """The jobs a selected test waits for start beside the suite (tests/beside.py)."""
    from tests import beside

    if not session.config.option.collectonly:
        beside.arrange(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    from tests import beside

    beside.stop()


@pytest.fixture(autouse=True)
def _unit_tier_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    """A unit test that starts a process or imports a framework anyway fails, naming what it did."""
    from tests.tiers import unit_guard

    if request.node.get_closest_marker("unit") is None:
        yield
        return
    with unit_guard(request.node.nodeid):
        yield


@pytest.fixture(scope="module")
def chromium() -> str:
    """The browser tests' Chromium, once per module: skipped only where none is found and none is
    required (tests/browser.py)."""
    from tests.browser import browser

    return browser()


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session", autouse=True)
def session_compile_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runs a test session makes keep their compile caches (runner/compile_cache.py) in one
    session folder: never the contributor's ~/.cache, shared by the session's JAX runs."""
    folder = tmp_path_factory.mktemp("compile-cache")
    os.environ["PORTABILITY_COMPILE_CACHE"] = str(folder)
    return folder


def command(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a command with the venv's scripts first on the PATH, DVC's analytics off and a git
    identity; its exit status and output, whatever they are."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "DVC_NO_ANALYTICS": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=900)


def sh(args: list[str], cwd: Path) -> str:
    """Run a command (as `command` does) that must succeed; its stdout and stderr together."""
    out = command(args, cwd)
    assert out.returncode == 0, f"{' '.join(args)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout + out.stderr


def local_shards(root: Path = REPO_ROOT) -> list[str]:
    """Shards under data/results/ and data/runs/ that git does not track: this machine's own runs
    (`portability bench`, the README's first command). Tests build their data without them."""
    untracked = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "-z", "--", "data/results", "data/runs"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    return sorted(filter(None, untracked.decode().split("\0")))


def pipeline_outputs(root: Path = REPO_ROOT) -> list[str]:
    """dvc.lock and every output it records: what `dvc repro` rewrites from the shards it finds."""
    import yaml

    lock = yaml.safe_load((root / "dvc.lock").read_text())
    outs = {out["path"] for stage in lock["stages"].values() for out in stage.get("outs", [])}
    return sorted(outs | {"dvc.lock"})


def committed_paths(root: Path = REPO_ROOT) -> list[str]:
    """The files git tracks (the working tree's extra shards are not among them)."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    return sorted(filter(None, tracked.decode().split("\0")))


def copy_repository(target: Path) -> Path:
    """The repository's committed files in a fresh git repository at `target`, committed: a clone
    to run the real pipeline in. Tracked files come as the working tree has them (so uncommitted
    code and its `dvc repro` are what is tested), never an untracked shard; where the working tree
    holds local shards (`portability bench && dvc repro`, the README's first command), its pipeline
    outputs and dvc.lock were rebuilt from them, so those come from HEAD instead: otherwise the
    copy's dvc.lock names shards the copy lacks and `dvc status` calls data/results modified."""
    import io
    import tarfile

    from_head: list[str] = pipeline_outputs() if local_shards() else []

    def rebuilt(name: str) -> bool:
        return any(name == out or name.startswith(out.rstrip("/") + "/") for out in from_head)

    for name in committed_paths():
        source = REPO_ROOT / name
        if source.is_file() and not rebuilt(name):
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    if from_head:
        archive = subprocess.run(
            ["git", "archive", "--format=tar", "HEAD", "--", *from_head],
            cwd=REPO_ROOT,
            capture_output=True,
            check=True,
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
    sh(["git", "init", "-q"], target)
    sh(["git", "add", "-A"], target)
    sh(["git", "commit", "-qm", "copy"], target)
    _check_lock_is_current(target)
    return target


class StaleLock(AssertionError):
    """dvc.lock does not match the code and data it records: every pipeline test would re-run stages
    (a whole measurement, minutes each) and then fail, so they fail at once, saying why."""


_stale_lock: list[str] | None = None  # the stale stages found by the session's first copy


def stale_stages(root: Path) -> list[str]:
    """The stages of the DVC repository at `root` whose recorded dependencies or outputs changed."""
    import json

    out = command(["dvc", "status", "--json"], root)
    assert out.returncode == 0, f"dvc status failed in {root}:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    return sorted(json.loads(out.stdout or "{}"))


def _check_lock_is_current(copy: Path) -> None:
    """Fail fast where the copied checkout's dvc.lock is stale (checked once a session: later copies
    are of the same files). A commit that changes a stage's dependency without `dvc repro` leaves it so."""
    global _stale_lock
    if _stale_lock is None:
        _stale_lock = stale_stages(copy)
    if _stale_lock:
        raise StaleLock(
            f"dvc.lock is stale: stage(s) {', '.join(_stale_lock)} have changed dependencies (`dvc status` "
            "names them). Run `dvc repro` in the checkout; commit dvc.lock and its outputs with the change."
        )


class CaseRepo:
    """A minimal repository with cases/ (and the real harness conftest) for runner tests, and the
    study's committed sample (data/samples/mince2023.parquet, which no stage writes): the samples
    table `portability case check` checks the rows' `samples` against."""

    def __init__(self, root: Path) -> None:
        from portability_data.tables.locations import table_path

        self.root = root
        (root / "cases").mkdir(parents=True)
        shutil.copy(REPO_ROOT / "cases" / "conftest.py", root / "cases" / "conftest.py")
        study = table_path("samples", "mince2023")
        (root / study).parent.mkdir(parents=True)
        shutil.copy(REPO_ROOT / study, root / study)

    def add(self, framework: str, slug: str, test_source: str, function: str | None = None) -> str:
        folder = self.root / "cases" / framework
        folder.mkdir(exist_ok=True)
        function = function or f"{framework}.{slug}"
        (folder / f"test_{slug}.py").write_text(textwrap.dedent(test_source))
        (folder / f"{slug}.yaml").write_text(
            textwrap.dedent(f"""\
            schema_version: 1
            case_id: {function}
            framework: {framework}
            function: {function}
            test_file: cases/{framework}/test_{slug}.py
            upstream_test: null
            samples: []
            status: active
            notes: made by a test
            """)
        )
        return function


def journaled_rows(journal_dir: Path) -> int:
    """Rows a running run has journaled so far (its first journal in `journal_dir`; 0 before it
    exists): what the tests that kill a run mid-way wait on."""
    journals = list(journal_dir.glob("*.jsonl"))
    return sum(1 for line in journals[0].read_text().splitlines() if '"row"' in line) if journals else 0


@pytest.fixture
def case_repo(tmp_path: Path) -> CaseRepo:
    return CaseRepo(tmp_path / "repo")


def example_rows() -> dict[str, list[dict]]:
    """One valid row per table (two for results), for tests that need a whole dataset folder."""
    import datetime as dt

    from portability_data.tables.contracts import TABLES

    result = {
        "run_id": "torch-cpu-eager-1",
        "source": "portability",
        "case_id": "torch.argsort",
        "framework": "torch",
        "function": "torch.argsort",
        "test_id": "cases/torch/test_argsort.py::test_a[f32]",
        "subtest": "test_a[f32]",
        "repeat": 0,
        "outcome": "passed",
        "failure_category": None,
        "failure_rule": None,
        "error_type": None,
        "error_message": None,
        "op_latencies_ms": [0.5],
        "test_time_ms": 2.0,
        "device": "cpu",
        "device_model": "AMD EPYC",
        "mode": "eager",
        "framework_version": "2.13.0",
    }
    published = {
        "source": "mince2023-published",
        "value_id": "/per_function_latency/rows/0/gpu_ms",
        "published_table": "per_function_latency",
        "location": "appendix Tables 5-7",
        "framework": "torch",
        "device": "gpu",
        "device_model": "T4",
        "reference_device": "tpu",
        "reference_device_model": "TPU v3-8",
        "printed_name": "torch.argsort",
        "quantity": "latency_ms",
        "relation": "equals",
        "value_text": "0.157",
        "value": 0.157,
        "decimals": 3,
        "unit": "ms",
        "context": "mean latency in ms, rounded to 3 decimals",
    }
    return {
        "api": [
            {
                "framework": "torch",
                "framework_version": "2.13.0",
                "qualified_name": "torch.argsort",
                "module": "torch",
                "name": "argsort",
                "kind": "builtin",
            }
        ],
        "frequencies": [
            {
                "framework": "torch",
                "corpus": "fixture",
                "qualified_name": "torch.argsort",
                "calls": 3,
                "bare_calls": 4,
                "files": 2,
                "resolution": "resolved",
            }
        ],
        "samples": [
            {
                "sample_id": "mince2023",
                "framework": "torch",
                "function": "torch.argsort",
                "study_name": None,
                "bucket": "top20",
                "frequency": 10,
                "draw_order": 0,
                "status": "kept",
                "replaced_by": None,
                "reason": None,
                "seed": None,
            }
        ],
        "cases": [
            {
                "case_id": "torch.argsort",
                "framework": "torch",
                "function": "torch.argsort",
                "study_name": None,
                "test_file": "cases/torch/test_argsort.py",
                "upstream_test": None,
                "samples": ["mince2023"],
                "status": "active",
                "removed_since": None,
                "notes": "n",
                "schema_version": 1,
            }
        ],
        "results": [
            result,
            {
                **result,
                "test_id": result["test_id"].replace("f32", "f16"),
                "subtest": "test_a[f16]",
                "outcome": "failed",
                "failure_category": "type_failure",
                "failure_rule": "r",
                "error_type": "RuntimeError",
                "error_message": "no kernel",
                "op_latencies_ms": [],
            },
        ],
        "runs": [
            {
                "run_id": "torch-cpu-eager-1",
                "source": "portability",
                "framework": "torch",
                "framework_version": "2.13.0",
                "device": "cpu",
                "device_model": "AMD EPYC",
                "mode": "eager",
                "repeats": 1,
                "timeout_s": 900.0,
                "host": "h",
                "os": "Linux",
                "python": "3.11",
                "cpu_model": "AMD EPYC",
                "accelerator": None,
                "driver": None,
                "packages": "{}",
                "git_commit": None,
                "params_hash": "abc",
                "timer_floor_ms": 0.0001,
                "started_at": dt.datetime(2026, 11, 23, tzinfo=dt.UTC),
                "finished_at": dt.datetime(2026, 11, 23, 0, 1, tzinfo=dt.UTC),
                "status": "complete",
                "n_results": 2,
            }
        ],
        "outcomes": [
            {
                "source": "portability",
                "framework": "torch",
                "framework_version": "2.13.0",
                "function": "torch.argsort",
                "device": "cpu",
                "device_model": "AMD EPYC",
                "mode": "eager",
                "outcome": "partial_failure",
                "n_subtests": 2,
                "n_passed": 1,
                "n_failed": 1,
                "n_skipped": 0,
                "dominant_failure_category": "type_failure",
            }
        ],
        "latencies": [
            {
                "source": "portability",
                "framework": "torch",
                "framework_version": "2.13.0",
                "function": "torch.argsort",
                "mode": "eager",
                "device": "cpu",
                "device_model": "AMD EPYC",
                "reference_device": None,
                "reference_device_model": None,
                "n_subtests": 1,
                "latency_ms": 0.5,
                "median_ms": 0.5,
                "spread": 0.0,
                "reference_latency_ms": None,
                "ratio": None,
            }
        ],
        "pooled": [
            {
                **{
                    name: result.get(name)
                    for name in TABLES["pooled"].names
                    if name in TABLES["results"].names
                },
                "failure_reread": False,
                "superseded_reason": None,
                "superseded_by": None,
            }
        ],
        "published": [published],
        "reproduction": [
            {
                "value_id": published["value_id"],
                "source": "mince2023",
                **{k: published[k] for k in ("published_table", "location", "framework", "device")},
                **{k: published[k] for k in ("device_model", "reference_device", "reference_device_model")},
                "printed_name": "torch.argsort",
                "function": "torch.argsort",
                "quantity": "latency_ms",
                "relation": "equals",
                "unit": "ms",
                "printed_text": "0.157",
                "printed_value": 0.157,
                "decimals": 3,
                "ours": 0.1572,
                "ours_text": "0.157",
                "equal": True,
                "reason": None,
                "derivation": "latencies: T4 vs TPU v3-8, 1 common subtest(s)",
                "evidence": None,
            }
        ],
        "reproduction_functions": [
            {
                "framework": "torch",
                "device_model": "TPU v3-8",
                "function": "torch.argsort",
                "in_sample": True,
                "ours": "complete_failure",
                "passed": 0,
                "failed": 2,
                "unknown": 0,
                "harness_only": 0,
                "printed_in_latency_tables": False,
                "evidence": "torch.argsort: 2 of 2 subtests fail (RuntimeError x2), e.g. test_argsort",
            }
        ],
        "declared": [
            {
                "framework": "torch",
                "framework_version": "2.13.0",
                "function": "torch.argsort",
                "unmapped_reason": None,
                "origin": "mps_list",
                "entry": "argsort",
                "variant": None,
                "device_type": "mps",
                "dtype": "float16",
                "declared": "expected_failure",
                "aspect": "forward",
                "test_class": None,
                "test_name": None,
                "active": True,
                "reason": "ON_MPS_XFAILLIST: fails on MPS",
                "source": "common_mps.py:739:mps_ops_modifier.ON_MPS_XFAILLIST['argsort']",
            }
        ],
        "support_matrix": [
            {
                "framework": "torch",
                "framework_version": "2.13.0",
                "function": "torch.argsort",
                "origin": "opinfo",
                "entry": "argsort",
                "case_id": "torch.census.opinfo.argsort",
                "dtype": "float32",
                "device": "cpu",
                "device_model": "AMD EPYC",
                "mode": "eager",
                "run_id": "torch-cpu-eager-census-1",
                "status": "works",
                "samples": 11,
                "samples_failed": 0,
                "oracle": "reference",
                "max_abs_error": 0.0,
                "max_rel_error": 0.0,
                "error_type": None,
                "failure_category": None,
                "confirmation": None,
                "declared_dtype": "supported",
                "declared_failures": 0,
                "finding": None,
            }
        ],
        "crossframework": [
            {
                "name": "arccos",
                "reference": "numpy.arccos",
                "dtype": "int8",
                "device": "cpu",
                "mode": "eager",
                "framework": framework,
                "framework_version": version,
                "function": function,
                "origin": origin,
                "run_id": f"{framework}-cpu-eager-census-1",
                "status": status,
                "samples": 7,
                "samples_failed": failed,
                "oracle": "numpy",
                "max_abs_error": 0.0,
                "max_rel_error": 0.0,
                "error_type": error_type,
                "error_message": None,
                "frameworks": 2,
                "agreement": "disagree",
                "stands_apart": apart,
                "rel_error_spread": 0.0,
            }
            for framework, version, function, origin, status, failed, error_type, apart in [
                ("jax", "0.10.2", "jax.numpy.arccos", "numpy", "works", 0, None, None),
                (
                    "tensorflow",
                    "2.21.0",
                    "tensorflow.experimental.numpy.arccos",
                    "tnp",
                    "fails",
                    7,
                    "NotFoundError",
                    "alone_fails",
                ),
            ]
        ],
    }


def write_example_dataset(data_dir: Path) -> None:
    """A dataset folder with every table, laid out like data/, plus its README and croissant.json."""
    import pandas as pd

    from portability_data.dataset.build import build_dataset
    from portability_data.dataset.folder import CONFIG_FILES
    from portability_data.tables.tableio import write_table

    for table, rows in example_rows().items():
        pattern = CONFIG_FILES[table]
        folder = pattern.split("/")[0]
        name = "portability/torch-cpu-eager-1.parquet" if table in ("results", "runs") else f"{table}.parquet"
        path = data_dir / pattern if "*" not in pattern else data_dir / folder / name  # a named file: there
        write_table(table, pd.DataFrame(rows), path)
    build_dataset(
        data_dir, REPO_ROOT / "DATASET_CARD.md", {"version": "0.1.0", "namespace": "portability-bench"}
    )


def write_pooled(data_dir: Path) -> None:
    """The `pooled` table the aggregate stage writes, from data_dir's results (and runs) shards:
    what the report reads of the rows."""
    from portability_data.pipeline.aggregate.build import pooled_rows, pooled_table
    from portability_data.tables.tableio import read_table, write_table

    runs = read_table("runs", data_dir / "runs") if (data_dir / "runs").exists() else None
    marked = pooled_rows(read_table("results", data_dir / "results"), runs)
    write_table("pooled", pooled_table(marked), data_dir / "pooled" / "pooled.parquet")


# Settings (source, framework, version, device, device model, mode) and table rows for report tests.
SETTING_KEYS = ("source", "framework", "framework_version", "device", "device_model", "mode")
T4 = ("mince2023", "torch", "1.12.0", "gpu", "T4", "eager")
V3 = ("mince2023", "torch", "1.12.0", "tpu", "TPU v3-8", "eager")
STUDY_CPU = ("mince2023", "torch", "1.12.0", "cpu", "t4_vm CPU", "eager")


def outcome_row(setting: tuple, function: str, outcome: str, category: str | None = None) -> dict:
    """An outcomes row: 2 subtests (none when unavailable), passed and failed as the outcome says."""
    passed = {"success": 2, "partial_failure": 1}.get(outcome, 0)
    failed = {"complete_failure": 2, "partial_failure": 1}.get(outcome, 0)
    return {
        **dict(zip(SETTING_KEYS, setting)),
        "function": function,
        "outcome": outcome,
        "n_subtests": 0 if outcome == "unavailable" else 2,
        "n_passed": passed,
        "n_failed": failed,
        "n_skipped": 0,
        "dominant_failure_category": category,
    }


def latency_row(
    setting: tuple,
    function: str,
    ms: float,
    reference: tuple | None = None,
    reference_ms: float | None = None,
) -> dict:
    """A latencies row of one subtest; with a reference setting, the paired row and its ratio."""
    return {
        **dict(zip(SETTING_KEYS, setting)),
        "function": function,
        "n_subtests": 1,
        "latency_ms": ms,
        "median_ms": ms,
        "spread": 0.0,
        "reference_device": reference[3] if reference else None,
        "reference_device_model": reference[4] if reference else None,
        "reference_latency_ms": reference_ms,
        "ratio": ms / reference_ms if reference_ms else None,
    }


def census_results(root: Path, framework: str, mode: str) -> pd.DataFrame:
    """A real census run of the scratch checkout's census (one repeat, one worker): its shard's
    rows indexed by subtest."""
    import pyarrow.parquet as pq

    from portability_data.runner.spec import Paths, RunSpec
    from portability_data.runner.supervisor import run

    paths = Paths.under(root)
    spec = RunSpec(framework=framework, device="cpu", mode=mode, repeats=1, timeout_s=300, suite="census")
    run_id = run(spec, paths, log=lambda message: None)
    results = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pandas()
    return results.set_index("subtest")


def census_checkout(root: Path, framework: str, wanted: dict[str, dict[str, list[str]]]) -> Path:
    """A scratch checkout for a real census run: the real harness conftest, the framework's real
    census module of each origin in `wanted`, and its committed manifest cut down to the given
    entries, each with the given dtypes (origin -> entry -> dtypes; an origin with none is left out)."""
    import shutil

    import yaml

    census = REPO_ROOT / "cases" / framework / "census"
    folder = root / "cases" / framework / "census"
    folder.mkdir(parents=True)
    shutil.copy(REPO_ROOT / "cases" / "conftest.py", root / "cases" / "conftest.py")
    if (census / "conftest.py").is_file():  # the framework's census-wide pytest settings
        shutil.copy(census / "conftest.py", folder / "conftest.py")
    for origin, entries in wanted.items():
        if not entries:
            continue
        shutil.copy(census / f"test_{origin}.py", folder / f"test_{origin}.py")
        manifest = yaml.safe_load((census / f"{origin}.yaml").read_text())
        manifest["entries"] = [
            {**e, "dtypes": entries[e["entry"]]} for e in manifest["entries"] if e["entry"] in entries
        ]
        (folder / f"{origin}.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root
