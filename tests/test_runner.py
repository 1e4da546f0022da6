"""The runner on real worker processes: faults are recorded per subtest, the run goes on, a killed
run resumes without loss or duplicates, and shards are immutable and uniquely named."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from portability_data.runner.fault_rows import describe_fault, limit_message, not_rerun_event
from portability_data.runner.fork_worker import xla_on_cpu
from portability_data.runner.journal import Journal
from portability_data.runner.provenance import CPU_FEATURES
from portability_data.runner.spec import Paths, RunError, RunSpec
from portability_data.runner.supervisor import run
from portability_data.runner.worker_process import WorkerHung, WorkerOverMemory, worker_environment
from tests.conftest import journaled_rows

FAULTS = """
import ctypes, os, sys, time
import pytest

def test_before():
    assert 1 + 1 == 2

def test_segfault():
    ctypes.string_at(0)

def test_abort():
    os.abort()

def test_hang():
    time.sleep(600)

def test_memory_hog():
    hog = []
    while True:
        hog.append(bytearray(64 * 2**20))
        time.sleep(0.01)

def test_sys_exit():
    sys.exit(3)

def test_os_exit():
    os._exit(7)

def test_fails():
    assert [1, 2] == [1, 3]

@pytest.mark.parametrize("n", [1, 2])
def test_after(n):
    assert n > 0
