"""Install benchmark: what pip's byte-compiling of the environment costs, against what a run of ours
compiles on first import when the install skips it (`pip install --no-compile`, the README's two
commands and CI's three environments since issue 57), measured in the same run on the same files.

pip compiles every `.py` file it installs (28,600 files of `.[all]` at 2026-12-07), one at a time,
before the suite can start; a run imports a part of them, which Python then compiles once and
caches. Both arms write their bytecode under fresh PYTHONPYCACHEPREFIX folders, so the environment's
own `__pycache__` folders are neither read nor changed:

- at install: `python -m compileall -q -j1 <site-packages>` (pip's work, one process);
- on first import: one interpreter importing the frameworks and our code with an empty cache
  (cold), then again with the cache it wrote (warm); the compiling is cold minus warm.

CPU seconds (user + system of the child processes) are the measure: on a shared machine they hold
where wall time does not. The ratio is first import / at install.

Usage: python benchmarks/bench_install_compile.py [--site-packages DIR] [--imports a,b,...]
    [--out benchmarks/results/bench_install_compile.json]
Prints both arms and their ratio, and writes the JSON.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# What the suite and a run import: the frameworks, the export paths' packages, the pipeline's.
IMPORTS = (
    "torch",
    "tensorflow",
    "jax.numpy",
    "onnx",
    "onnxruntime",
    "onnxscript",
    "openvino",
    "executorch.exir",
    "iree.compiler",
    "iree.runtime",
    "iree.turbine.aot",
    "ai_edge_litert.interpreter",
    "pandas",
    "pyarrow.parquet",
    "pandera",
    "datasets",
    "dvc.api",
    "matplotlib.pyplot",
    "portability_data.cli",
)


def children_cpu() -> float:
    """User + system CPU seconds of every child process waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(command: list[str], prefix: Path) -> dict[str, float]:
    """CPU and wall seconds of one child process writing its bytecode under `prefix`."""
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both arms must write what they compile
    cpu, began = children_cpu(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = {"cpu_s": children_cpu() - cpu, "wall_s": time.perf_counter() - began}
    if command[1] == "-c" and done.returncode != 0:  # an import arm must import everything it names
        sys.exit(f"the import arm failed:\n{done.stderr[-3000:]}")
    return seconds


def source_files(folder: Path, suffix: str = ".py") -> tuple[int, int]:
    """(count, bytes) of the files named *suffix under `folder`."""
    sizes = [path.stat().st_size for path in folder.rglob(f"*{suffix}") if path.is_file()]
    return len(sizes), sum(sizes)


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--site-packages", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    parser.add_argument("--imports", default=",".join(IMPORTS), help="modules the import arm imports")
    out = REPO / "benchmarks" / "results" / "bench_install_compile.json"
    parser.add_argument("--out", type=Path, default=out)
    args = parser.parse_args()
    wanted = [name for name in args.imports.split(",") if name]
    present = [name for name in wanted if importlib.util.find_spec(name.split(".")[0]) is not None]
    missing = sorted(set(wanted) - set(present))
    if not present:
        sys.exit(f"none of the modules to import is installed here: {wanted}")
    statement = "; ".join(f"import {name}" for name in present)
    with tempfile.TemporaryDirectory(prefix="bench-compile-") as scratch:
        at_install = measured(
            [sys.executable, "-m", "compileall", "-q", "-j1", str(args.site_packages)], Path(scratch, "all")
        )
        cold = measured([sys.executable, "-c", statement], Path(scratch, "imports"))
        warm = measured([sys.executable, "-c", statement], Path(scratch, "imports"))
        compiled_on_import = source_files(Path(scratch, "imports"), ".pyc")
    files, size = source_files(args.site_packages)
    on_import = {key: cold[key] - warm[key] for key in ("cpu_s", "wall_s")}
    result = {
        "site_packages": str(args.site_packages),
        "py_files": files,
        "py_mb": round(size / 1e6, 1),
        "imports": present,
        "not_installed": missing,
        "at_install": at_install,
        "first_import_cold": cold,
        "first_import_warm": warm,
        "on_import": on_import,
        "bytecode_files_written_on_import": compiled_on_import[0],
        "cpu_ratio_on_import_to_at_install": on_import["cpu_s"] / at_install["cpu_s"],
        "cpu_s_saved": at_install["cpu_s"] - on_import["cpu_s"],
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }
    print(
        f"{files:,} .py files ({size / 1e6:.0f} MB): at install {at_install['cpu_s']:.1f} s CPU; on first "
        f"import of {len(present)} modules {on_import['cpu_s']:.1f} s CPU (cold {cold['cpu_s']:.1f} - warm "
        f"{warm['cpu_s']:.1f}); ratio {result['cpu_ratio_on_import_to_at_install']:.2f}, "
        f"{result['cpu_s_saved']:.1f} s CPU saved"
    )
    if missing:
        print(f"not installed here, not imported: {', '.join(missing)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    temporary = args.out.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(result, indent=2) + "\n")
    temporary.replace(args.out)


if __name__ == "__main__":
    main()
