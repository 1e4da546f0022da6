"""What a framework declares about devices we cannot reach, module by module (the `declared`
table): a picture of PyTorch's own statements for cuda, rocm, mps, xpu and hpu, beside the CPU.

A declaration is not a measurement: an OpInfo entry lists the dtypes its tests expect to work per
device type, and its decorations mark the tests expected to fail or skipped there. Two views,
per module of the public API (torch, torch.Tensor, torch.nn.functional, ...) and device type:
- dtype coverage: of the (function, dtype) pairs declared supported on the CPU in the forward
  direction, the share also declared supported on the device (what a user moving a CPU program
  there loses, by PyTorch's own account), and the pairs the device has beyond the CPU;
- declared failures: the functions with at least one active expected failure or skip on the
  device (any aspect: forward, backward, error inputs), including the MPS lists.
The census measures the same entries (cases of origin opinfo/module/optimizer), so the two can be
set side by side for every device someone runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings.frames import plain_frame
from portability_data.report.declared_xla import torch_xla_declarations
from portability_data.report.figures import png_bytes, pyplot
from portability_data.report.render import Section
from portability_data.tables.tableio import read_table

BASELINE = "cpu"
# Device types beyond the CPU that the wheel's databases speak of, in the order the report shows.
DECLARED_DEVICES = ["cuda", "rocm", "mps", "xpu", "hpu"]
# Module groups by qualified-name prefix, most specific first; the rest of torch.* is "torch".
MODULE_GROUPS = [
    ("torch.Tensor.", "torch.Tensor"),
    ("torch.nn.functional.", "torch.nn.functional"),
    ("torch.nn.", "torch.nn (modules)"),
    ("torch.linalg.", "torch.linalg"),
    ("torch.fft.", "torch.fft"),
    ("torch.special.", "torch.special"),
    ("torch.optim.", "torch.optim"),
    ("torch.masked.", "torch.masked"),
    ("torch.sparse.", "torch.sparse"),
    ("torch.signal.", "torch.signal"),
]
TOP_LEVEL = "torch"
OTHER = "other torch.*"
FAILURE_DECLARATIONS = ("expected_failure", "skip")
FIGURE = "declared_support.png"


def module_group(function: str) -> str:
    """The module group a public function belongs to (its qualified-name prefix)."""
    for prefix, group in MODULE_GROUPS:
        if function.startswith(prefix):
            return group
    return TOP_LEVEL if function.count(".") == 1 else OTHER


def group_order(groups: set[str]) -> list[str]:
    """torch first, then the groups as MODULE_GROUPS lists them, then the rest."""
    listed = [TOP_LEVEL, *(group for _, group in MODULE_GROUPS), OTHER]
    return [group for group in listed if group in groups]


def active_declarations(declared: pd.DataFrame) -> pd.DataFrame:
    """Rows that speak of a public function, on a device type, and hold on this wheel (a row whose
    own condition was false here, `active` False, says nothing about this version)."""
    rows = declared[declared["function"].notna() & declared["device_type"].notna()]
    rows = rows[rows["active"].map(lambda value: value is not False)]
    return rows.assign(group=rows["function"].map(module_group))


def forward_dtypes(rows: pd.DataFrame) -> pd.DataFrame:
    """(group, function, device_type, dtype) declared supported in the forward direction."""
    supported = rows[(rows["declared"] == "supported_dtype") & (rows["aspect"] != "backward")]
    return supported[["group", "function", "device_type", "dtype"]].drop_duplicates()


def dtype_coverage(rows: pd.DataFrame, devices: list[str]) -> pd.DataFrame:
    """Per module group: functions and (function, dtype) pairs the CPU supports, and per device the
    share of those pairs declared on it too, and the pairs it has that the CPU does not."""
    pairs = forward_dtypes(rows)
    cpu = pairs[pairs["device_type"] == BASELINE]
    records = []
    for group in group_order(set(pairs["group"])):
        cpu_pairs = set(map(tuple, cpu.loc[cpu["group"] == group, ["function", "dtype"]].to_numpy()))
        record: dict[str, Any] = {
            "module": group,
            "functions": cpu.loc[cpu["group"] == group, "function"].nunique(),
            "cpu_pairs": len(cpu_pairs),
        }
        for device in devices:
            on = pairs[(pairs["group"] == group) & (pairs["device_type"] == device)]
            device_pairs = set(map(tuple, on[["function", "dtype"]].to_numpy()))
            declares = ((rows["group"] == group) & (rows["device_type"] == device)).any()
            # A database that never names the device for this group (ModuleInfo has no rocm) says
            # nothing: no share, rather than 0%.
            share = 100.0 * len(device_pairs & cpu_pairs) / len(cpu_pairs) if cpu_pairs and declares else None
            record[f"{device}_pct"] = None if share is None else round(share, 1)
            record[f"{device}_beyond_cpu"] = len(device_pairs - cpu_pairs)
        records.append(record)
    return pd.DataFrame.from_records(records)


def declared_failures(rows: pd.DataFrame, devices: list[str]) -> pd.DataFrame:
    """Per module group and device: functions with an active expected failure or skip that is not
    a dtype gap: on all dtypes (dtype empty), or on a dtype the device declares supported for that
    function. The blanket dtype lists (MPS has no float64, complex outside an allow list) are dtype
    gaps, which the coverage table counts; here they would mark every function."""
    failing = rows[rows["declared"].isin(FAILURE_DECLARATIONS)]
    supported = set(map(tuple, forward_dtypes(rows)[["function", "device_type", "dtype"]].to_numpy()))
    beyond_dtype_gap = failing["dtype"].isna() | pd.Series(
        [(f, d, t) in supported for f, d, t in failing[["function", "device_type", "dtype"]].to_numpy()],
        index=failing.index,
        dtype=bool,
    )
    failing = failing[beyond_dtype_gap]
    records = []
    for group in group_order(set(rows["group"])):
        in_group = rows["group"] == group
        record: dict[str, Any] = {"module": group, "functions": rows.loc[in_group, "function"].nunique()}
        for device in [BASELINE, *devices]:
            hit = failing[(failing["group"] == group) & (failing["device_type"] == device)]
            record[device] = hit["function"].nunique()
        records.append(record)
    return pd.DataFrame.from_records(records)


def fig_dtype_coverage(coverage: pd.DataFrame, devices: list[str], version: str) -> bytes | None:
    """Heatmap: module group x device, % of the CPU's forward (function, dtype) pairs declared there."""
    if coverage.empty:
        return None
    plt = pyplot()
    values = coverage[[f"{device}_pct" for device in devices]].astype(float).to_numpy()
    fig, ax = plt.subplots(figsize=(1.3 * len(devices) + 3.2, 0.42 * len(coverage) + 1.6))
    image = ax.imshow(values, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    ax.grid(False)
    for (row, column), value in pd.DataFrame(values).stack().items():
        label = "not named" if pd.isna(value) else f"{value:.0f}"
        dark = not pd.isna(value) and value < 60
        ax.text(column, row, label, ha="center", va="center", fontsize=8, color="white" if dark else "black")
    ax.set_xticks(range(len(devices)), devices)
    labels = [f"{m} ({n})" for m, n in zip(coverage["module"], coverage["functions"])]
    ax.set_yticks(range(len(coverage)), labels)
    fig.colorbar(image, ax=ax, label="% of the CPU's forward (function, dtype) pairs")
    ax.set_title(f"Declared dtype support beside the CPU, torch {version} (functions per module)", fontsize=9)
    fig.tight_layout()
    return png_bytes(fig)


def declared_section(data_dir: Path) -> tuple[Section, dict[str, bytes], dict[str, Any]] | None:
    """The report section from data_dir/declared (None when the table is absent or has no torch rows)."""
    folder = Path(data_dir) / "declared"
    if not folder.exists():
        return None
    declared = plain_frame(read_table("declared", folder))
    # the wheel's own databases only: other sources' declarations (torch_xla's lists) have their section
    declared = declared[
        (declared["framework"] == "torch") & ~declared.index.isin(torch_xla_declarations(declared).index)
    ]
    if declared.empty:
        return None
    version = ", ".join(sorted(set(declared["framework_version"])))
    rows = active_declarations(declared)
    devices = [d for d in DECLARED_DEVICES if d in set(rows["device_type"])]
    coverage = dtype_coverage(rows, devices)
    failures = declared_failures(rows, devices)
    images = {}
    figure = fig_dtype_coverage(coverage, devices, version)
    if figure is not None:
        images[FIGURE] = figure
    text = (
        f"What the installed torch wheel ({version}) declares in its own test databases (OpInfo, "
        "ModuleInfo, OptimizerInfo, the MPS lists: the `declared` table) about devices this project has "
        "not measured. A declaration is PyTorch's expectation, not a measurement. dtype coverage: of "
        "the (function, dtype) pairs declared supported on the CPU in the forward direction, the share "
        "also declared on each device (`_beyond_cpu`: pairs the device has that the CPU does not); "
        "declared failures: functions with at least one active expected failure or skip on the device "
        "(any aspect) that is not a dtype gap (on all dtypes, or on a dtype the device declares "
        "supported for that function). An empty share: the databases never name that device for the "
        "module group. Functions are the public names the entries map to; unmapped entries are left out."
    )
    section = Section(
        "What PyTorch declares for devices we cannot reach",
        text,
        [
            ("Forward dtypes declared supported, as a share of the CPU's (per module group)", coverage),
            ("Functions with an expected failure or skip declared beyond dtype gaps, per device", failures),
        ],
        [FIGURE] if figure is not None else [],
    )
    metrics = {
        "functions": int(rows["function"].nunique()),
        "dtype_coverage_pct": {device: _overall_share(rows, device) for device in devices},
    }
    return section, images, metrics


def _overall_share(rows: pd.DataFrame, device: str) -> float | None:
    """All groups together: % of the CPU's forward pairs declared on the device."""
    pairs = forward_dtypes(rows)
    cpu = set(map(tuple, pairs.loc[pairs["device_type"] == BASELINE, ["function", "dtype"]].to_numpy()))
    on = set(map(tuple, pairs.loc[pairs["device_type"] == device, ["function", "dtype"]].to_numpy()))
    return round(100.0 * len(on & cpu) / len(cpu), 1) if cpu else None
