"""Compile caches for re-runs (issue 57): the runner turns JAX's and torch_xla's persistent caches
on through its workers' environment, outside the repository, records the cache in the runs row,
and a warm re-run reads every compiled program back without changing a label."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from portability_data.runner import compile_cache
from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run
from portability_data.runner.worker_process import worker_environment
from tests.conftest import REPO_ROOT, census_checkout

JAX_VARIABLES = {
    "JAX_COMPILATION_CACHE_DIR",
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
    "JAX_COMPILATION_CACHE_MAX_SIZE",
}


def test_the_cache_is_off_unless_asked_for(tmp_path: Path) -> None:
    """benchmarks/bench_compile_cache.py: filling the cache costs a first run more than a re-run saves."""
    environ = {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    assert compile_cache.cache_root(environ) is None
    assert compile_cache.cache_dir("jax", "cpu", environ) is None
    assert compile_cache.cache_environment("jax", "cpu", environ) == {}
    assert compile_cache.cache_record("jax", "cpu", environ) == "off"
    assert compile_cache.cache_root({**environ, "PORTABILITY_COMPILE_CACHE": "off"}) is None
    assert compile_cache.cache_root({**environ, "PORTABILITY_COMPILE_CACHE": "on"}) is not None


def test_the_cache_lives_under_xdg_per_framework_build_and_machine(tmp_path: Path) -> None:
    environ = {
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "HOME": str(tmp_path / "home"),
        "PORTABILITY_COMPILE_CACHE": "on",
    }
    folder = compile_cache.cache_dir("jax", "cpu", environ)
    assert folder is not None and folder.is_relative_to(tmp_path / "xdg" / "portability" / "compile" / "jax")
    assert "jax-" in folder.parent.name and "jaxlib-" in folder.parent.name  # versions in the key
    home_only = {"HOME": str(tmp_path / "home"), "PORTABILITY_COMPILE_CACHE": "On"}
    assert compile_cache.cache_root(home_only) == tmp_path / "home" / ".cache" / "portability" / "compile"
    assert compile_cache.cache_root({**environ, "PORTABILITY_COMPILE_CACHE": str(tmp_path / "here")}) == (
        tmp_path / "here"
    )
    assert compile_cache.cache_dir("torch", "xla", environ) is None  # torch_xla 2.9 cannot load it back
    xla = compile_cache.cache_dir("torch", "xla", {**environ, "PORTABILITY_COMPILE_CACHE_XLA": "on"})
    assert xla is not None and xla.is_relative_to(tmp_path / "xdg" / "portability" / "compile" / "torch_xla")


def test_each_path_gets_its_own_framework_variables_or_none(tmp_path: Path) -> None:
    environ = {"PORTABILITY_COMPILE_CACHE": str(tmp_path / "cache")}
    jax_env = compile_cache.cache_environment("jax", "cpu", environ)
    assert set(jax_env) == JAX_VARIABLES
    assert jax_env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0"  # eager primitives are kept too
    assert jax_env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] == "0"
    assert Path(jax_env["JAX_COMPILATION_CACHE_DIR"]).is_dir()
    assert compile_cache.cache_environment("torch", "xla", environ) == {}  # unless asked for
    assert compile_cache.cache_record("torch", "xla", environ) == "off"
    xla_env = compile_cache.cache_environment(
        "torch", "xla", {**environ, "PORTABILITY_COMPILE_CACHE_XLA": "on"}
    )
    assert set(xla_env) == {"XLA_PERSISTENT_CACHE_PATH", "XLA_PERSISTENT_CACHE_READ_ONLY"}
    assert xla_env["XLA_PERSISTENT_CACHE_READ_ONLY"] == "0"
    for framework, device in (("torch", "cpu"), ("tensorflow", "cpu")):  # no persistent cache there
        assert compile_cache.cache_environment(framework, device, environ) == {}
        assert compile_cache.cache_record(framework, device, environ) is None
    off = {"PORTABILITY_COMPILE_CACHE": "off"}
    assert compile_cache.cache_environment("jax", "cpu", off) == {}
    assert compile_cache.cache_record("jax", "cpu", off) == "off"
    assert compile_cache.cache_record("jax", "cpu", environ) == jax_env["JAX_COMPILATION_CACHE_DIR"]


def test_the_worker_environment_carries_the_cache_unless_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = Paths.under(REPO_ROOT)
    spec = RunSpec(framework="jax", device="cpu", suite="census")
    monkeypatch.setenv("PORTABILITY_COMPILE_CACHE", str(tmp_path / "cache"))
    env = worker_environment(spec, paths, tmp_path, 3)
    assert set(env) >= JAX_VARIABLES
    assert not Path(env["JAX_COMPILATION_CACHE_DIR"]).is_relative_to(REPO_ROOT)  # never in the repo
    monkeypatch.setenv("PORTABILITY_COMPILE_CACHE", "off")
    assert not JAX_VARIABLES & set(worker_environment(spec, paths, tmp_path, 3))


def test_a_curated_run_that_times_its_calls_reads_no_cache_unless_a_folder_is_named(tmp_path: Path) -> None:
    """An eager JAX call's first latency includes its XLA compile: a curated run (whose timings feed
    latencies) uses no cache with a plain "on", so its latency does not depend on the cache's state."""
    environ = {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "PORTABILITY_COMPILE_CACHE": "on"}
    assert compile_cache.cache_dir("jax", "cpu", environ, suite="census") is not None
    assert compile_cache.cache_dir("jax", "cpu", environ, suite="curated") is None
    assert compile_cache.cache_environment("jax", "cpu", environ, suite="curated") == {}
    assert compile_cache.cache_record("jax", "cpu", environ, suite="curated") == "off"
    named = {**environ, "PORTABILITY_COMPILE_CACHE": str(tmp_path / "chosen")}
    chosen = compile_cache.cache_dir("jax", "cpu", named, suite="curated")
    assert chosen is not None and chosen.is_relative_to(tmp_path / "chosen")


