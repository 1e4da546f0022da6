"""The rehearsal of the budgeted device bench (issue 58) on this CPU: `portability bench --device cpu
--budget S --out DIR` runs the code path a lent GPU runs (only the device name differs). A budget
that ends inside a case cuts the run, which is closed partial; a second call resumes the part with
the cases the cut left, a third skips it; the output folder's submission/ passes `portability
submission check`; the command imports nothing beyond the light core (and no framework itself);
the dry run prints the package check and a plan whose estimates come from the committed runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from portability_data.cli import main
from portability_data.pipeline.bench_estimate import cpu_seconds, plan_lines, study_factor
from portability_data.runner.budget_bench import DEFAULT_PARTS, Limits, Part
from portability_data.runner.provenance import CORE_FILES, DEVICES_FOLDER
from tests.conftest import REPO_ROOT, CaseRepo, journaled_rows
from tests.test_submission import git

FAST = """
import jax.numpy as jnp
import numpy as np

def test_{name}(device, timed):
    out = timed(jnp.{name}, jnp.zeros((2,)))
    np.testing.assert_allclose(np.asarray(out), np.full(2, {value}))
"""
# Its first subtest passes at once; its second sleeps while the flag file is there (the worker's
# environment is scrubbed: a file, not a variable): the budget ends there, with the case in flight.
SLOW = """
import time
from pathlib import Path

import jax.numpy as jnp
import numpy as np

def test_sin_first(device, timed):
    out = timed(jnp.sin, jnp.zeros((2,)))
    np.testing.assert_allclose(np.asarray(out), np.zeros(2))

def test_sin_second(device, timed):
    if Path({flag!r}).exists():
        time.sleep(600)
    out = timed(jnp.sin, jnp.zeros((3,)))
    np.testing.assert_allclose(np.asarray(out), np.zeros(3))
"""
# What the bench's own process must never import: the pipeline extra, DVC, datasets, TensorFlow,
# and the frameworks under test (their workers import them, in processes of their own).
NOT_LIGHT = ("pandas", "pandera", "dvc", "datasets", "huggingface_hub", "matplotlib", "scipy", "tensorflow")
FRAMEWORKS = ("torch", "jax")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three jax cases (cos, sin: slow on demand, tan) committed with a copy of the harness, so the
    runs' digests are a commit's and their submission can be checked."""
    root = tmp_path_factory.mktemp("budget") / "repo"
    cases = CaseRepo(root)
    cases.add("jax", "numpy_cos", FAST.format(name="cos", value=1.0), function="jax.numpy.cos")
    cases.add("jax", "numpy_sin", SLOW.format(flag=str(root.parent / "slow.flag")), function="jax.numpy.sin")
    cases.add("jax", "numpy_tan", FAST.format(name="tan", value=0.0), function="jax.numpy.tan")
    runner = REPO_ROOT / "src" / "portability_data" / "runner"
    path_modules = [f"{DEVICES_FOLDER}/{p.name}" for p in (runner / DEVICES_FOLDER).glob("*.py")]
    for name in [*CORE_FILES, *path_modules]:
        target = root / "src" / "portability_data" / "runner" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(runner / name, target)
    shutil.copyfile(REPO_ROOT / "pyproject.toml", root / "pyproject.toml")  # the pins the summary names
    git(root, "init", "-q")
    git(root, "add", "cases", "src", "pyproject.toml")
    git(root, "commit", "-q", "-m", "cases and harness")
    return root


