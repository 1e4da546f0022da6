"""The cross-framework table: one NumPy function name (or one NN op on PyTorch's samples), the same
inputs, every framework beside the others.

The census modules that hold a framework's NumPy namesakes to NumPy (jax.numpy: origin `numpy`;
tf.experimental.numpy: `tnp`; torch's functions whose OpInfo declares a NumPy reference: `numpy`) draw their
inputs from runner/generator.py, seeded by the NumPy name, the dtype and the input kind: for one
name and dtype every framework gets the same arrays, and NumPy's answer on them is the common
reference. This stage takes their support-matrix rows and keeps the (name, dtype, device, mode)
groups measured in two frameworks or more, one row per framework, with the group's verdict:
whether the frameworks agree (same status) and, where not, which one stands apart.

Deviations here are each framework's from NumPy on the same inputs; two frameworks within
tolerance of NumPy are within twice that of each other, and `rel_error_spread` (the largest minus
the smallest framework's relative error in the group) says how differently they round. A direct
framework-to-framework difference needs their outputs side by side, which no run keeps (each
framework runs in its own worker): DATASET_CARD.md says so. Result dtypes are compared directly:
each row carries the dtypes its framework returned beside NumPy's (runner/promotion.py), and
`dtype_agreement` says whether the group's frameworks returned the same ones on the same inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from portability_data.readings.crossframework import GROUP, NOT_MEASURED, SAME_INPUTS
from portability_data.tables.census_contracts import RUNNING_STATUSES

# Census origins whose entries are NumPy names on the shared generator's inputs.
NUMPY_NAMESAKES = {"jax": ("numpy",), "tensorflow": ("tnp",), "torch": ("numpy",)}
# The NN-op census (issue 60): TensorFlow's and JAX's entries are torch's OpInfo / ModuleInfo entry
# names, run on torch's samples and held to torch's CPU result; torch's own census row of the same
# entry (origin opinfo or module) stands beside them. Named torch.<entry> (torch.nn.functional.conv2d),
# apart from the NumPy names (tanh is both a NumPy name and a torch entry).
NN_ORIGIN, NN_TORCH_ORIGINS, NN_REFERENCE = "nn", ("opinfo", "module"), "torch_cpu"
WORKING = RUNNING_STATUSES  # it ran without raising (ran: nothing judged its values)
COLUMNS = [
    "name",
    "reference",
    "dtype",
    "device",
    "mode",
    "framework",
    "framework_version",
    "function",
    "origin",
    "run_id",
    "status",
    "samples",
    "samples_failed",
    "oracle",
    "max_abs_error",
    "max_rel_error",
    "error_type",
    "error_message",
    "frameworks",
    "agreement",
    "stands_apart",
    "rel_error_spread",
    "result_dtype",
    "oracle_dtype",
    "dtype_mismatches",
    "dtype_agreement",
]


def namesake_rows(matrix: pd.DataFrame) -> pd.DataFrame:
    """The support-matrix rows of NumPy namesakes (every framework's) that measured their framework,
    named by NumPy's name."""
    keep = [
        origin in NUMPY_NAMESAKES.get(framework, ()) and status not in NOT_MEASURED
        for framework, origin, status in zip(
            matrix["framework"], matrix["origin"], matrix["status"], strict=True
        )
    ]
    rows = matrix[keep].copy()
    for column in ("result_dtype", "oracle_dtype", "dtype_mismatches"):
        if column not in rows:  # a support matrix from before rows recorded dtypes (schema 8)
            rows[column] = None
    rows["name"] = rows["entry"]
    rows["reference"] = "numpy." + rows["entry"]
    return pd.concat([rows, nn_rows(matrix)], ignore_index=True) if len(rows) else nn_rows(matrix)


def nn_rows(matrix: pd.DataFrame) -> pd.DataFrame:
    """The NN-op census's rows (TensorFlow's and JAX's origin nn) and torch's census rows of the
    same entries, named torch.<entry>, the reference torch's CPU result."""
    measured = ~matrix["status"].isin(NOT_MEASURED)
    nn = matrix["origin"].eq(NN_ORIGIN) & matrix["framework"].isin(["tensorflow", "jax"])
    entries = set(matrix.loc[nn & measured, "entry"])
    torch = matrix["framework"].eq("torch") & matrix["origin"].isin(NN_TORCH_ORIGINS)
    rows = matrix[measured & (nn | (torch & matrix["entry"].isin(entries)))].copy()
    for column in ("result_dtype", "oracle_dtype", "dtype_mismatches"):
        if column not in rows:
            rows[column] = None
    rows["name"] = "torch." + rows["entry"]
    rows["reference"] = NN_REFERENCE
    return rows


def _apart(statuses: pd.Series) -> pd.Series:
    """Per framework of a group that disagrees: `alone_fails` (it does not work where all the
    others do), `alone_works` (it works where none of the others does), else null."""
    working = statuses.isin(WORKING)
    apart = pd.Series([None] * len(statuses), index=statuses.index, dtype=object)
    if working.sum() == len(statuses) - 1:
        apart[~working] = "alone_fails"
    elif working.sum() == 1 and len(statuses) > 2:
        apart[working] = "alone_works"
    elif working.sum() == 1:  # two frameworks, one works: the other is the one apart
        apart[~working] = "alone_fails"
    return apart


def crossframework(matrix: pd.DataFrame) -> pd.DataFrame:
    """The cross-framework table of a support matrix (empty when fewer than two frameworks)."""
    from portability_data.tables.tableio import empty_frame

    if not len(matrix):
        return empty_frame("crossframework")
    rows = namesake_rows(matrix)
    counts = rows.groupby(GROUP)["framework"].transform("nunique")
    rows = rows[counts >= 2].copy()
    if not len(rows):
        return empty_frame("crossframework")
    rows["frameworks"] = rows.groupby(GROUP)["framework"].transform("nunique").astype("int64")
    same = rows.groupby(GROUP)["status"].transform("nunique") == 1
    rows["agreement"] = np.where(same, "agree", "disagree")
    rows["stands_apart"] = None
    for _, group in rows[~same].groupby(GROUP):
        rows.loc[group.index, "stands_apart"] = _apart(group["status"])
    finite = rows["max_rel_error"].where(np.isfinite(rows["max_rel_error"].astype(float)))
    spread = finite.groupby([rows[c] for c in GROUP]).transform(lambda s: s.max() - s.min())
    counted = finite.groupby([rows[c] for c in GROUP]).transform("count")
    rows["rel_error_spread"] = spread.where(counted >= 2)
    rows["dtype_agreement"] = dtype_agreement(rows)
    return rows[COLUMNS].sort_values([*GROUP, "framework"], ignore_index=True)


def dtype_agreement(rows: pd.DataFrame) -> pd.Series:
    """Per row, its group's verdict on result dtypes: same_dtype or differs among the frameworks
    that recorded them on the same inputs (SAME_INPUTS); null with fewer than two such."""
    held = rows["result_dtype"].notna() & rows["oracle"].isin(SAME_INPUTS)
    signatures = rows["result_dtype"].where(held)
    keys = [rows[c] for c in GROUP]
    recorded = signatures.groupby(keys).transform("count")
    distinct = signatures.groupby(keys).transform("nunique")
    verdict = np.where(distinct == 1, "same_dtype", "differs")
    return pd.Series(np.where(recorded >= 2, verdict, None), index=rows.index, dtype=object)


def summary_lines(table: pd.DataFrame) -> list[str]:
    if not len(table):
        return ["no NumPy name measured in two frameworks yet"]
    groups = table.drop_duplicates(GROUP)
    lines = [
        f"{table['name'].nunique()} NumPy names in two frameworks or more; {len(groups)} name x dtype x "
        f"setting groups, {int((groups['agreement'] == 'disagree').sum())} of them disagreeing"
    ]
    for (device, mode), group in groups.groupby(["device", "mode"]):
        compared = group[group["dtype_agreement"].notna()]
        lines.append(
            f"  {device}/{mode}: {group['name'].nunique()} names, {len(group)} groups, "
            f"{int((group['agreement'] == 'disagree').sum())} disagree; result dtypes compared in "
            f"{len(compared)} groups, {int((compared['dtype_agreement'] == 'differs').sum())} differ"
        )
    return lines


def run_crossframework(matrix_path: Path, out: Path) -> list[str]:
    """The `crossframework` stage: the support matrix in, the cross-framework table out."""
    from portability_data.tables.tableio import read_table, write_table

    table = crossframework(read_table("support_matrix", Path(matrix_path)))
    write_table("crossframework", table, out)
    return [*summary_lines(table), f"-> {out}"]