def statuses(paths: Paths, run_id: str) -> dict[str, tuple]:
    table = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pandas()
    columns = ["outcome", "error_type", "confirmation", "samples", "samples_failed", "oracle"]
    return {row.subtest: tuple(getattr(row, c) for c in columns) for row in table.itertuples()}


def build_facts(paths: Paths, run_id: str) -> dict:
    runs = pq.read_table(paths.runs_dir / "portability" / f"{run_id}.parquet").to_pylist()
    return json.loads(runs[0]["build"])


def test_a_warm_jax_census_rerun_reads_every_program_back_with_the_same_labels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real jax, real runner, the same small census subset twice on one fresh cache: the cold run
    writes the compiled programs, the warm one compiles nothing new (no entry added) and reads
    every entry it needs (JAX's LRU cache stamps an entry's -atime file on each read), and every
    label is the same, a confirmed failure (lu on float16) included."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("PORTABILITY_COMPILE_CACHE", str(cache))
    root = census_checkout(
        tmp_path / "repo", "jax", {"harnesses": {"lu": ["float16"]}, "numpy": {"add": ["float32", "int8"]}}
    )
    paths = Paths.under(root)
    spec = RunSpec(framework="jax", device="cpu", repeats=1, timeout_s=300, suite="census")
    cold = run(spec, paths, log=lambda message: None)
    entries = {p.name: p.stat().st_mtime_ns for p in cache.rglob("*-cache")}
    stamps = {p.name: p.read_bytes() for p in cache.rglob("*-atime")}
    assert entries and set(stamps) == {name.replace("-cache", "-atime") for name in entries}
    warm = run(spec, paths, log=lambda message: None)
    after = {p.name: p.stat().st_mtime_ns for p in cache.rglob("*-cache")}
    assert after == entries  # nothing compiled anew, nothing rewritten
    read_again = {name for name, stamp in stamps.items() if (cache_file(cache, name).read_bytes() != stamp)}
    assert read_again == set(stamps)  # every program of the cold run was read back by the warm one
    assert statuses(paths, warm) == statuses(paths, cold)
    assert statuses(paths, cold)["test_entry[lu-float16]"][:3] == (
        "failed",
        "NotImplementedError",
        "confirmed",
    )
    for run_id in (cold, warm):
        assert build_facts(paths, run_id)["compile_cache"] == compile_cache.cache_record(
            "jax", "cpu", os.environ
        )


def cache_file(cache: Path, name: str) -> Path:
    [path] = cache.rglob(name)
    return path
