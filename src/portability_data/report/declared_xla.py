"""torch_xla's own expectations beside our census on xla (issue 48): what torch_xla 2.9.0's OpInfo
test says passes on XLA (`portability torch-xla import`: declared rows of device type xla), and
what our census measured for the same entry and dtype.

torch_xla's claim is narrow (its README in shared/reference/torch_xla): OpInfo's samples only,
float32 and int64, XLA against the CPU at atol = rtol >= 1e-3. Ours is broader (the shared
generator's edge and large inputs too, a NumPy reference at the dtype's tolerance, host fallbacks
counted), so a disagreement is listed with a mechanical reading of why, from the row's own
evidence, not dismissed: `host fallback` (an op ran on the host), `edge input` (the first failing
sample is one of our edge-value inputs, which torch_xla's samples do not hold), `within 1e-3` (off
our tolerance, inside torch_xla's), else the failure as it reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings.frames import plain_frame
from portability_data.readings.torch_xla import DEVICE_TYPE, FAILING_SECTION, split_source
from portability_data.report.render import Section
from portability_data.tables.tableio import read_table

XLA_TOLERANCE = 1e-3  # torch_xla's test_ops.py raises atol and rtol to at least this
EVIDENCE_CHARS = 140
STATUS_ORDER = ("works", "ran", "host_fallback", "deviates", "partial", "fails")


def torch_xla_declarations(declared: pd.DataFrame) -> pd.DataFrame:
    """The declared rows that came from torch_xla's lists (their source names pytorch/xla)."""
    if not len(declared):
        return declared
    return declared[declared["source"].astype(str).str.startswith("pytorch/xla ")]


def reading(row: dict[str, Any]) -> str:
    """Why our row is not `works` where torch_xla says the pair passes, from the row's evidence."""
    status = row["status"]
    message = str(row.get("error_message") or "")
    if status == "host_fallback":
        return "host fallback (an op of it ran on the host: evidence names it)"
    if status == "ran":
        return (
            "ran, not every sample compared (no reference and no CPU comparison: a row from before the "
            "differential oracle, or a result that changes with the seed)"
        )
    if status == "no_sample":
        return "no sample could be built on XLA (the generator raised; torch_xla's test builds them alike)"
    if message.startswith("input edge"):
        return "edge input (not among torch_xla's samples)"
    errors = [row.get("max_rel_error"), row.get("max_abs_error")]
    if status == "deviates" and any(pd.notna(e) and e <= XLA_TOLERANCE for e in errors):
        return f"within {XLA_TOLERANCE:g} (torch_xla's tolerance), off ours"
    return f"{status}: {row.get('error_type') or ''}".rstrip(": ")


def entry_names(declared: pd.DataFrame) -> list[str]:
    """The support matrix's name of each declared row's entry: name, or name.variant."""
    return [
        f"{e}.{v}" if isinstance(v, str) and v else e for e, v in zip(declared["entry"], declared["variant"])
    ]


def allowed_pairs(matrix: pd.DataFrame, xla_declared: pd.DataFrame) -> pd.DataFrame:
    """Our census rows on xla of every (entry, dtype) torch_xla declares passing, with its list."""
    allowed = xla_declared[xla_declared["declared"] == "supported_dtype"]
    names = entry_names(allowed)
    listed = pd.DataFrame(
        {
            "entry": names,
            "dtype": allowed["dtype"].to_numpy(),
            "list": allowed["source"].map(lambda source: split_source(source)[1]),
        }
    )
    ours = matrix[
        (matrix["framework"] == "torch") & (matrix["device"] == DEVICE_TYPE) & (matrix["origin"] == "opinfo")
    ]
    return ours.merge(listed.drop_duplicates(["entry", "dtype"]), on=["entry", "dtype"], how="inner")


def agreement(pairs: pd.DataFrame, xla_declared: pd.DataFrame) -> pd.DataFrame:
    """Per mode: torch_xla's allowed pairs, how many we measured, and our status of those."""
    allowed = xla_declared[xla_declared["declared"] == "supported_dtype"]
    rows = []
    for mode, group in pairs.groupby("mode", sort=True):
        counts = group["status"].value_counts()
        fallback_ok = (group["status"] == "host_fallback") & (group["list"] == "allowed_fallback_opinfo")
        rows.append(
            {
                "mode": mode,
                "allowed_pairs": len(allowed),
                "measured_pairs": len(group),
                "entries": group["entry"].nunique(),
                **{status: int(counts.get(status, 0)) for status in STATUS_ORDER},
                "other": int(counts[[s for s in counts.index if s not in STATUS_ORDER]].sum()),
                "agree": int((group["status"] == "works").sum() + fallback_ok.sum()),
            }
        )
    return pd.DataFrame(rows)


