"""Persistent compile caches for re-runs (issue 57): where they live, the environment that turns
them on in a case worker, and what a runs row records of them.

A JAX eager census spends most of its time in XLA compiling each primitive for each shape and
dtype (benchmarks/bench_jax_eager_compiles.py), and so does torch_xla; a re-run of the same
entries compiles the same programs again. Both frameworks can keep compiled executables on disk,
and both read the switch from the environment, so the runner turns them on through the
environment it gives its workers (worker_process.worker_environment), never in the harness:

- JAX: `JAX_COMPILATION_CACHE_DIR`, with `JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0` and
  `JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=0` so that the small programs of eager primitive
  dispatch are kept too (JAX reads every `jax_*` option from the upper-cased environment
  variable; "Persistent compilation cache", https://docs.jax.dev/en/latest/persistent_compilation_cache.html;
  jax/_src/config.py, jax_compilation_cache_dir and jax_persistent_cache_min_*).
- torch_xla: `XLA_PERSISTENT_CACHE_PATH` and `XLA_PERSISTENT_CACHE_READ_ONLY=0`, the two variables
  `torch_xla.runtime.initialize_cache(path, readonly)` sets (torch_xla 2.9, runtime.py); they must
  be set before the first computation, which a worker's environment is. Off unless asked for
  (PORTABILITY_COMPILE_CACHE_XLA=on): torch_xla 2.9 writes the cache but cannot load it back. On
  PJRT's CPU backend a second run of the same graph counts PersistentCacheDeserializeFailure, not
  PersistentCacheHit (tried here, issue 57); on TPU the load is UNIMPLEMENTED (pytorch/xla#9094,
  open at 2.9) and on GPU it fails too (pytorch/xla#8930). And where it loads, a hit would change
  data: the xla path counts device_compiles from torch_xla's CompileTime metric
  (runner/devices/xla.py), which a program read from disk does not add to, so a warm run would
  record fewer compilations (and fewer recompiled subtests in the report) than a cold one. So it
  is for trying a torch_xla that loads its cache, never for a committed run; the runs row says.

A JAX cache changes no label and no column (no path counts JAX's XLA compilations; those that
count device_compiles count their own exports and builds): JAX keys an entry by the program, the
compile options, the backend and the jax/jaxlib versions; each cache folder here is also per
package versions and per CPU model, so a cache made by another build or machine is never read.

Off unless asked for. Measured on this project's JAX eager census (benchmarks/bench_compile_cache.py,
214 pairs, 2 quiet cores): no cache 262 s, an empty cache 292 s (writing every program costs 11%),
a warm re-run 222 s (0.76 of cold, 0.85 of no cache; the issue's target was 0.25). A cache saves a
re-run 15% and costs every first run 11%, and most census runs are first runs (a new jax/jaxlib
gets a new folder). `PORTABILITY_COMPILE_CACHE=on` (or `portability run --compile-cache`) puts it
under the XDG cache folder ($XDG_CACHE_HOME, else ~/.cache: portability/compile/),
`PORTABILITY_COMPILE_CACHE=<folder>` elsewhere; never in the repository or a shard.

One cache is on by default, because it holds no program of a case: jax2onnx's own plugins. Before
its first export, jax2onnx imports its ~150 plugin modules, which run JAX at import and compile
about 74 small programs: ~20-30 s of every JAX worker on the onnxruntime path, measurement or
confirmation (benchmarks/bench_confirmation_stages.py: 31.5 s of a 34 s confirmation). Those
programs are the same in every worker, and every worker compiles them before the function under
test, so a worker that reads them from disk holds the same executables when the case starts as one
that compiled them: a confirmation stays alone (nothing of an earlier case ran there). The cache is
on only while the plugins import (`jax_cache_scope`); the worker's own setting (off, or the census
cache above) is back before any case code compiles. It lives under the compile cache's root (XDG by
default, `PORTABILITY_COMPILE_CACHE=<folder>` moves it, and so does `PORTABILITY_PLUGIN_CACHE=<folder>`
for it alone), per jax, jaxlib and jax2onnx version and CPU model; `PORTABILITY_PLUGIN_CACHE=off`
turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
from collections.abc import Iterator, Mapping
from importlib import metadata
from pathlib import Path

CACHE_ENV = "PORTABILITY_COMPILE_CACHE"  # unset or "off": no cache; "on": under XDG; a folder: there
XLA_OPT_IN_ENV = "PORTABILITY_COMPILE_CACHE_XLA"  # "on": torch_xla's cache too (see the docstring)
PLUGIN_CACHE_ENV = (
    "PORTABILITY_PLUGIN_CACHE"  # a folder, or "off": jax2onnx's plugins compiled in each worker
)
OFF = "off"
ON = "on"
CENSUS_SUITE = "census"  # the suite whose runs use the cache by default (verdicts, no latencies)
XLA_DEVICES = ("xla", "tpu")  # torch on these runs through torch_xla
JAX_CACHE_MAX_BYTES = 4 * 2**30  # least recently read entries go past this (an eager primitive: ~4 KB)


def cache_root(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The root of the compile caches, or None when off (PORTABILITY_COMPILE_CACHE unset or off)."""
    chosen = environ.get(CACHE_ENV, "").strip()
    if not chosen or chosen.lower() == OFF:
        return None
    if chosen.lower() != ON:
        return Path(chosen).expanduser()
    return _xdg_root(environ)


def _xdg_root(environ: Mapping[str, str]) -> Path:
    xdg = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".cache")
    return Path(xdg) / "portability" / "compile"


