"""jax2onnx's plugin programs from a cache (issue 57): JAX's persistent cache on only while the
plugins import, the worker's own cache setting back before any case compiles, and the same labels
from a worker that compiled the plugins and one that read them back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from portability_data.runner import compile_cache
from portability_data.runner.spec import Paths, RunSpec
from portability_data.runner.supervisor import run
from portability_data.runner.worker_process import worker_environment
from tests.conftest import REPO_ROOT, census_checkout

# One process: a program compiled inside the scope (the plugins' stand-in), then one outside it
# (a case's). It prints how many cache hits each had, and the cache folder JAX uses afterwards.
SCOPED = """
import json, sys
from pathlib import Path
import numpy as np
import jax, jax.numpy as jnp
from portability_data.runner.compile_cache import jax_cache_scope

hits = []
jax.monitoring.register_event_listener(
    lambda name, **kw: hits.append(name) if name == "/jax/compilation_cache/cache_hits" else None
)
with jax_cache_scope(Path(sys.argv[1])):
    jax.jit(lambda x: jnp.tanh(x) * 2.5 + 1.0)(np.ones(6, np.float32)).block_until_ready()
inside = len(hits)
jax.jit(lambda x: jnp.sinh(x) - 0.75)(np.ones(6, np.float32)).block_until_ready()
print(json.dumps({"inside": inside, "outside": len(hits) - inside,
                  "after": jax.config.jax_compilation_cache_dir}))
"""


def entries(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.rglob("*-cache")} if folder.exists() else {}


def scoped(plugins: Path, worker_cache: Path | None) -> dict:
    env = {"PYTHONPATH": str(REPO_ROOT / "src"), "PATH": "/usr/bin:/bin", "JAX_PLATFORMS": "cpu"}
    if worker_cache is not None:  # the census compile cache a worker may run with (compile_cache.py)
        env |= {
            "JAX_COMPILATION_CACHE_DIR": str(worker_cache),
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        }
    out = subprocess.run(
        [sys.executable, "-c", SCOPED, str(plugins)], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_scope_keeps_only_what_runs_inside_it_and_reads_it_back(tmp_path: Path) -> None:
    """Cold: the program inside the scope is written to the plugin folder, the one after it is not
    (no cache: the worker had none). Warm: the inside program is read back (a cache hit), the one
    after it still compiles with no cache. With a worker cache of its own (the census's), the
    program after the scope goes there, as it would without the scope."""
    plugins = tmp_path / "plugins"
    cold = scoped(plugins, None)
    written = entries(plugins)
    assert (cold["inside"], cold["outside"], cold["after"]) == (0, 0, None) and len(written) == 1
    warm = scoped(plugins, None)
    assert (warm["inside"], warm["outside"]) == (1, 0) and entries(plugins) == written
    census = tmp_path / "census"
    beside = scoped(plugins, census)
    assert beside["after"] == str(census) and beside["inside"] == 1
    assert entries(plugins) == written and len(entries(census)) == 1  # the case's program, not the plugins'


def test_the_plugin_cache_follows_the_compile_caches_root_and_turns_off(tmp_path: Path) -> None:
    environ = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    folder = compile_cache.plugin_cache_dir(environ)
    assert folder is not None and folder.is_relative_to(tmp_path / "xdg" / "portability" / "compile")
    assert "jax2onnx-" in folder.parent.name and "jaxlib-" in folder.parent.name  # versions in the key
    named = compile_cache.plugin_cache_dir({**environ, "PORTABILITY_COMPILE_CACHE": str(tmp_path / "here")})
    assert named is not None and named.is_relative_to(tmp_path / "here")
    alone = compile_cache.plugin_cache_dir({**environ, "PORTABILITY_PLUGIN_CACHE": str(tmp_path / "mine")})
    assert alone is not None and alone.is_relative_to(tmp_path / "mine")
    assert compile_cache.plugin_cache_dir({**environ, "PORTABILITY_PLUGIN_CACHE": "off"}) is None
    assert not folder.is_relative_to(REPO_ROOT)


def test_a_worker_is_told_the_folder_its_runner_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's HOME is the run's scratch folder and it gets no XDG variable: the runner resolves
    the plugin cache's folder and hands it over, so workers of every run share the user's one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("PORTABILITY_COMPILE_CACHE", raising=False)
    spec = RunSpec(framework="jax", device="onnxruntime", mode="compiled", suite="census")
    env = worker_environment(spec, Paths.under(REPO_ROOT), tmp_path / "scratch", 3)
    assert "XDG_CACHE_HOME" not in env and env["HOME"] == str(tmp_path / "scratch")
    assert compile_cache.plugin_cache_dir(env) == compile_cache.plugin_cache_dir()
    assert compile_cache.plugin_cache_dir(env).is_relative_to(tmp_path / "xdg")
    monkeypatch.setenv("PORTABILITY_PLUGIN_CACHE", "off")
    off = worker_environment(spec, Paths.under(REPO_ROOT), tmp_path / "scratch", 3)
    assert compile_cache.plugin_cache_dir(off) is None


def labels(paths: Paths, run_id: str) -> dict[str, tuple]:
    table = pq.read_table(paths.results_dir / "portability" / f"{run_id}.parquet").to_pandas()
    columns = ["outcome", "error_type", "confirmation", "samples", "samples_failed", "oracle"]
    return {row.subtest: tuple(getattr(row, c) for c in columns) for row in table.itertuples()}


def test_a_jax_onnxruntime_census_gives_the_same_labels_cold_and_warm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real jax2onnx and ONNX Runtime, the real runner: the first run's worker compiles the plugins'
    programs into a fresh plugin cache; the second run's workers (and the first run's confirmation)
    read them back and add none; every label, a failure confirmed alone included, is the same."""
    monkeypatch.setenv("PORTABILITY_COMPILE_CACHE", str(tmp_path / "cache"))
    folder = compile_cache.plugin_cache_dir()
    assert folder is not None and not entries(folder)
    root = census_checkout(
        tmp_path / "repo", "jax", {"numpy": {"add": ["float32"], "linalg.eigvals": ["float32"]}}
    )
    paths = Paths.under(root)
    spec = RunSpec(
        framework="jax", device="onnxruntime", mode="compiled", repeats=1, timeout_s=300, suite="census"
    )
    cold = run(spec, paths, log=lambda message: None)
    written = entries(folder)
    assert written
    warm = run(spec, paths, log=lambda message: None)
    assert entries(folder) == written
    assert labels(paths, warm) == labels(paths, cold)
    first = labels(paths, cold)
    assert first["test_entry[add-float32]"][0] == "passed"
    assert first["test_entry[linalg.eigvals-float32]"][:3] == ("failed", "ExportError", "confirmed")
    facts = json.loads(
        pq.read_table(paths.runs_dir / "portability" / f"{warm}.parquet").to_pylist()[0]["build"]
    )
    assert json.dumps(str(folder)) in json.dumps(facts)  # the runs row says where the plugins came from
