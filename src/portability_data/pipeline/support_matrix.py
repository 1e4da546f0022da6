"""The census's support matrix: per function entry x dtype x setting, whether it works, beside what
the framework's own test database declares for that device type and dtype.

Census results are ordinary result rows whose case id is `<framework>.census.<origin>.<entry>`
and whose subtest is `test_entry[<entry>-<dtype>]`; they are pooled like the curated ones (only
runs of the newest harness and census files: `supersede`) and kept out of the study's outcome
tables (aggregate.py). A pair's status reads its samples: works (every sample ran and matched the
oracle, or failed only when run after other cases: order-dependent), ran (every sample ran, not
every one judged: no oracle for it), partial (some samples failed), fails (all failed),
no_sample (the generator raised on the device before any sample existed), harness (the failure is the
harness's by the current rules, read again as aggregation reads them: not the framework's either
way), or the worker's fault. The
declared side comes from the declared table (dtype lists per device type, forward aspect; active
skips and expected failures), so "declared unsupported but works" and "declared supported but
fails" are rows, not anecdotes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.pipeline.failure_reading import reclassify_failures
from portability_data.pipeline.reference_quirks import reference_quirks
from portability_data.pipeline.subtests import supersede
from portability_data.readings.canonical import canonical_map, with_canonical
from portability_data.readings.frames import plain_frame
from portability_data.runner.census_rows import NOT_IN_WHEEL
from portability_data.tables.census_contracts import RUNNING_STATUSES
from portability_data.tables.contracts import CONFIRMED_OUTCOMES, is_census_case

# The declared table's device types for our devices, as each framework names them (PyTorch's
# databases: cuda, mps, xla; JAX's harness limitations: cpu, gpu, tpu).
DEVICE_TYPES = {
    "torch": {"cpu": "cpu", "gpu": "cuda", "mps": "mps", "tpu": "xla"},
    "jax": {"cpu": "cpu", "gpu": "gpu", "tpu": "tpu"},
    "tensorflow": {"cpu": "cpu", "gpu": "gpu", "tpu": "tpu"},
}
# Where a mode runs other kernels than eager on the same device: tf.function(jit_compile=True)
# runs XLA's CPU kernels, so TensorFlow's XLA_CPU registrations are what it declares there.
MODE_DEVICE_TYPES = {("tensorflow", "cpu", "compiled"): "xla_cpu"}


def declared_device_type(framework: str, device: str, mode: str) -> str:
    """The declared table's device type whose declarations apply to a setting."""
    if (framework, device, mode) in MODE_DEVICE_TYPES:
        return MODE_DEVICE_TYPES[(framework, device, mode)]
    return DEVICE_TYPES.get(framework, {}).get(device, device)


FAULTS = {"timeout", "crashed", "memory", "error", "unknown"}
NO_ORACLE = "none"  # results.oracle of a row whose samples nothing could judge
INPUT_DOMAIN = "input_domain"  # the failure rules' subcategory of a refusal by design
NO_SAMPLE = "SampleBuildError"  # runner/device_oracle.py: no sample could be built on the device
VALUES_OFF = "ValuesOffOracle"  # runner/oracle.py: the first failing sample ran but was off the oracle
MEASURED = (
    "samples",
    "samples_failed",
    "samples_compared",
    "oracle",
    "max_abs_error",
    "max_rel_error",
    "error_type",
)
DTYPES = ("result_dtype", "oracle_dtype", "dtype_mismatches")  # NumPy namesakes (runner/promotion.py)
FIRST_LINES = 3  # of a failure's message: which input and how far off
KEY = ["framework", "framework_version", "case_id", "dtype", "device", "device_model", "mode"]


def census_results(results: pd.DataFrame) -> pd.DataFrame:
    """The result rows of census cases."""
    if not len(results):
        return results
    return results[[is_census_case(case_id) for case_id in results["case_id"]]]


def pair_of(subtest: str) -> tuple[str, str]:
    """test_entry[linalg.svd-float32] -> (linalg.svd, float32)."""
    inside = subtest.split("[", 1)[1].rstrip("]") if "[" in subtest else subtest
    entry, _, dtype = inside.rpartition("-")
    return entry, dtype


def by_design(row: dict[str, Any]) -> bool:
    """A failure the function raises by design on a value outside its domain (rules/failures.yaml,
    subcategory input_domain: an integer divided by zero, meshgrid of an N-D tensor): the dtype works,
    so it is no finding against the framework's declaration."""
    return row.get("failure_subcategory") == INPUT_DOMAIN