"""


# the lines of each faulting subtest where its worker can go down (the hog: either of its loop's)
WHERE_IN_FAULTS = {
    "test_segfault": ["    ctypes.string_at(0)"],
    "test_abort": ["    os.abort()"],
    "test_hang": ["    time.sleep(600)"],
    "test_memory_hog": ["        hog.append(bytearray(64 * 2**20))", "        time.sleep(0.01)"],
}


def rows_of(paths: Paths, run_id: str) -> list[dict]:
    [shard] = paths.results_dir.glob(f"*/{run_id}.parquet")  # under its source: a run id is unique
    return pq.read_table(shard).to_pylist()


def by_subtest(rows: list[dict]) -> dict[str, str]:
    return {(r["subtest"]): r["outcome"] for r in rows}


def test_faults_are_recorded_and_the_run_goes_on(case_repo) -> None:
    case_repo.add("torch", "faults", FAULTS)
    paths = Paths.under(case_repo.root)
    spec = RunSpec(framework="torch", device="cpu", repeats=1, timeout_s=4, memory_mb=700)
    run_id = run(spec, paths, log=lambda m: None)
    rows = rows_of(paths, run_id)
    outcomes = by_subtest(rows)
    assert outcomes == {
        "test_before": "passed",
        "test_segfault": "crashed",
        "test_abort": "crashed",
        "test_hang": "timeout",
        "test_memory_hog": "memory",
        "test_sys_exit": "failed",  # pytest turns SystemExit into a failure; the worker survives
        "test_os_exit": "crashed",
        "test_fails": "failed",
        "test_after[1]": "passed",
        "test_after[2]": "passed",
    }
    detail = {r["subtest"]: r for r in rows}
    assert "SIGSEGV" in detail["test_segfault"]["error_message"]
    assert "SIGABRT" in detail["test_abort"]["error_message"]
    assert "status 7" in detail["test_os_exit"]["error_message"]
    assert detail["test_hang"]["failure_category"] == "timeout"
    assert detail["test_memory_hog"]["failure_category"] == "memory"
    # where each was when its worker went down: the dump a crash leaves, the one a hung worker or
    # one over the cap is asked for (SIGABRT before the kill), each the subtest's own line
    lines = {
        name: [FAULTS.splitlines().index(code) + 1 for code in codes]
        for name, codes in WHERE_IN_FAULTS.items()
    }
    for subtest, (moment, innermost) in {
        "test_segfault": ("crash", "ctypes/__init__.py:"),
        "test_abort": ("crash", "cases/torch/test_faults.py:"),
        "test_hang": ("timeout", "cases/torch/test_faults.py:"),
        "test_memory_hog": ("memory cap", "cases/torch/test_faults.py:"),
    }.items():
        message = detail[subtest]["error_message"]
        assert f"; at the {moment}: in {innermost}" in message, message
        ends = tuple(f"cases/torch/test_faults.py:{line} {subtest}" for line in lines[subtest])
        assert message.endswith(ends), message
    assert "; at the" not in detail["test_os_exit"]["error_message"]  # os._exit dumps nothing
    assert detail["test_fails"]["error_type"] == "AssertionError"
    assert len(rows) == len({(r["test_id"], r["repeat"]) for r in rows})
    runs = pq.read_table(paths.runs_dir / "portability" / f"{run_id}.parquet").to_pylist()
    assert runs[0]["status"] == "complete" and runs[0]["n_results"] == len(rows)
    assert runs[0]["timer_floor_ms"] is not None and runs[0]["timer_floor_ms"] >= 0
    # the other work on the host over the case (the hang alone took 4 s), journaled as it was taken
    assert runs[0]["host_other_cpu_max"] is not None and runs[0]["host_other_cpu_max"] >= 0
    journaled = [
        json.loads(line) for line in (paths.journal_dir / f"{run_id}.jsonl").read_text().splitlines()
    ]
    samples = [e["other_cpu"] for e in journaled if "other_cpu" in e]
    assert len(samples) == 1 and round(samples[0], 2) == runs[0]["host_other_cpu_max"]


def test_import_failure_is_an_error_of_the_case_and_others_run(case_repo) -> None:
    case_repo.add("jax", "broken", "import not_a_module_anywhere\n\ndef test_x():\n    pass\n")
    case_repo.add("jax", "fine", "def test_ok():\n    assert True\n")
    paths = Paths.under(case_repo.root)
    run_id = run(RunSpec(framework="jax", device="cpu", repeats=2, timeout_s=30), paths, log=lambda m: None)
    rows = rows_of(paths, run_id)
    broken = [r for r in rows if r["case_id"] == "jax.broken"]
    assert [r["outcome"] for r in broken] == ["error", "error"]
    assert broken[0]["error_type"] == "ModuleNotFoundError"
    assert [r["outcome"] for r in rows if r["case_id"] == "jax.fine"] == ["passed", "passed"]


def test_a_subtest_a_run_limit_stopped_is_not_run_again_in_later_repeats(case_repo, tmp_path) -> None:
    """A timeout fails its subtest from one row and gives it no latency: later repeats say so
    instead of spending timeout_s again (on XLA CPU, 2 x 900 s of matrix_rank a repeat)."""
    tries = tmp_path / "tries.txt"
    case_repo.add(
        "jax",
        "limits",
        "import time\n\n"
        f"def test_hang():\n    open({str(tries)!r}, 'a').write('x')\n    time.sleep(600)\n\n"
        "def test_ok():\n    assert True\n",
    )
    paths = Paths.under(case_repo.root)
    run_id = run(RunSpec(framework="jax", device="cpu", repeats=3, timeout_s=3), paths, log=lambda m: None)
    rows = sorted(rows_of(paths, run_id), key=lambda r: (r["subtest"], r["repeat"]))
    hang = [r for r in rows if r["subtest"] == "test_hang"]
    assert [r["outcome"] for r in hang] == ["timeout", "skipped", "skipped"]
    assert {r["error_type"] for r in hang[1:]} == {"NotRerun"}
    assert all("repeat 1 (timeout: no result after 3 s)" in r["error_message"] for r in hang[1:])
    assert tries.read_text() == "x"  # ran once
    assert [r["outcome"] for r in rows if r["subtest"] == "test_ok"] == ["passed"] * 3


def test_a_not_rerun_row_names_the_limit_in_the_words_and_figures_of_the_row_it_follows() -> None:
    """A reader joins a NotRerun row to the row that stopped it by its message: both name the
    same limit with the run's own figures (memory rows said "passed the cap", NotRerun "over")."""
    spec = RunSpec(framework="jax", device="cpu", repeats=3, timeout_s=7, memory_mb=640)
    hung = describe_fault(WorkerHung("t"), spec)
    over = describe_fault(WorkerOverMemory(700.4), spec)
    assert hung == ("timeout", "Timeout", "no result after 7 s")
    assert over == ("memory", "MemoryCapExceeded", "worker resident memory 700 MB passed the cap of 640 MB")
    for outcome in ("timeout", "memory"):
        later = not_rerun_event("t", 1, outcome, spec)
        assert (later["outcome"], later["error_type"], later["test_time_ms"]) == ("skipped", "NotRerun", None)
        assert f"repeat 2 ({outcome}: {limit_message(outcome, spec)})" in later["error_message"]
    assert "passed the cap of 640 MB" in not_rerun_event("t", 0, "memory", spec)["error_message"]


