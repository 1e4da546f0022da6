"""The report section on what the export and edge paths leave outside their runtime (issues 51, 52):
the partitions OpenVINO's torch.compile backend leaves to PyTorch, the Flex (Select TF) ops a TFLite
model needs, the nodes of an ExecuTorch program that XNNPACK does not take.

Each of those paths names such ops per subtest in results `host_fallback_ops` (a subtest that ran
with one is `host_fallback`, never `passed`; one whose model then failed to load keeps the ops named).
The XLA path has its own section (report.host_fallback: compilations, the study's TPU); this one
reads the pooled rows of every other device path that is not the host CPU, so a path added to the
registry with fallback counting shows here without a change.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings.frames import plain_frame
from portability_data.report.host_fallback import XLA_DEVICES, fallback_ops, subtest_statuses, suites
from portability_data.report.render import Section
from portability_data.tables.tableio import read_table

TOP_FUNCTIONS = 20  # per path (framework, device, mode, suite)
PATH = ["framework", "framework_version", "device", "mode", "suite"]
NOT_A_PATH = ("cpu", *XLA_DEVICES)  # the host itself; the XLA path's own section


def _ops(value: Any) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else ()


def path_rows(data_dir: Path) -> pd.DataFrame:
    """Our pooled rows (not superseded, not shown order-dependent alone) on a device path other
    than the host CPU and XLA; empty when there are none."""
    if not (data_dir / "pooled").exists():
        return pd.DataFrame()
    rows = read_table("pooled", data_dir / "pooled")
    rows = rows[
        ~rows["device"].isin(NOT_A_PATH) & (rows["source"] != "mince2023") & rows["superseded_reason"].isna()
    ]
    if rows.empty:
        return pd.DataFrame()
    rows = plain_frame(rows.drop(columns=["superseded_reason", "superseded_by"]).reset_index(drop=True))
    return rows.assign(suite=suites(rows))


def path_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """Per path and suite: subtests by status, the functions with an op left outside the runtime
    (ran with it, or failed with it named), and how many distinct ops."""
    out = []
    for key, group in rows.groupby(PATH, sort=True):
        status = pd.Series(subtest_statuses(group), dtype=object)
        named = group[group["host_fallback_ops"].map(lambda ops: bool(_ops(ops)))]
        out.append(
            {
                **dict(zip(PATH, key)),
                "n_functions": group["function"].nunique(),
                "n_subtests": group.groupby(["case_id", "subtest"]).ngroups,
                "subtests_passed": int((status == "passed").sum()),
                "subtests_host_fallback": int((status == "host_fallback").sum()),
                "subtests_failing": int((status == "failing").sum()),
                "functions_with_ops_outside": named["function"].nunique(),
                "of_them_failing": named.loc[named["outcome"] != "host_fallback", "function"].nunique(),
                "distinct_ops_outside": len({op for ops in named["host_fallback_ops"] for op in _ops(ops)}),
            }
        )
    return pd.DataFrame(out)


def path_top_functions(rows: pd.DataFrame, limit: int = TOP_FUNCTIONS) -> pd.DataFrame:
    """Per path and suite, the `limit` functions with the most subtests that named an op left
    outside the runtime, with the ops by how many subtests named them (each path its own list)."""
    columns = [*PATH, "function", "subtests", "subtests_with_ops_outside", "ran_with_them", "ops"]
    named = rows[rows["host_fallback_ops"].map(lambda ops: bool(_ops(ops)))]
    if named.empty:
        return pd.DataFrame(columns=columns)
    keyed = [*PATH, "function"]
    totals = rows.drop_duplicates([*keyed, "case_id", "subtest"]).groupby(keyed).size()
    out = []
    for key, group in named.groupby(keyed, sort=True):
        per_subtest = group.drop_duplicates(["case_id", "subtest"])
        ops = Counter(op for value in per_subtest["host_fallback_ops"] for op in set(_ops(value)))
        out.append(
            {
                **dict(zip(keyed, key)),
                "subtests": int(totals[key]),
                "subtests_with_ops_outside": len(per_subtest),
                "ran_with_them": int((per_subtest["outcome"] == "host_fallback").sum()),
                # ties by name: a set's order changes with each process's string hashing
                "ops": ", ".join(
                    f"{op} ({n})" for op, n in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
                ),
            }
        )
    frame = pd.DataFrame(out, columns=columns)
    order = [*PATH, "subtests_with_ops_outside", "function"]
    frame = frame.sort_values(order, ascending=[True] * len(PATH) + [False, True])
    return frame.groupby(PATH, sort=False).head(limit).reset_index(drop=True)


def path_ops(rows: pd.DataFrame) -> pd.DataFrame:
    """Per path and op left outside the runtime: in how many functions and subtests (the XLA
    section's `fallback_ops`, per path)."""
    columns = [*PATH, "op", "n_functions", "n_subtests", "functions"]
    per_path = [
        fallback_ops(group).assign(**dict(zip(PATH, key))) for key, group in rows.groupby(PATH, sort=True)
    ]
    found = [frame for frame in per_path if not frame.empty]
    if not found:
        return pd.DataFrame(columns=columns)
    return pd.concat(found, ignore_index=True)[columns]


def path_fallback_section(data_dir: Path) -> Section | None:
    """The section (None without a run on such a path)."""
    rows = path_rows(Path(data_dir))
    if rows.empty:
        return None
    text = (
        "Off the host CPU, a path may run part of a function outside its target runtime: OpenVINO's "
        "torch.compile backend leaves partitions it cannot take to PyTorch, a TFLite model with Select "
        "TF ops needs the Flex delegate (TensorFlow's kernels) in the runtime, an ExecuTorch program "
        "runs the nodes XNNPACK does not take on the portable kernels. Each path's harness names those "
        "ops per subtest; a subtest that ran with one is `host_fallback`, never `passed`, and one that "
        "failed afterwards (a model with Flex ops that did not load) keeps them named. Per path (the "
        "XLA path has its own section above): the functions with most subtests naming such an op, and "
        "the ops. How each path counts them: "
        "[docs/DEVICE_PATHS.md](../docs/DEVICE_PATHS.md)."
    )
    return Section(
        "Left outside the runtime: export and edge paths",
        text,
        [
            ("Per path and suite: subtests by status, functions with an op left outside", path_summary(rows)),
            (
                f"Per path, the {TOP_FUNCTIONS} functions with most subtests naming an op left outside the "
                "runtime, with the ops (subtests naming each)",
                path_top_functions(rows),
            ),
            ("Per path, the ops left outside the runtime, by functions", path_ops(rows)),
        ],
        [],
    )
