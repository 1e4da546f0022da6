"""What the dataset knows of each function, per setting: the support matrix's census rows (per dtype)
and the outcomes of the curated cases (ours and the study's GPU/TPU rows), in one vocabulary, with the
latency ratio where measured and the evidence (run, error line). `portability scan` (findings.py) and the
offline explorer (report/explorer.py) both read it, so a function reads the same in either.

Unknown is never working: a census pair that was not measured (not_in_wheel, harness), never
confirmed (unconfirmed) or ended in a fault the harness could not attribute (unknown) reads
`unknown`, and a function with no row at all is `not_in_dataset` (findings.py). `ran` (every sample ran,
nothing judged the values) is not `works`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.tables.tableio import read_file

# The scan's statuses, worst first: the order a function's settings are ranked by and the SARIF
# rules (findings.py). not_in_dataset: no row of the function for that path (never shown as working).
SCAN_STATUSES = (
    "fails",  # every measured dtype raised (or crashed, timed out, ran out of memory)
    "partial",  # some samples or some dtypes raised
    "deviates",  # ran, values off the oracle beyond the tolerance
    "host_fallback",  # ran, with some op on the host instead of the device
    "not_compiled",  # compiled mode: it did not really compile (graph breaks, eager fallback)
    "not_in_dataset",
    "unknown",  # rows, but no verdict (not measured, unconfirmed, the study's unknown outcome)
    "ran",  # every sample ran, nothing judged the values (no oracle; a reference known to differ)
    "works",  # every sample ran and matched its oracle
)
# Statuses that mean "known to fail or fall back" in the scan's summary.
PROBLEM_STATUSES = ("fails", "partial", "deviates", "host_fallback", "not_compiled")
RANK = {status: rank for rank, status in enumerate(SCAN_STATUSES)}

# The support matrix's statuses (census_contracts.SUPPORT_STATUSES) in the scan's vocabulary.
CENSUS_STATUS = {
    "works": "works",
    "ran": "ran",
    "reference_quirk": "ran",
    "partial": "partial",
    "fails": "fails",
    "error": "fails",
    "timeout": "fails",
    "crashed": "fails",
    "memory": "fails",
    "deviates": "deviates",
    "host_fallback": "host_fallback",
    "unconfirmed": "unknown",
    "no_sample": "unknown",  # the generator raised on the device: nothing of the function ran
    "unknown": "unknown",
    "not_in_wheel": "unknown",
    "harness": "unknown",
}
# The outcomes table's function outcomes (contracts.FUNCTION_OUTCOMES) in the scan's vocabulary;
# unavailable: the function is not in that version's API, nothing was measured.
OUTCOME_STATUS = {
    "success": "works",
    "partial_failure": "partial",
    "complete_failure": "fails",
    "host_fallback": "host_fallback",
    "not_compiled": "not_compiled",
    "unknown": "unknown",
    "unavailable": "unknown",
}
ERROR_CHARS = 600  # the evidence keeps the first lines of an error message, up to this many characters


@dataclass(frozen=True)
class Cell:
    """One function x setting x dtype the dataset measured (dtype None: a curated case, all its dtypes)."""

    function: str
    framework: str
    framework_version: str
    source: str  # census (our census), portability (our curated cases) or mince2023 (the study's)
    path: str  # the device path: cpu, gpu, tpu, xla, ...
    device_model: str
    mode: str
    dtype: str | None
    status: str  # one of SCAN_STATUSES
    raw_status: str  # the table's own status or outcome
    entry: str | None = None
    samples: int | None = None
    samples_failed: int | None = None
    oracle: str | None = None
    run_id: str | None = None
    error_type: str | None = None
    error: str | None = None  # first lines of the failure (census) or the dominant failure category
    ratio: float | None = None  # latency on this path / on the same machine's CPU (the study's rows)


@dataclass
class Setting:
    """A function's cells of one setting (source, path, model, mode, version), and what they add up to."""

    source: str
    path: str
    device_model: str
    mode: str
    framework_version: str
    cells: list[Cell] = field(default_factory=list)

    @property
    def label(self) -> str:
        who = {"mince2023": "the study's", "census": "census", "portability": "curated"}[self.source]
        return f"{self.path}/{self.mode} ({who}, {self.device_model}, {self.framework_version})"

    def dtypes(self, *statuses: str) -> list[str]:
        return sorted({c.dtype for c in self.cells if c.dtype is not None and c.status in statuses})

    @property
    def status(self) -> str:
        """fails if every measured dtype fails, partial if some fail, then the worst of the rest;
        unknown where nothing was measured."""
        measured = [c.status for c in self.cells if c.status != "unknown"]
        if not measured:
            return "unknown"
        if all(s == "fails" for s in measured):
            return "fails"
        if any(s in ("fails", "partial") for s in measured):
            return "partial"
        return min(measured, key=RANK.__getitem__)

    @property
    def ratio(self) -> float | None:
        ratios = [c.ratio for c in self.cells if c.ratio is not None]
        return sorted(ratios)[len(ratios) // 2] if ratios else None

    def evidence(self) -> Cell | None:
        """The cell that shows the setting's status: its worst, the first dtype of those."""
        if not self.cells:
            return None
        return min(self.cells, key=lambda c: (RANK[c.status], c.dtype or ""))


def path_status(settings: Iterable[Setting]) -> str:
    """A function's status on a device path: the worst of its settings there that reached a verdict
    (one GPU model's unknown outcome does not hide another's failure or success); unknown where none
    did, not_in_dataset where it has no setting there."""
    statuses = [s.status for s in settings]
    if not statuses:
        return "not_in_dataset"
    judged = [s for s in statuses if s != "unknown"] or statuses
    return min(judged, key=RANK.__getitem__)


@dataclass
class Knowledge:
    """Every cell of the dataset, by function; `settings` groups one function's cells."""

    cells: dict[str, list[Cell]]  # by canonical function (api.canonical_name)
    paths: tuple[str, ...]  # the device paths the tables hold rows for
    canonical: dict[str, str] = field(default_factory=dict)  # name -> canonical name (aliases only)

    def canonical_name(self, name: str) -> str:
        """The function a name refers to (issue 60): `tf.exp`'s cells are `tf.math.exp`'s."""
        return self.canonical.get(name, name)

    def settings(self, function: str) -> list[Setting]:
        grouped: dict[tuple[str, ...], Setting] = {}
        for cell in self.cells.get(self.canonical_name(function), ()):
            key = (cell.source, cell.path, cell.device_model, cell.mode, cell.framework_version)
            grouped.setdefault(key, Setting(*key)).cells.append(cell)
        return sorted(grouped.values(), key=lambda s: (s.path, s.mode, s.source, s.device_model))


def _text(value: object) -> str | None:
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def _int(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def first_lines(message: str | None, limit: int = ERROR_CHARS) -> str | None:
    """The first lines of an error message, cut at `limit` characters."""
    if not message:
        return None
    text = message.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def census_cells(matrix: pd.DataFrame) -> Iterable[Cell]:
    """The support matrix's rows as cells (one per function x entry x dtype x setting)."""
    for row in matrix.to_dict("records"):
        yield Cell(
            function=row["function"],
            framework=row["framework"],
            framework_version=row["framework_version"],
            source="census",
            path=row["device"],
            device_model=row["device_model"],
            mode=row["mode"],
            dtype=row["dtype"],
            status=CENSUS_STATUS.get(row["status"], "unknown"),
            raw_status=row["status"],
            entry=row["entry"],
            samples=_int(row["samples"]),
            samples_failed=_int(row["samples_failed"]),
            oracle=_text(row["oracle"]),
            run_id=row["run_id"],
            error_type=_text(row["error_type"]),
            error=first_lines(_text(row["error_message"])),
        )


def device_ratios(latencies: pd.DataFrame) -> dict[tuple[str, ...], float]:
    """(source, function, device, model, mode) -> latency on the device over the same machine's CPU,
    the median over the CPUs it was compared with (the study measured each device beside its VM's CPU)."""
    off_cpu = latencies[(latencies["reference_device"] == "cpu") & (latencies["device"] != "cpu")]
    off_cpu = off_cpu.dropna(subset=["ratio"])
    keys = ["source", "function", "device", "device_model", "mode"]
    medians = off_cpu.groupby(keys, dropna=False)["ratio"].median()
    return {
        tuple(str(part) for part in (key if isinstance(key, tuple) else (key,))): float(value)
        for key, value in medians.items()
    }


def outcome_cells(outcomes: pd.DataFrame, ratios: dict[tuple[str, ...], float]) -> Iterable[Cell]:
    """The outcomes table's rows (curated cases, ours and the study's) as cells without a dtype."""
    for row in outcomes.to_dict("records"):
        yield Cell(
            function=row["function"],
            framework=row["framework"],
            framework_version=row["framework_version"],
            source=row["source"],
            path=row["device"],
            device_model=row["device_model"],
            mode=row["mode"],
            dtype=None,
            status=OUTCOME_STATUS.get(row["outcome"], "unknown"),
            raw_status=row["outcome"],
            samples=int(row["n_subtests"]),
            samples_failed=int(row["n_failed"]),
            error=_text(row["dominant_failure_category"]),
            ratio=ratios.get(
                (row["source"], row["function"], row["device"], row["device_model"], row["mode"])
            ),
        )


# The tables the knowledge is built from, under a dataset folder (a checkout's data/ or a download).
TABLE_PATHS = {
    "support_matrix": Path("census/support_matrix.parquet"),
    "outcomes": Path("outcomes/outcomes.parquet"),
    "latencies": Path("latencies/latencies.parquet"),
}


API_PATH = Path("api/api.parquet")


def read_tables(data_dir: Path) -> dict[str, pd.DataFrame]:
    """The tables under `data_dir`, each checked against its contract; a missing one is named."""
    frames = {}
    for table, relative in TABLE_PATHS.items():
        path = Path(data_dir) / relative
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no {table} table; pass --data <the dataset folder> (a checkout's data/, or a "
                "folder downloaded from the Hub)"
            )
        frames[table] = read_file(table, path).to_pandas()
    api = Path(data_dir) / API_PATH
    if api.is_file():  # the aliases (issue 60); a dataset without it joins on the names written
        frames["api"] = read_file("api", api).to_pandas()
    return frames


def aliases(api: pd.DataFrame | None) -> dict[str, str]:
    """name -> canonical name for the api table's aliases (names carry their framework's prefix)."""
    if api is None or "canonical_name" not in api:
        return {}
    other = api[api["canonical_name"].notna() & (api["canonical_name"] != api["qualified_name"])]
    return dict(zip(other["qualified_name"].astype(str), other["canonical_name"].astype(str)))


def build_knowledge(frames: dict[str, pd.DataFrame]) -> Knowledge:
    """Every cell of the support matrix and the outcomes, by canonical function (an alias's cells
    are its function's, where the frames hold an api table)."""
    ratios = device_ratios(frames["latencies"])
    canonical = aliases(frames.get("api"))
    cells: dict[str, list[Cell]] = {}
    for cell in (*census_cells(frames["support_matrix"]), *outcome_cells(frames["outcomes"], ratios)):
        cells.setdefault(canonical.get(cell.function, cell.function), []).append(cell)
    paths = sorted({c.path for found in cells.values() for c in found})
    return Knowledge(cells, tuple(paths), canonical)


def load_knowledge(data_dir: Path) -> Knowledge:
    return build_knowledge(read_tables(data_dir))
