"""What the budgeted device bench (runner/budget_bench.py) says before and after it runs: the package
check of the machine (which frameworks import, their versions, whether the device is visible, and
what to do about what is missing), and the summary of what it measured (per part: its runs, their
status, outcome counts, the framework versions that ran, set against the project's pins).

Light like the runner: each framework is asked in a child interpreter (this process never imports
one), the shards are read with pyarrow.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from portability_data.runner.spec import Paths

# Printed by a child per framework: its version and what it sees of the accelerators. For torch the
# CUDA build (torch.version.cuda: None on a CPU wheel) and the device; for JAX the jaxlib version,
# the installed CUDA plugin (jax_cuda12_plugin / jax_cuda13_plugin) and the gpu backend's devices.
_ASK = {
    "torch": (
        "import torch\n"
        "found = {'version': torch.__version__, 'cuda_build': torch.version.cuda,\n"
        "         'gpu_visible': torch.cuda.is_available()}\n"
        "if found['gpu_visible']: found['gpu'] = torch.cuda.get_device_name(0)\n"
    ),
    "jax": (
        "import importlib.util, jax, jaxlib\n"
        "found = {'version': jax.__version__, 'jaxlib': jaxlib.__version__,\n"
        "         'cuda_plugin': [m for m in ('jax_cuda13_plugin', 'jax_cuda12_plugin')\n"
        "                         if importlib.util.find_spec(m)]}\n"
        "try:\n"
        "    found['gpu'] = [d.device_kind for d in jax.devices('gpu')]\n"
        "    found['gpu_visible'] = bool(found['gpu'])\n"
        "except RuntimeError as exc:\n"
        "    found['gpu_visible'], found['gpu_problem'] = False, str(exc).splitlines()[0][:200]\n"
    ),
}
FIX = {
    "torch": "install a CUDA build of torch (the lent machine's image has torch 2.11.0+cu130)",
    "jax": "install jax with its CUDA plugin (jax[cuda13]; the lent machine's image has jax 0.11.2)",
}


def ask_framework(framework: str, python: str = sys.executable) -> dict[str, Any]:
    """The framework's facts here, or {'missing': why} when it does not import."""
    code = _ASK[framework] + "import json; print(json.dumps(found))\n"
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=False, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"missing": f"could not be asked ({exc})"}
    if done.returncode != 0:
        return {"missing": (done.stderr.strip().splitlines() or ["no output"])[-1][:300]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def package_check(frameworks: tuple[str, ...], device: str) -> tuple[list[str], bool]:
    """(lines, ready): per framework its version and whether it sees the device (gpu: the GPU; cpu
    always), and for what is missing what to do. Ready when every framework can run on the device."""
    lines, ready = [], True
    for framework in frameworks:
        found = ask_framework(framework)
        if "missing" in found:
            ready = False
            lines.append(f"{framework}: MISSING: does not import ({found['missing']}); {FIX[framework]}")
            continue
        facts = ", ".join(f"{k} {v}" for k, v in sorted(found.items()) if k not in ("gpu_visible", "version"))
        visible = device == "cpu" or bool(found.get("gpu_visible"))
        ready = ready and visible
        state = "sees the device" if visible else f"NO {device.upper()} visible: {FIX[framework]}"
        lines.append(f"{framework} {found['version']}: {state} ({facts})")
    return lines, ready


def pinned_versions(repo_root: Path) -> dict[str, str]:
    """The framework versions the project pins (pyproject.toml's frameworks extra): what the
    committed CPU runs ran, to say when a device run's versions are not theirs."""
    try:
        extras = tomllib.loads((repo_root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return {}
    pins = {}
    for requirement in extras.get("frameworks", []):
        match = re.match(r"([A-Za-z_]+)(?:\[[^\]]*\])?==(\S+)", requirement)
        if match:
            pins[match.group(1)] = match.group(2)
    return pins


def _version_only(version: str) -> str:
    return version.split("+", 1)[0]


def summarize(state: dict[str, Any], paths: Paths, source: str) -> dict[str, Any]:
    """Per part: its status, and per run its status, rows, outcome counts, framework version and
    device model as the runs row and shard record them; and the versions against the pins."""
    pins = pinned_versions(paths.repo_root)
    parts: list[dict[str, Any]] = []
    versions: dict[str, Any] = {}
    for label, entry in state.get("parts", {}).items():
        runs = []
        for run_id in entry.get("run_ids", []):
            runs_row = paths.runs_dir / source / f"{run_id}.parquet"
            shard = paths.results_dir / source / f"{run_id}.parquet"
            if not (runs_row.is_file() and shard.is_file()):
                continue
            row = pq.read_table(runs_row).to_pylist()[0]
            outcomes = Counter(pq.read_table(shard, columns=["outcome"]).column("outcome").to_pylist())
            versions.setdefault(row["framework"], row["framework_version"])
            runs.append(
                {
                    "run_id": run_id,
                    "status": row["status"],
                    "rows": row["n_results"],
                    "outcomes": dict(sorted(outcomes.items())),
                    "framework_version": row["framework_version"],
                    "device_model": row["device_model"],
                    "seconds": round((row["finished_at"] - row["started_at"]).total_seconds(), 1),
                }
            )
        parts.append({"part": label, "status": entry.get("status"), "runs": runs})
    like = []
    for framework, version in sorted(versions.items()):
        pin = pins.get(framework)
        if pin is None or _version_only(version) == _version_only(pin):
            like.append(f"{framework} {version}: the version of the project's committed runs")
        else:
            like.append(
                f"{framework} {version} here, {pin} in the project's committed runs: set beside them, "
                "these rows compare two versions as well as two devices"
            )
    return {
        "device": state.get("device"),
        "source": source,
        "calls": state.get("calls", []),
        "parts": parts,
        "versions": like,
    }


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as a person reads it (also written as summary.md beside summary.json)."""
    lines = [f"# Budgeted bench of device {summary['device']} (source {summary['source']})", ""]
    for call in summary["calls"]:
        lines.append(
            f"- call at {call['started_at']}: budget {call['budget_s']:.0f} s, "
            f"{call.get('elapsed_s', '?')} s used, parts run: "
            + (", ".join(f"{r['part']} {r['status']}" for r in call["ran"]) or "none")
        )
    lines.append("")
    for part in summary["parts"]:
        lines.append(f"## {part['part']}: {part['status']}")
        for run in part["runs"]:
            counts = ", ".join(f"{k} {v}" for k, v in run["outcomes"].items())
            lines.append(
                f"- {run['run_id']} ({run['status']}, {run['seconds']} s, {run['device_model']}, "
                f"{run['framework_version']}): {run['rows']} rows: {counts}"
            )
    lines += ["", "## Versions", *[f"- {line}" for line in summary["versions"]]]
    return lines


def write_summary(out: Path, state: dict[str, Any], paths: Paths, source: str) -> list[str]:
    """summary.json and summary.md in the output folder (atomic); returns the summary's lines."""
    from portability_data.tables.atomic import atomic_write_bytes

    summary = summarize(state, paths, source)
    lines = summary_lines(summary)
    atomic_write_bytes(
        Path(out) / "summary.json", (json.dumps(summary, indent=2, default=str) + "\n").encode()
    )
    atomic_write_bytes(Path(out) / "summary.md", ("\n".join(lines) + "\n").encode())
    return lines