def test_a_resumed_run_remembers_which_subtests_a_limit_stopped(tmp_path) -> None:
    """The journal gives the limited subtests back on --resume: the earliest repeat that hit one."""
    from portability_data.runner.journal import Journal, resume_state

    paths = Paths.under(tmp_path)
    spec = RunSpec(framework="jax", device="cpu", repeats=3)
    journal = Journal(paths.journal_dir / "jax-run.jsonl")
    journal.start({"run_id": "jax-run", "spec": {**spec.__dict__}, "started_at": "t", "params_hash": "h"})
    rows = [("a", 1, "timeout"), ("a", 0, "timeout"), ("b", 0, "memory"), ("c", 0, "failed")]
    for test_id, repeat, outcome in rows:
        journal.append({"test_id": test_id, "repeat": repeat, "outcome": outcome})
    journal.append_info(
        {"device_model": "cpu", "framework_version": "0", "timer_floor_ms": None, "driver": None}
    )
    journal.close()
    assert resume_state("jax-run", paths).limited == {"a": (0, "timeout"), "b": (0, "memory")}


def test_absent_device_is_a_clear_error_before_anything_runs(case_repo) -> None:
    case_repo.add("torch", "fine", "def test_ok():\n    assert True\n")
    paths = Paths.under(case_repo.root)
    with pytest.raises(RunError, match=r"torch\.cuda\.is_available"):
        run(RunSpec(framework="torch", device="gpu", repeats=1), paths, log=lambda m: None)
    assert not (paths.results_dir).exists()


SLOW = """
import time
import pytest

@pytest.mark.parametrize("n", range(8))
def test_step(n):
    time.sleep(0.4)
    assert n >= 0
"""


