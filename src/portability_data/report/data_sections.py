"""The report's sections that read data/ alone (the reproduction of the study's numbers, the
usage ranking, declared support, torch_xla's declared dtypes, the census with its heat map), and
the second process that builds them while build.run_report pools the results and builds the rest
(issue 57: about a third of the report's work, on a second core; same bytes either way).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

from portability_data.readings.frames import plain_frame
from portability_data.report.census import KINDS as CENSUS_STATUSES
from portability_data.report.census import census_section
from portability_data.report.census_figure import fig_census_status
from portability_data.report.declared_support import declared_section
from portability_data.report.declared_xla import torch_xla_section
from portability_data.report.inputs import primary_models
from portability_data.report.latency_figures import pair_scatters
from portability_data.report.render import Section
from portability_data.report.reproduction import reproduction_section
from portability_data.report.usage_ranking import ranking_section
from portability_data.tables.atomic import atomic_write_bytes
from portability_data.tables.tableio import read_table, reads_shared


def pair_figures(data_dir: Path) -> dict[str, bytes]:
    """The latency scatters of device pairs (latency_figures.pair_scatters), from the outcomes and
    latencies tables read as load_inputs reads them: the same primary models, the same bytes."""
    outcomes = plain_frame(read_table("outcomes", data_dir / "outcomes"))
    latencies = plain_frame(read_table("latencies", data_dir / "latencies"))
    drawn = {name: make() for name, make in pair_scatters(latencies, primary_models(outcomes, latencies))}
    return {name: data for name, data in drawn.items() if data is not None}


def data_sections(data_dir: Path) -> tuple[list[Section], dict[str, bytes], dict[str, Any]]:
    """The sections read from data_dir alone (reproduction, usage ranking, declared support, the
    census), in report order, with their figures and metrics, and the latency section's device-pair
    scatters (pair_figures): none needs build()'s tables."""
    sections: list[Section] = []
    images: dict[str, bytes] = {}
    metrics: dict[str, Any] = {}
    with reads_shared():
        images.update(pair_figures(data_dir))
        reproduced = reproduction_section(data_dir)
        if reproduced is not None:
            sections.append(reproduced[0])
            metrics["reproduction"] = reproduced[1]
        ranking = ranking_section(data_dir)
        if ranking is not None:
            sections.append(ranking)
        declared = declared_section(data_dir)
        if declared is not None:
            sections.append(declared[0])
            images.update(declared[1])
            metrics["declared"] = declared[2]
        xla_declared = torch_xla_section(data_dir)
        if xla_declared is not None:
            sections.append(xla_declared[0])
            metrics["torch_xla_declared"] = xla_declared[1]
        census = census_section(data_dir)
        if census is not None:
            sections.append(census[0])
            metrics["census"] = census[1]
            heat_map = fig_census_status(census[0].tables[0][1], CENSUS_STATUSES)  # the per-setting table
            if heat_map is not None:
                images["census_status.png"] = heat_map
                census[0].figures.append("census_status.png")
    return sections, images, metrics


def start_aside(data_dir: Path, out: Path) -> subprocess.Popen[bytes]:
    """data_sections(data_dir) in a fresh interpreter (not a fork: this process may run Arrow's,
    BLAS's or a framework's threads; not multiprocessing's spawn, which re-runs the caller's main
    module), this package first on its path, its answer pickled to `out`."""
    package_root = str(Path(__file__).resolve().parents[2])  # src/, the folder holding portability_data
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "-m", __name__, str(data_dir.resolve()), str(out)]
    with out.with_suffix(".log").open("wb") as log:
        return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)


def finish_aside(
    side: subprocess.Popen[bytes], out: Path
) -> tuple[list[Section], dict[str, bytes], dict[str, Any]] | None:
    """The second process's sections, or None when it failed (they are then built here)."""
    if side.wait() != 0 or not out.exists():
        tail = out.with_suffix(".log").read_text(errors="replace")[-2000:]
        print(
            f"report: the second process failed ({tail.strip()}); its sections are built here",
            file=sys.stderr,
        )
        return None
    with out.open("rb") as handle:
        return pickle.load(handle)


def write_aside(data_dir: str, out: str) -> None:
    """The second process of run_report: data_sections pickled to `out` (atomically)."""
    atomic_write_bytes(
        Path(out), pickle.dumps(data_sections(Path(data_dir)), protocol=pickle.HIGHEST_PROTOCOL)
    )


if __name__ == "__main__":
    write_aside(*sys.argv[1:])