def compared(row: dict[str, Any]) -> bool:
    """Whether every sample of a row was compared with an oracle (NumPy, SciPy, upstream's reference,
    eager, the host CPU): `none` or nothing recorded is not a comparison; a row that counts its
    compared samples (schema 11) must count all of them. Rows before schema 11 only say that some
    sample was compared."""
    oracle = row.get("oracle")
    if not isinstance(oracle, str) or oracle in ("", NO_ORACLE):
        return False
    samples, counted = row.get("samples"), row.get("samples_compared")
    if pd.isna(counted) or pd.isna(samples) or row.get("confirmation") == "order_dependent":
        return True
    return int(counted) >= int(samples)


def status_of(row: dict[str, Any]) -> str:
    outcome = row["outcome"]
    if outcome == "passed" or row.get("confirmation") == "order_dependent":
        return "works" if compared(row) else "ran"  # ran: no sample was compared, so no claim of works
    if outcome in CONFIRMED_OUTCOMES and row.get("failure_category") == "harness":
        return "harness"  # our test code failed (a missing oracle dependency, ...): nothing measured
    if outcome in CONFIRMED_OUTCOMES and pd.isna(row.get("confirmation")):
        return "unconfirmed"  # the framework's only once it recurs alone in a fresh worker
    if outcome == "host_fallback":
        return "host_fallback"
    if row.get("error_type") == NO_SAMPLE:
        return "no_sample"  # the generator raised on this device: nothing of the function ran
    skip_reason = str(row.get("error_message") or "").removeprefix("Skipped: ")
    if outcome == "skipped" and skip_reason.startswith(NOT_IN_WHEEL):
        return "not_in_wheel"
    if outcome in FAULTS:
        return outcome
    if row.get("error_type") == VALUES_OFF:
        return "deviates"  # it ran; its values left the tolerance policy (deviation columns say how far)
    samples, failed = row.get("samples"), row.get("samples_failed")
    if pd.notna(samples) and pd.notna(failed) and 0 < failed < samples:
        return "partial"
    return "fails"


def _first_lines(message: Any) -> str | None:
    if not isinstance(message, str) or not message:
        return None
    return "\n".join(message.splitlines()[:FIRST_LINES])


def declared_lookup(declared: pd.DataFrame | None) -> tuple[dict[tuple, str], dict[tuple, int]]:
    """(entry, device type, dtype) -> supported/unsupported; and -> active skips + xfails. A
    declaration without a dtype or device type applies to all of them (counted per pair later)."""
    dtype_status: dict[tuple, str] = {}
    failures: dict[tuple, int] = {}
    if declared is None or not len(declared):
        return dtype_status, failures
    frame = plain_frame(declared)
    for row in frame.to_dict("records"):
        entry = f"{row['entry']}.{row['variant']}" if row.get("variant") else row["entry"]
        key = (row["origin"], entry, row.get("device_type"), row.get("dtype"))
        kind = row["declared"]
        if kind in ("supported_dtype", "unsupported_dtype") and row.get("aspect") in ("forward", None):
            dtype_status[key] = "supported" if kind == "supported_dtype" else "unsupported"
        elif kind in ("skip", "expected_failure") and row.get("active") is not False:
            failures[key] = failures.get(key, 0) + 1
    return dtype_status, failures


def declaring_entries(cases_dir: Path) -> dict[tuple[str, str, str], tuple[str, str]]:
    """(framework, origin, entry) -> the (origin, entry) whose declarations it shares, from the
    census manifests: torch's NumPy namesakes (origin numpy, as jax.numpy's: hence the framework in
    the key) are declared by the OpInfo entry each names (`opinfo`), whose dtype lists are what
    torch claims for that function."""
    from portability_data.runner.census_rows import manifest_paths, read_manifest

    shared = {}
    for path in manifest_paths(Path(cases_dir), "torch"):
        manifest = read_manifest(path)
        for entry in manifest["entries"]:
            if entry.get("opinfo"):
                shared[("torch", manifest["origin"], entry["entry"])] = ("opinfo", entry["opinfo"])
    return shared