@pytest.mark.parametrize("kill_after_rows", [0, 3, 11])
def test_sigkill_then_resume_loses_nothing_and_duplicates_nothing(case_repo, kill_after_rows: int) -> None:
    case_repo.add("torch", "slow", SLOW)
    paths = Paths.under(case_repo.root)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    command = [
        sys.executable,
        "-m",
        "portability_data.cli",
        "run",
        "--framework",
        "torch",
        "--repeats",
        "2",
        "--timeout",
        "30",
    ]
    runner = subprocess.Popen(
        command,
        cwd=case_repo.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while journaled_rows(paths.journal_dir) < kill_after_rows or not list(paths.journal_dir.glob("*.jsonl")):
        assert time.monotonic() < deadline and runner.poll() is None
        time.sleep(0.05)
    os.killpg(runner.pid, signal.SIGKILL)  # the runner and its worker, as a machine crash would
    runner.wait()
    assert not list(paths.results_dir.rglob("*.parquet"))  # no shard of a killed run
    run_id = next(paths.journal_dir.glob("*.jsonl")).stem
    resumed = subprocess.run(
        [sys.executable, "-m", "portability_data.cli", "run", "--resume", run_id],  # as the README says it
        cwd=case_repo.root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert resumed.stdout.strip() == run_id
    rows = rows_of(paths, run_id)
    keys = [(r["subtest"], r["repeat"]) for r in rows]
    assert sorted(keys) == sorted((f"test_step[{n}]", rep) for n in range(8) for rep in range(2))
    assert all(r["outcome"] == "passed" for r in rows)
    # the host load sampled before the kill is journaled, so the runs row describes the whole run
    journal = (paths.journal_dir / f"{run_id}.jsonl").read_text().splitlines()
    loads = [json.loads(line)["load"] for line in journal if line.startswith('{"load"')]
    [runs_row] = pq.read_table(paths.runs_dir / "local" / f"{run_id}.parquet").to_pylist()  # the CLI's
    assert len(loads) >= 2 and runs_row["host_load_max"] == round(max(loads), 2)


def test_two_runners_at_once_write_two_shards(case_repo) -> None:
    case_repo.add(
        "torch",
        "fine",
        "import pytest\n\n@pytest.mark.parametrize('n', range(3))\ndef test_ok(n):\n    assert n < 3\n",
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    command = [sys.executable, "-m", "portability_data.cli", "run", "--framework", "torch", "--repeats", "1"]
    first = subprocess.Popen(command, cwd=case_repo.root, env=env, stdout=subprocess.PIPE, text=True)
    second = subprocess.Popen(command, cwd=case_repo.root, env=env, stdout=subprocess.PIPE, text=True)
    ids = {first.communicate()[0].strip(), second.communicate()[0].strip()}
    assert len(ids) == 2
    paths = Paths.under(case_repo.root)
    for run_id in ids:
        assert len(rows_of(paths, run_id)) == 3


def test_worker_environment_is_scrubbed(case_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws_secret")
    monkeypatch.setenv("GITHUB_TOKEN", "gh_secret")
    case_repo.add(
        "torch",
        "env",
        """
import os
from pathlib import Path

def test_no_secrets():
    leaked = [k for k in os.environ if "SECRET" in k or "TOKEN" in k]
    assert leaked == []

def test_scratch_cwd():
    assert "portability-scratch" in os.getcwd()
    assert not (Path.cwd() / "cases").exists()
""",
    )
    paths = Paths.under(case_repo.root)
    run_id = run(RunSpec(framework="torch", device="cpu", repeats=1), paths, log=lambda m: None)
    assert {r["outcome"] for r in rows_of(paths, run_id)} == {"passed"}
    # the code's state is taken at the start (journaled, so a resume keeps it): outside git, unknown
    header, _ = Journal(paths.journal_dir / f"{run_id}.jsonl").read()
    assert header["code"] == {"git_commit": None, "code_modified": None, "src_tree": None}


@pytest.mark.parametrize(
    "device, pjrt, hidden",
    [("xla", "CPU", True), ("xla", "cpu", True), ("xla", "CUDA", False), ("cpu", "CPU", False)],
)
def test_workers_on_xla_cpu_see_no_cuda_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, device: str, pjrt: str, hidden: bool
) -> None:
    """XLA's CPU backend needs no GPU; hiding them keeps torch_xla's CUDA build of torch from
    initialising a driver (which lets the confirmations' fork server preload torch's databases)."""
    monkeypatch.setenv("PJRT_DEVICE", pjrt)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    spec = RunSpec(framework="torch", device=device, repeats=1)
    env = worker_environment(spec, Paths.under(tmp_path), tmp_path, events_fd=3)
    assert env["CUDA_VISIBLE_DEVICES"] == ("" if hidden else "0")
    assert env["PJRT_DEVICE"] == pjrt


@pytest.mark.parametrize(
    "device, environ, on_cpu",
    [
        ("xla", {"PJRT_DEVICE": "CPU"}, True),
        ("xla", {"PJRT_DEVICE": "cpu"}, True),
        ("xla", {"PJRT_DEVICE": "CUDA"}, False),
        ("xla", {}, False),
        ("cpu", {"PJRT_DEVICE": "CPU"}, False),
        ("tpu", {"PJRT_DEVICE": "CPU"}, False),
    ],
)
def test_one_test_says_whether_a_run_is_on_xlas_cpu_backend(device: str, environ: dict, on_cpu: bool) -> None:
    """The runner (which hides the GPUs) and the fork server (which then preloads torch_xla) ask
    the same function, so they cannot disagree about a worker."""
    assert xla_on_cpu(device, environ) is on_cpu


def test_a_killed_run_can_be_closed_as_partial(case_repo) -> None:
    case_repo.add("torch", "slow", SLOW)
    paths = Paths.under(case_repo.root)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    command = [sys.executable, "-m", "portability_data.cli", "run", "--framework", "torch", "--repeats", "1"]
    runner = subprocess.Popen(
        command,
        cwd=case_repo.root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while journaled_rows(paths.journal_dir) < 3:
        assert time.monotonic() < deadline and runner.poll() is None
        time.sleep(0.05)
    os.killpg(runner.pid, signal.SIGKILL)
    runner.wait()
    run_id = next(paths.journal_dir.glob("*.jsonl")).stem
    subprocess.run(
        [sys.executable, "-m", "portability_data.cli", "run", "--close", run_id],  # the id names the rest
        cwd=case_repo.root,
        env=env,
        check=True,
        capture_output=True,
    )
    rows = rows_of(paths, run_id)
    assert 3 <= len(rows) < 8 and all(r["outcome"] == "passed" for r in rows)
    run_row = pq.read_table(paths.runs_dir / "local" / f"{run_id}.parquet").to_pylist()[0]
    assert run_row["status"] == "partial" and run_row["n_results"] == len(rows)
    assert run_row["timer_floor_ms"] is not None and run_row["framework_version"] != "unknown"
    with pytest.raises(RunError, match="already finished"):
        run(RunSpec(framework="torch", device="cpu"), paths, resume=run_id, log=lambda m: None)


@pytest.mark.parametrize(
    ("confirm_jobs", "confirm_by"),
    [(1, "fork"), (2, "fork"), (1, "spawn")],
    ids=["forked_one_at_a_time", "forked_two_side_by_side", "spawned"],
)
def test_a_failure_that_passes_alone_is_order_dependent_and_a_real_one_confirmed(
    case_repo, confirm_jobs, confirm_by
) -> None:
    """A subtest that fails only after another case left state behind (here an attribute on the
    framework module, as TF's scalar cache leaves a +0.0) is re-run alone in a fresh worker: it
    passes there, so it is recorded as order-dependent and not counted against the function. Two
    confirming workers side by side give the same verdicts (each subtest still runs alone), and a
    worker forked from an import-only process gives those of a spawned one, a crash included (the
    child's signal, not the forking process's)."""
    import pyarrow.parquet as pq

    from portability_data.pipeline.aggregate.build import aggregate
    from portability_data.runner.journal import Journal
    from portability_data.tables.tableio import read_table

    case_repo.add(
        "torch",
        "a_leaves_state",
        """
        import torch

        def test_sets_state():
            torch._portability_leftover = True
        """,
    )
    case_repo.add(
        "torch",
        "b_sensitive",
        """
        import torch

        def test_clean_process_only():
            assert not hasattr(torch, "_portability_leftover"), "state left by an earlier case"

        def test_always_fails():
            assert torch.ones(2).sum().item() == 3.0

        def test_passes():
            assert torch.ones(2).sum().item() == 2.0
        """,
    )
    case_repo.add(
        "torch",
        "c_crashes",
        """
        import os
        import signal

        def test_segfaults():
            os.kill(os.getpid(), signal.SIGSEGV)
        """,
    )
    paths = Paths.under(case_repo.root)
    spec = RunSpec(framework="torch", device="cpu", repeats=2)
    run_id = run(spec, paths, log=lambda m: None, confirm_jobs=confirm_jobs, confirm_by=confirm_by)
    rows = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
    by = {(r["subtest"], r["repeat"]): r for r in rows}
    for repeat in (0, 1):
        assert by[("test_clean_process_only", repeat)]["outcome"] == "failed"
        assert by[("test_clean_process_only", repeat)]["confirmation"] == "order_dependent"
        assert by[("test_always_fails", repeat)]["confirmation"] == "confirmed"
        assert by[("test_passes", repeat)]["confirmation"] is None
        assert by[("test_segfaults", repeat)]["outcome"] == "crashed"
        assert by[("test_segfaults", repeat)]["confirmation"] == "confirmed"
    journaled = Journal(paths.journal_dir / f"{run_id}.jsonl").confirmations()
    assert {c["worker"] for c in journaled.values()} == {confirm_by}
    crash = next(c for test_id, c in journaled.items() if test_id.endswith("test_segfaults"))
    assert (crash["outcome"], crash["error_type"]) == ("crashed", "worker killed by signal SIGSEGV")
    outcomes, _ = aggregate(read_table("results", paths.results_dir), read_table("runs", paths.runs_dir))
    sensitive = outcomes[outcomes["function"] == "torch.b_sensitive"].iloc[0]
    assert sensitive["outcome"] == "partial_failure"
    assert (sensitive["n_passed"], sensitive["n_failed"], sensitive["n_order_dependent"]) == (2, 1, 1)


@pytest.mark.parametrize("confirm_by", ["fork", "spawn"])
def test_a_case_that_crashed_outside_its_subtests_is_confirmed_by_running_it_alone(
    case_repo, confirm_by
) -> None:
    """A worker that dies outside any subtest (here while importing the case file; torch's c10d
    thread aborting after a test is the real one) leaves a `<collection>` row. It is re-run as the
    whole case alone in a fresh worker: a case that crashes again is confirmed; one that crashed
    only the first time (the crash was not the case's alone) runs to its end and is order-dependent,
    so the aggregate does not count it against the function; one whose own subtest crashes when it
    runs alone says nothing of the first crash (inconclusive)."""
    from portability_data.pipeline.aggregate.build import aggregate
    from portability_data.tables.tableio import read_table

    cases = (
        ("always_crashes", False, "True"),
        ("crashed_once", True, "True"),
        ("then_a_test", True, "False"),
    )
    for name, first_time_only, test_survives in cases:
        case_repo.add(
            "torch",
            name,
            f"""
            import os
            import signal
            from pathlib import Path

            marker = Path(__file__).with_suffix(".imported")
            if not ({first_time_only} and marker.exists()):
                marker.touch()
                os.kill(os.getpid(), signal.SIGSEGV)

            def test_runs():
                if not {test_survives}:
                    os.kill(os.getpid(), signal.SIGSEGV)
            """,
        )
    paths = Paths.under(case_repo.root)
    run_id = run(
        RunSpec(framework="torch", device="cpu", repeats=1), paths, log=lambda m: None, confirm_by=confirm_by
    )
    rows = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pylist()
    by_case = {r["case_id"]: r for r in rows}
    for case_id, verdict in (
        ("torch.always_crashes", "confirmed"),
        ("torch.crashed_once", "order_dependent"),
        ("torch.then_a_test", "inconclusive"),  # alone, a subtest of its own crashed: not the case's fault
    ):
        row = by_case[case_id]
        assert row["test_id"].endswith("::<collection>") and row["outcome"] == "crashed", case_id
        assert row["confirmation"] == verdict, case_id
    outcomes, _ = aggregate(read_table("results", paths.results_dir), read_table("runs", paths.runs_dir))
    by_function = outcomes.set_index("function")["outcome"].to_dict()
    assert by_function["torch.always_crashes"] == "complete_failure"
    assert by_function["torch.crashed_once"] == "success"


def test_runs_row_describes_the_host_and_the_code_that_ran(case_repo) -> None:
    import json

    import pyarrow.parquet as pq

    from portability_data.runner.provenance import case_digests, harness_digest

    case_repo.add("torch", "tiny", "def test_ok():\n    assert True\n")
    paths = Paths.under(case_repo.root)
    run_id = run(RunSpec(framework="torch", device="cpu", repeats=1), paths, log=lambda m: None)
    row = pq.read_table(paths.runs_dir / "portability" / f"{run_id}.parquet").to_pylist()[0]
    assert row["cpu_count"] >= 1 and row["memory_mb"] > 0
    assert row["cpu_flags"] is None or set(row["cpu_flags"].split()) <= set(CPU_FEATURES)
    build = json.loads(row["build"])
    assert "BLAS_INFO" in build["config"] and build["cpu_capability"]
    assert row["harness_digest"] == harness_digest(paths.cases_dir, "cpu")
    assert json.loads(row["case_digests"]) == case_digests(paths, ["torch.tiny"], "torch")
    # a changed case file changes its digest (so the older run is superseded)
    (case_repo.root / "cases" / "torch" / "test_tiny.py").write_text("def test_ok():\n    assert 1\n")
    assert case_digests(paths, ["torch.tiny"], "torch") != json.loads(row["case_digests"])


def test_the_harness_digest_is_of_the_code_not_of_where_the_package_lives(repo_root: Path) -> None:
    """The committed runs were made before the runner moved into runner/: the same harness bytes
    at the old dotted path give the same digest, and any other changed byte gives another."""
    from portability_data.runner.provenance import (
        CORE_FILES,
        DEVICES_FOLDER,
        device_modules,
        harness_digest,
        harness_digest_of,
    )

    here = repo_root / "src" / "portability_data" / "runner"
    files = [(here / name).read_bytes() for name in CORE_FILES]
    files.append(device_modules(here / DEVICES_FOLDER)["cpu.py"])
    conftest = (repo_root / "cases" / "conftest.py").read_bytes()
    assert harness_digest_of(files, conftest) == harness_digest(repo_root / "cases", "cpu")
    flat = [part.replace(b"portability_data.runner", b"portability_data") for part in files]
    assert harness_digest_of(flat, conftest.replace(b"portability_data.runner", b"portability_data")) == (
        harness_digest(repo_root / "cases", "cpu")
    )
    changed = [files[0].replace(b"import pytest", b"import  pytest", 1), *files[1:]]
    assert harness_digest_of(changed, conftest) != harness_digest(repo_root / "cases", "cpu")


MEASURED = """
import pytest

@pytest.mark.parametrize("bad", [0, 2])
def test_deviation(record_property, bad):
    record_property("oracle", "reference")
    record_property("samples", 4)
    record_property("samples_failed", bad)
    record_property("max_abs_error", 0.5 * bad)
    record_property("max_rel_error", 1e-7)
    assert bad == 0, f"{bad} of 4 samples off the reference"

def test_unknown_measure(record_property):
    record_property("speedup", 3.0)
"""


def test_measures_a_case_reports_become_results_columns(case_repo) -> None:
    """What a case reports with record_property (the census's oracle, sample counts, deviations)
    lands in the shard, for failing subtests too; a name the table has no column for fails the
    subtest with a MeasureError instead of being dropped."""
    case_repo.add("jax", "measured", MEASURED)
    paths = Paths.under(case_repo.root)
    run_id = run(RunSpec(framework="jax", device="cpu", repeats=1), paths, log=lambda m: None, confirm=False)
    rows = {r["subtest"]: r for r in rows_of(paths, run_id)}
    good, off = rows["test_deviation[0]"], rows["test_deviation[2]"]
    assert good["outcome"] == "passed" and off["outcome"] == "failed"
    assert (good["oracle"], good["samples"], good["samples_failed"], good["max_abs_error"]) == (
        "reference",
        4,
        0,
        0.0,
    )
    assert (off["samples"], off["samples_failed"], off["max_abs_error"], off["max_rel_error"]) == (
        4,
        2,
        1.0,
        1e-7,
    )
    unknown = rows["test_unknown_measure"]
    assert unknown["outcome"] == "failed" and unknown["error_type"] == "MeasureError"
    assert "speedup" in unknown["error_message"] and unknown["samples"] is None


def test_a_run_that_left_failures_unconfirmed_closes_partial(case_repo) -> None:
    """`--no-confirm` leaves failing subtests without a verdict: such a run's row says partial, as a
    run closed before its confirmations ended does, so aggregation reads those rows as unknown; a
    run with nothing failing has nothing to confirm and stays complete."""
    case_repo.add("jax", "measured", MEASURED)
    paths = Paths.under(case_repo.root)
    said: list[str] = []
    failing = run(RunSpec(framework="jax", device="cpu", repeats=1), paths, log=said.append, confirm=False)
    case_repo.add("jax", "measured", "def test_fine():\n    assert True\n")
    passing = run(RunSpec(framework="jax", device="cpu", repeats=1), paths, log=said.append, confirm=False)
    status = {
        run_id: pq.read_table(next(paths.runs_dir.glob(f"*/{run_id}.parquet"))).to_pylist()[0]["status"]
        for run_id in (failing, passing)
    }
    assert status == {failing: "partial", passing: "complete"}
    assert any("2 failing subtest(s) left unconfirmed" in line for line in said)
    assert all(r["confirmation"] is None for r in rows_of(paths, failing))


def test_a_run_resumes_only_on_the_code_that_started_it(case_repo) -> None:
    """A killed run's rows carry the digests its journal recorded at its start: resuming it after
    a case file or the harness changed is refused, naming what changed and how to go on, before
    any worker starts (`--close` writes its rows as they stand, with the digests that made them)."""
    from portability_data.runner.journal import Journal
    from portability_data.runner.provenance import code_digests

    case_repo.add("torch", "one", "def test_a():\n    assert True\n")
    case_repo.add("torch", "two", "def test_b():\n    assert True\n")
    paths = Paths.under(case_repo.root)
    spec = RunSpec(framework="torch", device="cpu")
    header = {
        "run_id": "torch-cpu-eager-killed",
        "spec": {**spec.__dict__, "cases": []},
        "started_at": "2026-11-28T00:00:00+00:00",
        "params_hash": "k",
        "digests": code_digests(paths, spec),
        "jobs": 1,
    }
    Journal(paths.journal_dir / "torch-cpu-eager-killed.jsonl").start(header)

    (case_repo.root / "cases" / "torch" / "test_two.py").write_text("def test_b():\n    assert 2\n")
    with pytest.raises(RunError, match=r"the case files of torch\.two changed since.*--close"):
        run(spec, paths, resume="torch-cpu-eager-killed", log=lambda m: None)
    (case_repo.root / "cases" / "torch" / "test_two.py").write_text("def test_b():\n    assert True\n")
    (paths.cases_dir / "conftest.py").write_text(
        (paths.cases_dir / "conftest.py").read_text() + "\n# changed\n"
    )
    with pytest.raises(RunError, match=r"the harness \(\w{12} then, \w{12} now\) changed since"):
        run(spec, paths, resume="torch-cpu-eager-killed", log=lambda m: None)
    assert not list(paths.results_dir.rglob("*.parquet"))  # nothing ran, nothing written


HANGS = """
from pathlib import Path
import time

MARK = Path({mark!r})

def test_ok():
    assert True

def test_hangs():
    # measuring: hangs at once; confirming: fails in the run, then hangs when re-run alone
    if {phase!r} == "confirming" and not MARK.exists():
        MARK.write_text("failed once")
        raise AssertionError("fails in the run")
    Path(str(MARK) + ".hanging").write_text("now")
    time.sleep(300)
"""


@pytest.mark.parametrize("phase", ["measuring", "confirming"])
def test_sigterm_ends_the_run_and_its_workers_and_says_how_to_resume(case_repo, tmp_path, phase) -> None:
    """A `kill` of the runner (SIGTERM) interrupts it as Ctrl-C does: its case worker or confirming
    workers, each in a session of its own, are killed with it (they once ran on orphaned), nothing
    false is journaled for the subtest they were running, and the message names the run to resume
    or close. Exit status 130."""
    from portability_data.runner.provenance import descendants

    mark = tmp_path / "mark"
    case_repo.add("torch", "hangs", HANGS.format(mark=str(mark), phase=phase))
    paths = Paths.under(case_repo.root)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    command = [sys.executable, "-m", "portability_data.cli", "run", "--framework", "torch", "--repeats", "1"]
    runner = subprocess.Popen(
        command, cwd=case_repo.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    hanging = Path(f"{mark}.hanging")
    deadline = time.monotonic() + 180
    while not hanging.exists():
        assert time.monotonic() < deadline and runner.poll() is None, runner.communicate()[1][-3000:]
        time.sleep(0.05)
    workers = descendants(runner.pid)
    assert workers  # the worker (or the forking process and its child) running test_hangs
    runner.send_signal(signal.SIGTERM)
    _, stderr = runner.communicate(timeout=120)  # the worker would sleep 300 s
    assert runner.returncode == 130, stderr[-3000:]
    run_id = next(paths.journal_dir.glob("*.jsonl")).stem
    assert f"interrupted: run {run_id} stopped" in stderr
    assert f"--resume {run_id}" in stderr and f"--close {run_id}" in stderr

    def alive(pid: int) -> bool:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state != "Z"

    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if alive(pid)]
    lines = [json.loads(line) for line in (paths.journal_dir / f"{run_id}.jsonl").read_text().splitlines()]
    rows = {line["row"]["subtest"]: line["row"]["outcome"] for line in lines if "row" in line}
    # the hung subtest has no row (measuring) or keeps its failure, unconfirmed (confirming)
    assert rows == (
        {"test_ok": "passed"} if phase == "measuring" else {"test_ok": "passed", "test_hangs": "failed"}
    )
    assert not [line for line in lines if "confirm" in line]
    closed = subprocess.run(
        [*command[:4], "--close", run_id], cwd=case_repo.root, env=env, capture_output=True, text=True
    )
    assert closed.returncode == 0, closed.stderr[-3000:]
    assert {r["subtest"] for r in rows_of(paths, run_id)} == set(rows)