def command(root: Path, args: tuple[str, ...], slow: bool) -> tuple[list[str], dict[str, str]]:
    """The command in a fresh interpreter where the modules of NOT_LIGHT cannot be imported (a
    bare machine: pyarrow, which loads pandas where it is installed to convert time zones, falls
    back without it); it prints the modules of NOT_LIGHT and FRAMEWORKS it imported itself."""
    code = (
        "import json, sys\n"
        "class Bare:  # a machine without them: importing one fails, as it would there\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {NOT_LIGHT!r}:\n"
        "            raise ModuleNotFoundError(f'not on a bare machine: {name}')\n"
        "sys.meta_path.insert(0, Bare())\n"
        "from portability_data.cli import main\n"
        "try:\n"
        f"    main({['bench', *args]!r})\n"
        "finally:\n"
        f"    loaded = sorted(m for m in {(*NOT_LIGHT, *FRAMEWORKS)!r} if m in sys.modules)\n"
        "    print('LOADED ' + json.dumps(loaded))\n"
    )
    flag = root.parent / "slow.flag"
    flag.write_text("") if slow else flag.unlink(missing_ok=True)
    return [sys.executable, "-c", code], {**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")}


def bench(root: Path, *args: str, slow: bool = False) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """The command run to its end: (its result, the modules it imported that it must not)."""
    argv, env = command(root, args, slow)
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=900)
    marker = [line for line in done.stdout.splitlines() if line.startswith("LOADED ")]
    assert marker, f"no module report:\n{done.stdout}\n{done.stderr[-3000:]}"
    return done, json.loads(marker[-1].removeprefix("LOADED "))


def case_ids(out: Path, run_id: str) -> set[str]:
    shard = out / "data" / "results" / "local" / f"{run_id}.parquet"
    return set(pq.read_table(shard, columns=["case_id"]).column("case_id").to_pylist())


def live_workers(*roots: Path) -> list[int]:
    """Case workers still alive whose PORTABILITY_ROOTDIR is one of `roots`."""
    wanted = {f"PORTABILITY_ROOTDIR={root}".encode() for root in roots}
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if b"portability_data.runner.worker" not in (entry / "cmdline").read_bytes():
                continue
            if wanted & set((entry / "environ").read_bytes().split(b"\0")):
                found.append(int(entry.name))
        except OSError:  # not a process, or gone since the listing
            continue
    return found