def disagreements(pairs: pd.DataFrame) -> pd.DataFrame:
    """Every allowed pair we do not measure as passing, per entry and mode, with our evidence."""
    fallback_ok = (pairs["status"] == "host_fallback") & (pairs["list"] == "allowed_fallback_opinfo")
    off = pairs[(pairs["status"] != "works") & ~fallback_ok].copy()
    if not len(off):
        return pd.DataFrame(columns=["entry", "mode", "dtypes", "status", "reading", "evidence"])
    off["reading"] = [reading(row) for row in off.to_dict("records")]
    off["evidence"] = off["error_message"].fillna("").astype(str).str.split("\n").str[0].str[:EVIDENCE_CHARS]
    grouped = off.groupby(["entry", "mode", "status", "reading"], sort=True).agg(
        dtypes=("dtype", lambda d: ", ".join(sorted(d))), evidence=("evidence", "first")
    )
    return grouped.reset_index()[["entry", "mode", "dtypes", "status", "reading", "evidence"]]


def failing_but_works(matrix: pd.DataFrame, xla_declared: pd.DataFrame) -> pd.DataFrame:
    """Entries torch_xla keeps commented out as failing that our census measures working on xla
    (in float32 or int64, the dtypes its test would run)."""
    failing = xla_declared[
        (xla_declared["declared"] == "expected_failure")
        & xla_declared["reason"].astype(str).str.contains(FAILING_SECTION)
    ]
    names = set(entry_names(failing))
    ours = matrix[
        (matrix["device"] == DEVICE_TYPE)
        & matrix["entry"].isin(names)
        & matrix["dtype"].isin(["float32", "int64"])
        & (matrix["status"] == "works")
    ]
    if not len(ours):
        return pd.DataFrame(columns=["entry", "mode", "dtypes_working"])
    grouped = ours.groupby(["entry", "mode"], sort=True)["dtype"].agg(lambda d: ", ".join(sorted(d)))
    return grouped.rename("dtypes_working").reset_index()


def torch_xla_section(data_dir: Path) -> tuple[Section, dict[str, Any]] | None:
    """The section, from data_dir's declared tables and support matrix (None without torch_xla's
    rows or without census rows on xla)."""
    folder, matrix_path = Path(data_dir) / "declared", Path(data_dir) / "census" / "support_matrix.parquet"
    if not folder.exists() or not matrix_path.exists():
        return None
    xla_declared = plain_frame(torch_xla_declarations(read_table("declared", folder)))
    matrix = plain_frame(read_table("support_matrix", matrix_path))
    if not len(xla_declared) or not (matrix["device"] == DEVICE_TYPE).any():
        return None
    pairs = allowed_pairs(matrix, xla_declared)
    agreed, listed, revived = (
        agreement(pairs, xla_declared),
        disagreements(pairs),
        failing_but_works(matrix, xla_declared),
    )
    source = sorted(set(xla_declared["source"].map(lambda source: split_source(source)[0])))[0]
    unmapped = int(xla_declared["unmapped_reason"].eq("not_in_op_db").sum())
    text = (
        f"torch_xla's own OpInfo test ({source}) lists the entries it says pass on XLA, and the dtypes "
        "it runs them in (float32 and int64 of the entry's dtypes, XLA against the CPU at atol = rtol "
        f">= {XLA_TOLERANCE:g}, OpInfo's samples only). Here each such (entry, dtype) is set beside our "
        "census on xla (XLA's CPU backend). `agree`: we measure it working (or falling back to the host "
        "where torch_xla lists it with fallback). Every other pair is listed with what our row shows and "
        "a mechanical reading of why: our edge-value inputs and NumPy tolerances test more than "
        "torch_xla's test does, and we count host fallbacks, so a disagreement is a finding to check, "
        f"not a verdict on either side. {unmapped} of torch_xla's rows name an entry the pinned torch's "
        "op_db no longer has (not_in_op_db) and are counted nowhere else."
    )
    section = Section(
        "torch_xla's own expectations beside our census on xla",
        text,
        [
            ("Agreement per mode (pairs: entry x dtype)", agreed),
            ("Every pair torch_xla says passes that we do not measure as passing", listed),
            ("Commented out as failing in torch_xla's test, working in our census", revived),
        ],
        [],
    )
    metrics = {
        mode: {"measured": int(row["measured_pairs"]), "agree": int(row["agree"])}
        for mode, row in agreed.set_index("mode").iterrows()
    }
    return section, metrics