def support_matrix(
    results: pd.DataFrame,
    runs: pd.DataFrame | None,
    declared: pd.DataFrame | None,
    declared_by: dict[tuple[str, str, str], tuple[str, str]] | None = None,
    api: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The support matrix of every census pair of the pooled runs; `declared_by` names, for an
    entry that declares nothing of its own, the entry whose declarations it shares; `api` gives
    each function's canonical name (the name itself without it, or where it does not list it)."""
    from portability_data.tables.tableio import empty_frame

    census = census_results(results)
    if not len(census):
        return empty_frame("support_matrix")
    pooled, _ = supersede(census, runs)
    frame = plain_frame(reclassify_failures(pooled)).copy()
    frame[["entry", "dtype"]] = [pair_of(s) for s in frame["subtest"]]
    # the newest run's row of each pair; of its repeats the one with most samples failed
    started = {} if runs is None else dict(zip(runs["run_id"], runs["started_at"].astype(str)))
    frame["_started"] = frame["run_id"].map(started).fillna("")
    frame["_failed"] = frame["samples_failed"].fillna(-1)
    frame = frame.sort_values(["_started", "_failed"]).drop_duplicates(KEY, keep="last")
    dtype_status, failures = declared_lookup(declared)
    quirks = reference_quirks()
    rows = []
    for row in frame.to_dict("records"):
        origin = row["case_id"].split(".")[2]
        device_type = declared_device_type(row["framework"], row["device"], row["mode"])
        own = (origin, row["entry"])
        by_origin, by_entry = (declared_by or {}).get((row["framework"], *own), own)
        declared_dtype = dtype_status.get((by_origin, by_entry, device_type, row["dtype"]))
        declared_failures = sum(
            failures.get((by_origin, by_entry, kind, dtype), 0)
            for kind in (device_type, None)
            for dtype in (row["dtype"], None)
        )
        status = status_of(row)
        if status == "deviates" and (row["framework"], origin, row["entry"]) in quirks:
            status = "reference_quirk"  # the entry's own reference computes something else
        finding = None
        # OpInfo's test_dtypes expects an unsupported dtype to raise: running at all contradicts it
        if declared_dtype == "unsupported" and status in RUNNING_STATUSES:
            finding = "declared_unsupported_works"
        elif declared_dtype == "supported" and status in ("fails", "partial") and not by_design(row):
            finding = "declared_supported_fails"
        rows.append(
            {
                **{k: row[k] for k in ("framework", "framework_version", "function", "case_id", "entry")},
                "origin": origin,
                **{k: row[k] for k in ("dtype", "device", "device_model", "mode", "run_id")},
                "status": status,
                **{k: row.get(k) for k in MEASURED},
                "failure_category": row.get("failure_category"),
                "error_message": _first_lines(row.get("error_message")),
                "confirmation": row.get("confirmation"),
                "declared_dtype": declared_dtype,
                "declared_failures": int(declared_failures),
                "finding": finding,
                **{k: row.get(k) for k in DTYPES},
            }
        )
    matrix = with_canonical(pd.DataFrame(rows), canonical_map(api))
    return matrix.sort_values(KEY, ignore_index=True)


def summary_lines(matrix: pd.DataFrame) -> list[str]:
    """Per setting: pairs, functions, and pairs per status; then the findings."""
    lines = []
    for setting, group in matrix.groupby(["framework", "device", "mode"], sort=True):
        counts = group["status"].value_counts().to_dict()
        lines.append(
            f"{'/'.join(setting)}: {len(group)} pairs, {group['function'].nunique()} functions, "
            f"{group['entry'].nunique()} entries; " + ", ".join(f"{counts[s]} {s}" for s in sorted(counts))
        )
        found = group["finding"].value_counts().to_dict()
        lines.append("  findings: " + (", ".join(f"{n} {k}" for k, n in sorted(found.items())) or "none"))
    return lines


def run_support_matrix(
    results_dir: Path,
    runs_dir: Path,
    declared_paths: Sequence[Path] | Path | None,
    out: Path,
    cases_dir: Path = Path("cases"),
    api_path: Path | None = None,
) -> list[str]:
    """The `support_matrix` stage: read the shards, runs, declared tables (the wheels' own and
    other sources', e.g. torch_xla's test lists; a missing one is left out), the api table (the
    canonical names) and the census
    manifests' shared declarations; write the matrix."""
    from portability_data.tables.tableio import read_shards, read_table, write_table

    results = read_shards("results", [Path(results_dir)]).frame
    runs = read_table("runs", Path(runs_dir))
    paths = [declared_paths] if isinstance(declared_paths, (str, Path)) else list(declared_paths or [])
    tables = [read_table("declared", Path(path)) for path in paths if Path(path).exists()]
    declared = pd.concat(tables, ignore_index=True) if tables else None
    api = read_table("api", Path(api_path)) if api_path and Path(api_path).exists() else None
    matrix = support_matrix(results, runs, declared, declaring_entries(cases_dir), api)
    write_table("support_matrix", matrix, out)
    return [*summary_lines(matrix), f"-> {out}"]
