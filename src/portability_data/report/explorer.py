"""The offline explorer (`portability explorer`, the `explorer` stage): reports/explorer/index.html and
its data (data.js), built from the tables through the scan's own reading of them (pipeline/scan/
knowledge.py), so a function reads the same here as in `portability scan`.

A static page (explorer_page.html, copied as it is) with no library and no network: the data is a
script the page loads with a <script> tag (a browser loads that from file://, where it refuses
fetch()); the search, the filters, the matrix (setting x dtype, coloured by status) and the evidence
of a cell are plain JavaScript. The state lives in the URL's fragment (#q=...&fn=...&cell=...),
which a click sets and a link or a test can give directly.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from portability_data.readings.knowledge import (
    SCAN_STATUSES,
    Knowledge,
    Setting,
    build_knowledge,
    path_status,
    read_tables,
)
from portability_data.tables.atomic import atomic_write_bytes

DATA_GLOBAL = "PORTABILITY_EXPLORER"
PAGE = Path(__file__).with_name("explorer_page.html")  # the page itself, copied as it is
# Colour per status (worst red, then amber, greys for no verdict, greens for ran and works).
STATUS_COLOURS = {
    "fails": "#c62828",
    "partial": "#ef6c00",
    "deviates": "#f9a825",
    "host_fallback": "#8e24aa",
    "not_compiled": "#6d4c41",
    "not_in_dataset": "#eeeeee",
    "unknown": "#9e9e9e",
    "ran": "#aed581",
    "works": "#2e7d32",
}
SETTING_KEYS = ("source", "path", "device_model", "mode", "framework_version")
CELL_FIELDS = (
    "function",  # index into functions
    "setting",  # index into settings
    "dtype",  # null: a curated case (all its dtypes)
    "status",
    "raw_status",
    "entry",
    "samples",
    "samples_failed",
    "oracle",
    "run_id",
    "error_type",
    "error",
    "ratio",
)


def explorer_data(knowledge: Knowledge) -> dict:
    """The page's data: functions, settings, cells (rows of CELL_FIELDS), each function's status per
    path (the scan's: its worst setting there) and the per-path summary."""
    functions = sorted(knowledge.cells)
    setting_index: dict[tuple[str, ...], int] = {}
    cells, per_path = [], []
    summary: dict[str, Counter[str]] = {path: Counter() for path in knowledge.paths}
    for f_index, function in enumerate(functions):
        on_path: dict[str, list[Setting]] = {}
        for setting in knowledge.settings(function):
            key = (setting.source, setting.path, setting.device_model, setting.mode)
            key = (*key, setting.framework_version)
            s_index = setting_index.setdefault(key, len(setting_index))
            on_path.setdefault(setting.path, []).append(setting)
            for cell in setting.cells:
                cells.append(
                    [
                        f_index,
                        s_index,
                        cell.dtype,
                        cell.status,
                        cell.raw_status,
                        cell.entry,
                        cell.samples,
                        cell.samples_failed,
                        cell.oracle,
                        cell.run_id,
                        cell.error_type,
                        cell.error,
                        None if cell.ratio is None else round(cell.ratio, 4),
                    ]
                )
        statuses = {path: path_status(settings) for path, settings in on_path.items()}
        for path in knowledge.paths:
            summary[path][statuses.get(path, "not_in_dataset")] += 1
        per_path.append(statuses)
    # keyed by the canonical function (issue 60): a cell's own `function` is the name it was measured under
    framework = {name: found[0].framework for name, found in knowledge.cells.items() if found}
    settings = sorted(setting_index, key=setting_index.__getitem__)
    return {
        "statuses": list(SCAN_STATUSES),
        "colours": STATUS_COLOURS,
        "paths": list(knowledge.paths),
        "functions": [[name, framework[name]] for name in functions],
        "function_status": per_path,
        "settings": [{**dict(zip(SETTING_KEYS, s)), "label": Setting(*s).label} for s in settings],
        "cell_fields": list(CELL_FIELDS),
        "cells": cells,
        "summary": {path: dict(counts) for path, counts in summary.items()},
    }


def write_explorer(data_dir: Path, out_dir: Path) -> tuple[Path, dict]:
    """Write index.html and data.js under `out_dir` (each atomically); the page and its data."""
    data = explorer_data(build_knowledge(read_tables(data_dir)))
    out_dir = Path(out_dir)
    script = f"window.{DATA_GLOBAL} = " + json.dumps(data, separators=(",", ":"), ensure_ascii=False) + ";\n"
    atomic_write_bytes(out_dir / "data.js", script.encode("utf-8"))
    page = out_dir / "index.html"
    atomic_write_bytes(page, PAGE.read_bytes())
    return page, data
