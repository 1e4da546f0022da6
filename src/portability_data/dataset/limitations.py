"""The Croissant file's `rai:dataLimitations`, written from the folder's own tables (issue 49): what
limits today's data, not a sentence frozen when the sample was 63 functions per framework. NeurIPS's
datasets track asks for the responsible-AI fields; a reader of the file alone should learn that the
xla device is not a TPU, which latencies were contended, which census rows only ran, and which
framework version ran on which device."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from portability_data.dataset.folder import files_of
from portability_data.readings.quiet import host_load, run_quietness
from portability_data.tables.census_contracts import RUNNING_STATUSES
from portability_data.tables.contracts import is_census_case

STUDY = "mince2023"
# census statuses of a pair that ran through: running (works; ran, which no oracle judged) or with an
# op on the host
RAN = (*RUNNING_STATUSES, "host_fallback")


def _table(data_dir: Path, table: str, columns: list[str]) -> list[dict]:
    """The rows of `columns` over every file of a table in the folder (none: [])."""
    files = files_of(data_dir, table)
    if not files:
        return []
    parts = [
        pq.read_table(path, columns=[c for c in columns if c in pq.read_schema(path).names]) for path in files
    ]
    return pa.concat_tables(parts, promote_options="default").to_pylist()


def _versions(runs: list[dict]) -> str:
    """framework device: its versions in our runs, e.g. 'torch cpu 2.13.0+cpu, torch xla 2.9.0+cu128'."""
    seen: dict[tuple[str, str], set[str]] = {}
    for run in runs:
        seen.setdefault((run["framework"], run["device"]), set()).add(str(run["framework_version"]))
    return ", ".join(f"{fw} {device} {' / '.join(sorted(v))}" for (fw, device), v in sorted(seen.items()))


def _contended(runs: list[dict], quiet_load_max: float | None) -> str:
    """Per setting (framework device mode) with contended runs: how many of its runs were."""
    total, busy = Counter(), Counter()
    for run in runs:
        key = f"{run['framework']} {run['device']} {run['mode']}"
        total[key] += 1
        fact = {
            "load": host_load(run.get("host_load_max")),
            "other": host_load(run.get("host_other_cpu_max")),
        }
        busy[key] += run_quietness(fact, quiet_load_max) == "contended"
    named = [f"{key} {busy[key]} of {total[key]}" for key in sorted(total) if busy[key]]
    if not named:
        return "no run of ours measured other work sharing its cores"
    return (
        f"{sum(busy.values())} of our {sum(total.values())} runs (curated and census) measured other work "
        f"sharing their cores "
        f"({'; '.join(named)}): they count for outcomes, never for latencies, and a setting with no quiet "
        "run has no latency"
    )


def data_limitations(data_dir: Path, quiet_load_max: float | None) -> str:
    """The limitations of the folder's data, in a few sentences with today's counts."""
    runs = [
        r
        for r in _table(
            Path(data_dir),
            "runs",
            [
                "source",
                "framework",
                "framework_version",
                "device",
                "mode",
                "host_load_max",
                "host_other_cpu_max",
            ],
        )
        if r["source"] != STUDY
    ]
    cases = _table(Path(data_dir), "cases", ["case_id", "framework", "function", "status"])
    matrix = _table(Path(data_dir), "support_matrix", ["framework", "function", "status", "oracle"])
    parts = []
    curated = Counter(
        c["framework"] for c in cases if c.get("status") != "removed" and not is_census_case(c["case_id"])
    )
    if curated:
        parts.append(
            "Curated cases: "
            + ", ".join(f"{n} {fw}" for fw, n in sorted(curated.items()))
            + " functions (the 2023 study's sample of about 63 per framework and the newer samples of "
            "data/samples)"
        )
    if matrix:
        only_ran = sum(r["status"] in RAN and r.get("oracle") in (None, "none") for r in matrix)
        functions = len({(r["framework"], r["function"]) for r in matrix})
        parts.append(
            f"the census covers {functions:,} functions in {len(matrix):,} function x dtype pairs, of which "
            f"{only_ran:,} pairs ran through with no oracle comparing their values (oracle none): they say "
            "a function runs, not that it is right"
        )
    if any(r["device"] == "xla" for r in runs):
        parts.append(
            "the xla device is torch_xla on XLA's CPU backend (PJRT), not a TPU: its lowerings and host "
            "fallbacks are the XLA layer's, its dtype support and speed are not a TPU's"
        )
    if runs:
        parts.append(
            f"framework versions per device differ ({_versions(runs)}): a move between devices is also "
            "a move between versions"
        )
        parts.append(_contended(runs, quiet_load_max))
    parts.append(
        "the study's JAX TPU outcomes are unknown; latencies include framework overhead and depend on "
        "the host"
    )
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."
