"""Moving off the CPU, asked of the census: each pair (framework, entry, dtype, mode) measured on
the CPU and on another device, by what the move did to it (works on both, lost, falls back to the
host, gained, fails on both), and the functions that lose most; and two routes off the CPU side by
side (two device paths of one framework on the same pairs: ONNX Runtime vs OpenVINO, IREE vs
torch_xla, builtin-only vs Flex TFLite, ...), what one route keeps that the other loses. Kept apart
from report.census, which lays out the section, because these are the census tables that read two
devices at once.
"""

from __future__ import annotations

import pandas as pd

from portability_data.readings.crossframework import NOT_MEASURED
from portability_data.readings.frames import first_line
from portability_data.tables.census_contracts import RUNNING_STATUSES as RUNNING

TOP_LOST = 20  # functions lost moving off the CPU per path (framework, mode, device), most pairs first

# A census pair on the CPU and on another device (same framework, entry, dtype and mode): what moving
# the function off the CPU did to it. Statuses that say nothing either way are not compared.
# a quirk is the reference's, on both; no_sample: the generator, not the function, failed on the device
NOT_COMPARED = ("unconfirmed", "reference_quirk", "no_sample", *NOT_MEASURED)
PAIR = ["framework", "origin", "entry", "dtype", "mode"]
MOVES = ("works_both", "lost", "falls_back", "gained", "fails_both")
ROUTE_COUNTS = ("runs_both", "only_first", "only_second", "runs_neither", "not_compared")


def move_of(on_cpu: str, on_device: str) -> str:
    """works_both (works, or ran with nothing to judge it, on both: the move kept it running); lost
    (works or ran on the CPU, fails, deviates or faults on the device); falls_back (ran on the device
    with an op on the host); gained (fails on the CPU, works or ran on the device); fails_both;
    not_compared (unconfirmed, no sample built, not in the wheel or the harness's failure on either
    side)."""
    if on_cpu in NOT_COMPARED or on_device in NOT_COMPARED:
        return "not_compared"
    if on_device == "host_fallback":
        return "falls_back"
    if on_cpu in RUNNING:
        return "works_both" if on_device in RUNNING else "lost"
    return "gained" if on_device in RUNNING else "fails_both"


