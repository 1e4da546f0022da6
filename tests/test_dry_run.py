"""`portability run --dry-run` and `portability bench --dry-run` (issue 22): a real case worker is
started per planned run, as a run starts it, and the plan is printed; nothing is measured and nothing
is written under data/ (no shard, no runs row, no journal). Exit 1 when a planned run cannot start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import beside
from tests.conftest import REPO_ROOT

# One active case per framework, copied with the harness conftest into a scratch checkout.
CASES = {"jax": "numpy_add", "torch": "argsort", "tensorflow": "cast"}
CLI = ["nice", "-n", "19", sys.executable, "-m", "portability_data.cli"]


def make_checkout(root: Path) -> Path:
    (root / "cases").mkdir(parents=True)
    shutil.copy(REPO_ROOT / "cases" / "conftest.py", root / "cases" / "conftest.py")
    for framework, slug in CASES.items():
        (root / "cases" / framework).mkdir()
        for name in (f"{slug}.yaml", f"test_{slug}.py"):
            shutil.copy(REPO_ROOT / "cases" / framework / name, root / "cases" / framework / name)
    shutil.copy(REPO_ROOT / "params.yaml", root / "params.yaml")
    return root


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path / "checkout")


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under the checkout with its size and modification time."""
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted(root.rglob("*"))
    }


def portability(checkout: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], cwd=checkout, capture_output=True, text=True, check=False, timeout=600
    )


def jax_cpu_model() -> str:
    """The device model the JAX worker reports on this machine's CPU (the harness's own answer)."""
    code = "from portability_data.runner.harness import backend_for; print(backend_for('jax').describe())"
    env = {**os.environ, "PORTABILITY_DEVICE": "cpu", "PORTABILITY_MODE": "eager"}
    return subprocess.check_output([sys.executable, "-c", code], text=True, env=env).strip()


def test_run_dry_run_plans_one_case_on_the_cpu_and_writes_nothing(checkout: Path) -> None:
    before = snapshot(checkout)
    done = portability(checkout, "run", "--framework", "jax", "--device", "cpu", "--dry-run",
                       "--cases", "jax.numpy.add")  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    [line] = [line for line in done.stdout.splitlines() if line.startswith("jax/cpu/eager: ready")]
    assert f"device model {jax_cpu_model()!r}" in line, line
    assert "1 case x 3 repeats" in line and "jax 0." in line and "timer floor" in line, line
    assert not (checkout / "data").exists()
    assert snapshot(checkout) == before


def test_run_dry_run_on_an_absent_gpu_says_why_and_exits_1(checkout: Path) -> None:
    before = snapshot(checkout)
    done = portability(checkout, "run", "--framework", "jax", "--device", "gpu", "--dry-run",
                       "--cases", "jax.numpy.add")  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    [line] = [line for line in done.stdout.splitlines() if "UNREACHABLE" in line]
    assert line.startswith("jax/gpu/eager: UNREACHABLE: jax cannot run on gpu here: ")
    assert "DeviceUnavailableError" in line and "what to do:" in line and "nvidia-smi" in line, line
    assert "1 of them cannot start" in done.stdout
    assert not (checkout / "data").exists() and snapshot(checkout) == before


def test_dry_run_does_not_go_with_resume(checkout: Path) -> None:
    done = portability(checkout, "run", "--framework", "jax", "--dry-run", "--resume", "jax-cpu-eager-x")
    assert done.returncode != 0 and "does not go with --resume" in done.stderr
    assert not (checkout / "data").exists()


def bench_dry_run_job(folder: Path) -> beside.Job:
    """A checkout, what is in it before, and the bench's dry run in it (a worker per framework:
    ~15 s), beside the suite."""
    checkout = make_checkout(folder / "checkout")
    (folder / "before.json").write_text(json.dumps(snapshot(checkout)))
    return beside.Job([[*CLI, "bench", "--dry-run", "--profile", "quick"]], cwd=checkout)


BESIDE = {
    "bench-dry-run": (bench_dry_run_job, ["test_bench_dry_run_plans_every_framework_and_writes_nothing"])
}


def test_bench_dry_run_plans_every_framework_and_writes_nothing(tmp_path: Path) -> None:
    done = beside.finished("bench-dry-run", bench_dry_run_job, tmp_path)
    checkout = done.folder / "checkout"
    before = {
        path: tuple(seen) for path, seen in json.loads((done.folder / "before.json").read_text()).items()
    }
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    for framework in CASES:
        assert f"{framework}: devices found: cpu" in done.stdout, output
        [line] = [line for line in done.stdout.splitlines() if line.startswith(f"{framework}/cpu/eager: ")]
        assert "ready: device model " in line and "1 case x 1 repeat " in line, line
    assert "dry run: 3 run(s) planned, can start here" in done.stdout, output
    assert not (checkout / "data").exists()
    assert snapshot(checkout) == before