def test_a_cut_run_is_closed_partial_resumed_then_skipped_and_submittable(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    common = ("--device", "cpu", "--parts", "jax/eager", "--out", str(out), "--timeout", "600")
    # 50 s less the 15 s reserve: the part has 35 s, the fast case needs a jax worker (~5 s here, ~15 s
    # on a loaded CI machine) and the slow one holds the rest, all waited for (was 75: 25 s more wait)
    first, loaded = bench(repo, *common, "--budget", "50", slow=True)
    assert first.returncode == 0, first.stderr[-3000:]
    assert loaded == [], f"the bench itself imported {loaded}"
    journal = json.loads((out / "bench_journal.json").read_text())
    entry = journal["parts"]["jax/eager"]
    assert entry["status"] == "partial", first.stderr[-3000:]
    (cut,) = entry["run_ids"]
    runs_row = pq.read_table(out / "data" / "runs" / "local" / f"{cut}.parquet").to_pylist()[0]
    assert runs_row["status"] == "partial"
    assert runs_row["device"] == "cpu" and json.loads(runs_row["packages"])["jax"]
    assert "jax.numpy.cos" in case_ids(out, cut) and "jax.numpy.tan" not in case_ids(out, cut)
    # the worker holding the slow case at the cut leads its own session: the cut ends it too
    assert live_workers(repo, out) == []

    second, loaded = bench(repo, *common, "--budget", "300")
    assert second.returncode == 0, second.stderr[-3000:]
    assert loaded == []
    entry = json.loads((out / "bench_journal.json").read_text())["parts"]["jax/eager"]
    assert entry["status"] == "complete" and entry["run_ids"][0] == cut
    resumed = entry["run_ids"][1]
    # the finished case is not run again; the one in flight at the cut and the rest are
    assert case_ids(out, resumed) == {"jax.numpy.sin", "jax.numpy.tan"}
    assert "resuming: 2 case(s)" in second.stderr

    third, _ = bench(repo, *common, "--budget", "300")
    assert third.returncode == 0 and "complete already" in third.stderr
    assert json.loads((out / "bench_journal.json").read_text())["parts"]["jax/eager"]["run_ids"] == [
        cut,
        resumed,
    ]

    summary = json.loads((out / "summary.json").read_text())
    (part,) = summary["parts"]
    assert [r["status"] for r in part["runs"]] == ["partial", "complete"]
    assert sum(sum(r["outcomes"].values()) for r in part["runs"]) == sum(r["rows"] for r in part["runs"])
    assert any(line.startswith("jax ") for line in summary["versions"])

    submission = out / "submission"
    listed = sorted(p.relative_to(submission).as_posix() for p in submission.rglob("*.parquet"))
    assert listed == sorted(f"{t}/local/{r}.parquet" for t in ("results", "runs") for r in (cut, resumed))
    assert main(["submission", "check", str(submission), "--root", str(repo)]) == 0


def test_the_dry_run_checks_packages_and_plans_without_running(repo: Path, tmp_path: Path) -> None:
    done, loaded = bench(repo, "--device", "cpu", "--parts", "jax/eager", "--dry-run", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert loaded == []
    assert "jax " in done.stdout and "sees the device" in done.stdout
    # no committed run in this repository: the estimate says so instead of guessing
    assert "jax/eager: 3 case(s), ? s (no complete committed CPU run of jax/eager)" in done.stdout
    assert not (tmp_path / "data").exists()


def test_a_device_that_is_not_there_is_said_with_what_to_do(repo: Path) -> None:
    done, loaded = bench(repo, "--device", "gpu", "--parts", "jax/eager", "--dry-run")
    assert loaded == []
    assert done.returncode == 1 and "not ready" in done.stderr
    assert "jax" in done.stdout and "NO GPU visible: install jax with its CUDA plugin" in done.stdout


def test_the_plan_estimates_from_the_committed_cpu_runs_and_the_studys_gpu_factor() -> None:
    data = REPO_ROOT / "data"
    factor = study_factor(data, "jax")
    assert factor is not None and factor[0] > 1  # the study's JAX took longer on its GPUs than CPUs
    limits = Limits("gpu", 420.0)
    lines, curated = plan_lines(DEFAULT_PARTS, limits, REPO_ROOT)
    assert lines[0].startswith("plan on device gpu: budget 420 s")
    assert [line.split(":")[0].strip() for line in lines[1:-1]] == [p.label for p in DEFAULT_PARTS]
    cpu = cpu_seconds(data, "torch", "eager", "curated", 1, ["torch.relu"])
    assert cpu is not None and cpu[0] > 0 and cpu[2] == 0
    verdict = (
        "fits" if curated is not None and curated <= limits.budget_s - limits.reserve_s else "does NOT fit"
    )
    assert lines[-1].endswith(verdict)


def test_parts_are_written_as_labels() -> None:
    assert Part.parse("jax/compiled/census") == Part("jax", "compiled", "census")
    assert Part.parse("torch/eager").label == "torch/eager"
    with pytest.raises(RuntimeError, match="framework/mode"):
        Part.parse("torch")


def test_a_bench_killed_outright_loses_no_row(repo: Path, tmp_path: Path) -> None:
    """SIGKILL to the bench and its part (the device tool's own timeout): the next call closes the
    orphaned run as partial, credits it to its part and runs only the cases it did not finish."""
    out = tmp_path / "out"
    common = ("--device", "cpu", "--parts", "jax/eager", "--out", str(out), "--timeout", "600")
    argv, env = command(repo, (*common, "--budget", "300"), slow=True)
    started = subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while journaled_rows(out / "data" / ".journal") < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert journaled_rows(out / "data" / ".journal") >= 2, "the run journaled no rows in 240 s"
        children = Path(f"/proc/{started.pid}/task/{started.pid}/children").read_text().split()
        for child in children:  # the part's child leads its own session, its worker in it
            os.killpg(int(child), signal.SIGKILL)
    finally:
        started.kill()
        started.wait()
    (orphan,) = [p.stem for p in (out / "data" / ".journal").glob("*.jsonl")]
    assert not (out / "data" / "results" / "local" / f"{orphan}.parquet").exists()

    again, _ = bench(repo, *common, "--budget", "300")
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"{orphan} was left unclosed" in again.stderr
    entry = json.loads((out / "bench_journal.json").read_text())["parts"]["jax/eager"]
    assert entry["status"] == "complete" and entry["run_ids"][0] == orphan
    runs_row = pq.read_table(out / "data" / "runs" / "local" / f"{orphan}.parquet").to_pylist()[0]
    assert runs_row["status"] == "partial" and runs_row["n_results"] >= 2
    assert case_ids(out, entry["run_ids"][1]) == {"jax.numpy.sin", "jax.numpy.tan"}