def device_moves(matrix: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per framework, mode and device other than the CPU: the pairs measured on both by move and
    the functions with a pair lost or falling back; per path, the TOP_LOST functions with most pairs
    lost, with the dtypes and the device's first error: each path's own list, so that a path with
    many losses does not hide another's). The study's question asked of the census: what leaves a
    function when it moves from the CPU to an accelerator (here torch_xla's XLA CPU: the XLA layer's
    lowerings and fallbacks; the torch versions of the two settings differ and are named)."""
    summary_columns = [
        "framework", "mode", "device", "device_model", "cpu_version", "device_version", "pairs_both", *MOVES,
        "not_compared", "functions_both", "functions_lost", "functions_falling_back", "functions_unconfirmed",
    ]  # fmt: skip
    lost_columns = ["framework", "mode", "device", "function", "pairs_lost", "dtypes", "error_type", "error"]
    on_cpu = matrix[matrix["device"] == "cpu"]
    elsewhere = matrix[matrix["device"] != "cpu"]
    if on_cpu.empty or elsewhere.empty:
        return pd.DataFrame(columns=summary_columns), pd.DataFrame(columns=lost_columns)
    # one CPU row per pair: the newest run's where CPUs of several machines measured it
    newest_cpu = on_cpu.sort_values("run_id").drop_duplicates(PAIR, keep="last")
    cpu_side = newest_cpu[[*PAIR, "status", "framework_version"]].rename(
        columns={"status": "cpu_status", "framework_version": "cpu_version"}
    )
    both = elsewhere.merge(cpu_side, on=PAIR, how="inner")
    both["move"] = [move_of(a, b) for a, b in zip(both["cpu_status"], both["status"])]
    summary, lost = [], []
    keys = ["framework", "mode", "device", "device_model"]
    for (framework, mode, device, model), group in both.groupby(keys, sort=True):
        moves = group["move"].value_counts()
        summary.append(
            {
                "framework": framework,
                "mode": mode,
                "device": device,
                "device_model": model,
                "cpu_version": ", ".join(sorted(set(group["cpu_version"]))),
                "device_version": ", ".join(sorted(set(group["framework_version"]))),
                "pairs_both": len(group),
                **{move: int(moves.get(move, 0)) for move in (*MOVES, "not_compared")},
                "functions_both": group["function"].nunique(),
                "functions_lost": group.loc[group["move"] == "lost", "function"].nunique(),
                "functions_falling_back": group.loc[group["move"] == "falls_back", "function"].nunique(),
                # failed on the device once, not yet alone in a fresh worker: lost or not, unknown
                "functions_unconfirmed": group.loc[
                    (group["status"] == "unconfirmed") & group["cpu_status"].isin(RUNNING), "function"
                ].nunique(),
            }
        )
        for function, pairs in group[group["move"] == "lost"].groupby("function", sort=True):
            first = pairs.iloc[0]
            lost.append(
                {
                    "framework": framework,
                    "mode": mode,
                    "device": device,
                    "function": function,
                    "pairs_lost": len(pairs),
                    "dtypes": ", ".join(sorted(set(pairs["dtype"]))),
                    "error_type": first["error_type"]
                    if isinstance(first["error_type"], str)
                    else first["status"],
                    "error": first_line(first["error_message"]) or "",
                }
            )
    lost_frame = pd.DataFrame(lost, columns=lost_columns)
    if len(lost_frame):
        path = ["framework", "mode", "device"]
        order = [*path, "pairs_lost", "function"]
        lost_frame = lost_frame.sort_values(order, ascending=[True, True, True, False, True])
        lost_frame = lost_frame.groupby(path, sort=False).head(TOP_LOST)
    return pd.DataFrame(summary, columns=summary_columns), lost_frame.reset_index(drop=True)


def route_side(status: str) -> str:
    """What one route did with a pair: runs (works, or ran with nothing to judge it), falls_back (an
    op on the host), fails (fails, deviates, partial or a fault), not_compared (NOT_COMPARED)."""
    if status in NOT_COMPARED:
        return "not_compared"
    if status == "host_fallback":
        return "falls_back"
    return "runs" if status in RUNNING else "fails"


def route_pairs(matrix: pd.DataFrame) -> pd.DataFrame:
    """Per framework and mode, each two device paths other than the CPU that measured the same pairs
    (issues 51-53: ONNX Runtime beside OpenVINO, IREE beside torch_xla and torch-mlir's route,
    TFLite builtins beside Flex, the portable kernels beside XNNPACK): pairs both run whole on the
    device, pairs only the first or only the second runs whole (the other fails or falls back to
    the host), neither, and the functions each keeps alone, so that a route's losses are told from
    the framework's. One row per pair and path: its newest run's."""
    columns = [
        "framework", "mode", "first", "second", "first_version", "second_version", "pairs_both",
        *ROUTE_COUNTS, "functions_both", "functions_only_first", "functions_only_second",
    ]  # fmt: skip
    elsewhere = matrix[matrix["device"] != "cpu"].sort_values("run_id")
    newest = elsewhere.drop_duplicates([*PAIR, "device"], keep="last")
    rows = []
    for (framework, mode), group in newest.groupby(["framework", "mode"], sort=True):
        devices = sorted(set(group["device"]))
        for index, first in enumerate(devices):
            for second in devices[index + 1 :]:
                a = group[group["device"] == first]
                b = group[group["device"] == second]
                both = a.merge(b, on=PAIR, suffixes=("_a", "_b"))
                if both.empty:
                    continue
                side_a = both["status_a"].map(route_side)
                side_b = both["status_b"].map(route_side)
                compared = (side_a != "not_compared") & (side_b != "not_compared")
                runs_a, runs_b = compared & (side_a == "runs"), compared & (side_b == "runs")
                rows.append(
                    {
                        "framework": framework,
                        "mode": mode,
                        "first": first,
                        "second": second,
                        "first_version": ", ".join(sorted(set(both["framework_version_a"]))),
                        "second_version": ", ".join(sorted(set(both["framework_version_b"]))),
                        "pairs_both": len(both),
                        "runs_both": int((runs_a & runs_b).sum()),
                        "only_first": int((runs_a & ~runs_b).sum()),
                        "only_second": int((runs_b & ~runs_a).sum()),
                        "runs_neither": int((compared & ~runs_a & ~runs_b).sum()),
                        "not_compared": int((~compared).sum()),
                        "functions_both": both["function_a"].nunique(),
                        "functions_only_first": both.loc[runs_a & ~runs_b, "function_a"].nunique(),
                        "functions_only_second": both.loc[runs_b & ~runs_a, "function_a"].nunique(),
                    }
                )
    return pd.DataFrame(rows, columns=columns)
