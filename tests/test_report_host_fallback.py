"""The report's host-fallback section, from results rows of an XLA setting (made here, by hand)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from portability_data.report.host_fallback import fallback_ops, setting_summary, top_functions


def _row(function: str, subtest: str, outcome: str, ops: list[str] | None, calls: int, **extra: Any) -> dict:
    return {
        "framework": "torch",
        "framework_version": "2.9.0",
        "device": "xla",
        "device_model": "XLA CPU (PJRT)",
        "mode": "eager",
        "function": function,
        "case_id": function,
        "subtest": subtest,
        "outcome": outcome,
        "confirmation": extra.get("confirmation", "confirmed" if outcome == "host_fallback" else None),
        "host_fallback_ops": ops,
        "host_fallback_calls": calls,
        "device_compiles": extra.get("compiles", 1),
        "device_compiles_timed": extra.get("timed", 0),
    }


ROWS = pd.DataFrame(
    [
        _row("torch.nonzero", "test_a", "host_fallback", ["aten::nonzero"], 2),
        _row("torch.nonzero", "test_b", "host_fallback", ["aten::nonzero"], 4, timed=1),
        _row("torch.unique", "test_a", "host_fallback", ["aten::_unique2", "aten::nonzero"], 2),
        _row(
            "torch.unique", "test_b", "host_fallback", ["aten::_unique2"], 9, confirmation="order_dependent"
        ),
        _row("torch.argsort", "test_a", "passed", [], 0, compiles=3),
        _row("torch.to_sparse", "test_a", "failed", ["aten::_to_sparse"], 1),
    ]
)


def test_setting_summary_counts_confirmed_fallbacks_and_recompiles() -> None:
    summary = setting_summary(ROWS).iloc[0]
    assert (summary["n_functions"], summary["n_subtests"]) == (4, 6)
    # the order-dependent host fallback (it ran on the device alone) is not counted
    assert (summary["rows_host_fallback"], summary["functions_with_host_fallback"]) == (3, 2)
    assert (summary["rows_passed"], summary["rows_failing"]) == (1, 1)
    assert summary["distinct_fallback_ops"] == 3
    assert summary["rows_recompiled_in_timed_call"] == 1
    assert summary["median_compiles_per_subtest"] == 1.0


def test_top_functions_rank_by_host_executions_and_name_the_ops() -> None:
    top = top_functions(ROWS)
    # torch.unique's second fallback did not recur alone (order-dependent): its 9 calls do not count
    assert list(top["function"]) == ["torch.nonzero", "torch.unique", "torch.to_sparse"]
    unique = top.iloc[1]
    assert (unique["host_fallback_calls"], unique["subtests_host_fallback"]) == (2, 1)
    assert unique["ops"] == "aten::_unique2, aten::nonzero"
    assert "torch.argsort" not in set(top["function"])
    assert len(top_functions(ROWS, limit=1)) == 1


def test_fallback_ops_by_functions() -> None:
    ops = fallback_ops(ROWS)
    assert list(ops["op"]) == ["aten::nonzero", "aten::_unique2", "aten::_to_sparse"]
    assert list(ops["n_functions"]) == [2, 1, 1]
    assert ops.iloc[0]["functions"] == "torch.nonzero, torch.unique"
