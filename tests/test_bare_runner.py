"""The promise of the runner layer, kept by CI: a machine with only the light core and one framework
(no pipeline extra: no pandas, pandera, DVC, datasets, matplotlib) runs the benchmark.

A fresh venv gets this repository without extras plus JAX (pinned as in the `frameworks` extra),
then `portability run` measures two cases there. The install uses the package registry, as CI's own
install does (pip's cache makes it a local copy after the first time), beside the suite from the
session's start (tests/beside.py).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests import beside

CASES = {"numpy_add": "jax.numpy.add", "nn_one_hot": "jax.nn.one_hot"}
PIPELINE_ONLY = ("pandas", "pandera", "dvc", "datasets", "matplotlib")
REPO_ROOT = Path(__file__).resolve().parents[1]


def framework_pin(repo_root: Path, name: str) -> str:
    """The requirement of one framework as the `frameworks` extra pins it."""
    extras = tomllib.loads((repo_root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for requirement in extras["frameworks"]:
        if re.match(rf"{name}\b", requirement):
            return requirement
    raise AssertionError(f"pyproject.toml: no {name} in the frameworks extra")


def bare_venv_job(base: Path) -> beside.Job:
    """A copy of what a wheel is built from (the build leaves the checkout alone), and the commands
    that make the venv and install it with the pinned jax there."""
    source = base / "source"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(REPO_ROOT / "src", source / "src", ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, source / name)
    venv = base / "venv"
    install = [str(venv / "bin" / "pip"), "install", "-q", str(source), framework_pin(REPO_ROOT, "jax")]
    return beside.Job([[sys.executable, "-m", "venv", str(venv)], install], cwd=base)


# The venv is built beside the suite (a minute where pip's cache is cold).
BESIDE = {"bare-venv": (bare_venv_job, ["bare_venv"])}


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    built = beside.finished("bare-venv", bare_venv_job, tmp_path_factory.mktemp("bare"))
    assert built.returncode == 0, f"installing the light core + jax failed:\n{built.stderr[-3000:]}"
    return built.folder / "venv"


def test_the_bare_venv_has_the_light_core_and_no_pipeline(bare_venv: Path) -> None:
    names = (*PIPELINE_ONLY, "jax", "pyarrow", "pytest")
    code = f"import importlib.util as u,json;print(json.dumps({{m: bool(u.find_spec(m)) for m in {names}}}))"
    found = json.loads(subprocess.check_output([str(bare_venv / "bin" / "python"), "-c", code], text=True))
    assert not any(found[name] for name in PIPELINE_ONLY), found
    assert found["jax"] and found["pyarrow"] and found["pytest"], found


def bare_checkout(repo_root: Path, where: Path) -> Path:
    """A checkout holding only the two cases (and the params the bench reads its profiles from)."""
    checkout = where / "checkout"
    (checkout / "cases" / "jax").mkdir(parents=True)
    shutil.copy(repo_root / "cases" / "conftest.py", checkout / "cases" / "conftest.py")
    shutil.copy(repo_root / "params.yaml", checkout / "params.yaml")
    for name in CASES:
        for file in (f"{name}.yaml", f"test_{name}.py"):
            shutil.copy(repo_root / "cases" / "jax" / file, checkout / "cases" / "jax" / file)
    return checkout


def portability(bare_venv: Path, checkout: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bare_venv / "bin" / "portability"), *args],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def test_portability_run_measures_two_cases_on_a_bare_machine(
    bare_venv: Path, repo_root: Path, tmp_path: Path
) -> None:
    checkout = bare_checkout(repo_root, tmp_path)
    done = portability(
        bare_venv, checkout, "run", "--framework", "jax", "--repeats", "1", "--cases", *CASES.values()
    )
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.strip().splitlines()[-1]
    shards = list((checkout / "data" / "results").rglob(f"{run_id}.parquet"))
    assert len(shards) == 1, shards
    rows = pq.read_table(shards[0], columns=["case_id", "outcome", "device"]).to_pylist()
    assert {row["case_id"] for row in rows} == set(CASES.values())
    assert {row["device"] for row in rows} == {"cpu"}
    assert all(row["outcome"] == "passed" for row in rows), [r for r in rows if r["outcome"] != "passed"]
    assert list((checkout / "data" / "runs").rglob(f"{run_id}.parquet")), "no runs row beside the shard"


def test_a_contributor_measures_and_packages_a_bare_machine(
    bare_venv: Path, repo_root: Path, tmp_path: Path
) -> None:
    """Issue 22's two commands on a device machine without the pipeline extra: `portability bench`
    (every device JAX finds here, the quick profile) and `portability submission package`, whose
    folder holds each run's shard and runs row byte for byte and the system description."""
    checkout = bare_checkout(repo_root, tmp_path)
    bench = portability(bare_venv, checkout, "bench", "--frameworks", "jax")
    assert bench.returncode == 0, bench.stdout + bench.stderr
    assert "jax: devices found: cpu" in bench.stderr, bench.stderr
    runs = sorted((checkout / "data" / "runs" / "local").glob("*.parquet"))
    assert len(runs) == 1, runs  # the quick profile: one setting (cpu, eager)
    run_id = runs[0].stem
    packed = portability(bare_venv, checkout, "submission", "package", run_id, "--out", "submission")
    assert packed.returncode == 0, packed.stdout + packed.stderr
    folder = checkout / "submission"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        f"chain/local/{run_id}.chain.json",  # the journal's chain, sealed by the bare runner too
        f"chain/local/{run_id}.worker.log",  # the worker log the chain seals
        f"results/local/{run_id}.parquet",
        f"runs/local/{run_id}.parquet",
        "system.json",
    ]
    for table in ("results", "runs"):
        original = checkout / "data" / table / "local" / f"{run_id}.parquet"
        assert (folder / table / "local" / f"{run_id}.parquet").read_bytes() == original.read_bytes()
    system = json.loads((folder / "system.json").read_text())
    assert [d["device"] for d in system["devices"]] == ["cpu"], system["devices"]
    assert {f["framework"] for f in system["frameworks"]} == {"jax"}, system["frameworks"]