def plugin_cache_root(environ: Mapping[str, str] = os.environ) -> Path | None:
    """The folder of jax2onnx's plugin caches (see the docstring): PORTABILITY_PLUGIN_CACHE where it
    names one, else under the compile caches' root, or the XDG one where that is unset or off;
    None where PORTABILITY_PLUGIN_CACHE is off."""
    chosen = environ.get(PLUGIN_CACHE_ENV, "").strip()
    if chosen.lower() == OFF:
        return None
    if chosen and chosen.lower() != ON:
        return Path(chosen).expanduser()
    return (cache_root(environ) or _xdg_root(environ)) / "jax2onnx_plugins"


def plugin_cache_dir(environ: Mapping[str, str] = os.environ) -> Path | None:
    """This build's plugin cache: per jax, jaxlib and jax2onnx version and CPU model; None: off."""
    root = plugin_cache_root(environ)
    return None if root is None else root / _versions("jax", "jaxlib", "jax2onnx") / _machine()


def plugin_cache_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """PORTABILITY_PLUGIN_CACHE for a worker, resolved here: a worker's HOME is its run's scratch
    folder and it gets no XDG variable, so it could not find the user's cache folder itself."""
    root = plugin_cache_root(environ)
    return {PLUGIN_CACHE_ENV: OFF if root is None else str(root)}


@contextlib.contextmanager
def jax_cache_scope(folder: Path | None) -> Iterator[None]:
    """JAX's persistent compilation cache in `folder` (every program kept, however small or quick)
    for what runs inside, and the process's own cache options back afterwards, with JAX's cache
    object reset on both sides so that it is re-read from the options in force. None: nothing
    changes."""
    if folder is None:
        yield
        return
    import jax
    from jax.experimental.compilation_cache import compilation_cache

    folder.mkdir(parents=True, exist_ok=True)
    options = {
        "jax_compilation_cache_dir": str(folder),
        "jax_persistent_cache_min_compile_time_secs": 0,
        "jax_persistent_cache_min_entry_size_bytes": 0,
        "jax_enable_compilation_cache": True,
    }
    before = {name: getattr(jax.config, name) for name in options}
    compilation_cache.reset_cache()
    try:
        for name, value in options.items():
            jax.config.update(name, value)
        yield
    finally:
        for name, value in before.items():
            jax.config.update(name, value)
        compilation_cache.reset_cache()


def _versions(*packages: str) -> str:
    found = []
    for package in packages:
        try:
            found.append(f"{package}-{metadata.version(package)}")
        except metadata.PackageNotFoundError:
            found.append(f"{package}-none")
    return "_".join(found)


def _machine() -> str:
    """A short digest of the CPU model: XLA's CPU code is built for the host's instruction set."""
    from portability_data.runner.backends import cpu_model

    return hashlib.sha256(cpu_model().encode()).hexdigest()[:12]


def cache_kind(framework: str, device: str) -> str | None:
    """Which persistent cache a (framework, device) worker can use: jax, torch_xla, or None."""
    if framework == "jax":
        return "jax"
    if framework == "torch" and device in XLA_DEVICES:
        return "torch_xla"
    return None


def cache_dir(
    framework: str, device: str, environ: Mapping[str, str] = os.environ, suite: str = "census"
) -> Path | None:
    """The folder this (framework, device)'s workers cache compiled programs in; None: no cache.
    A curated run times its calls, and the first call of an eager JAX primitive includes its
    compile: read from disk, that latency would change with the cache's state, so curated runs
    use a cache only where PORTABILITY_COMPILE_CACHE names a folder, never with a plain "on" (census
    runs keep verdicts only)."""
    root, kind = cache_root(environ), cache_kind(framework, device)
    if root is None or kind is None:
        return None
    if suite != CENSUS_SUITE and environ.get(CACHE_ENV, "").strip().lower() == ON:
        return None
    if kind == "torch_xla" and environ.get(XLA_OPT_IN_ENV, "").strip().lower() != "on":
        return None
    packages = ("jax", "jaxlib") if kind == "jax" else ("torch", "torch_xla")
    return root / kind / _versions(*packages) / _machine()


def cache_environment(
    framework: str, device: str, environ: Mapping[str, str] = os.environ, suite: str = "census"
) -> dict[str, str]:
    """The variables that turn the cache on in a worker (empty: off, or no cache for this path)."""
    folder = cache_dir(framework, device, environ, suite)
    if folder is None:
        return {}
    folder.mkdir(parents=True, exist_ok=True)
    if cache_kind(framework, device) == "jax":
        env = {
            "JAX_COMPILATION_CACHE_DIR": str(folder),
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
        }
        if importlib.util.find_spec("filelock") is not None:
            # a size bound turns on JAX's LRU eviction, which holds a file lock around every read and
            # write (jax/_src/lru_cache.py): census workers side by side (--jobs 2) never read an
            # entry another is still writing; without filelock JAX refuses a bound, so none is set
            env["JAX_COMPILATION_CACHE_MAX_SIZE"] = str(JAX_CACHE_MAX_BYTES)
        return env
    return {"XLA_PERSISTENT_CACHE_PATH": str(folder), "XLA_PERSISTENT_CACHE_READ_ONLY": "0"}


def cache_record(
    framework: str, device: str, environ: Mapping[str, str] = os.environ, suite: str = "census"
) -> str | None:
    """What the runs row says (runs.build's compile_cache): the cache folder, "off", or None where
    the path has no persistent cache. A resumed run records the setting it finished with."""
    if cache_kind(framework, device) is None:
        return None
    folder = cache_dir(framework, device, environ, suite)
    return OFF if folder is None else str(folder)
