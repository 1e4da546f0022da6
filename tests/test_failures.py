"""The failure rule file: every rule classifies its own example, the file's format is checked,
and the study's categories stay the only categories."""

from __future__ import annotations

from pathlib import Path

import pytest

from portability_data.runner.failures import (
    SECTIONS,
    RuleFileError,
    classify_failure_detail,
    load_rules,
    rules_for,
)
from portability_data.tables import contracts


def _all_rules() -> list[tuple[str, object]]:
    sections = load_rules()
    return [(section, rule) for section in SECTIONS for rule in sections[section]]


@pytest.mark.parametrize(("section", "rule"), _all_rules(), ids=lambda v: getattr(v, "rule_id", v))
def test_every_rule_classifies_its_own_example(section: str, rule) -> None:
    """A rule shadowed by an earlier one (or a pattern that misses its own example) fails here."""
    frameworks = [section] if section in contracts.FRAMEWORKS else list(contracts.FRAMEWORKS)
    error_type, message = rule.example
    for framework in frameworks:
        category, rule_id, subcategory = classify_failure_detail(framework, error_type, message)
        assert rule_id == rule.rule_id, f"{framework}: example of {rule.rule_id} went to {rule_id}"
        assert (category, subcategory) == (rule.category, rule.subcategory)


def test_categories_are_the_studys_and_subcategories_refine_them() -> None:
    for _, rule in _all_rules():
        assert rule.category in contracts.FAILURE_CATEGORIES
    assert {r.subcategory for _, r in _all_rules()} >= {"compile_limitation", "wrong_result", "dropped_check"}


def test_order_common_then_framework_then_fallback() -> None:
    sections = load_rules()
    torch_rules = [r.rule_id for r in rules_for("torch")]
    assert torch_rules[0] == sections["common"][0].rule_id == "harness_partial_timed"
    assert torch_rules[-1] == sections["fallback"][-1].rule_id
    assert not {r.rule_id for r in sections["jax"]} & set(torch_rules)
    assert torch_rules.index("memory_pinned") < torch_rules.index("torch_no_backend_kernel")


def test_unmatched_failure_is_unclassified() -> None:
    assert classify_failure_detail("jax", "KeyError", "'x'") == ("other", "unclassified", None)
    assert classify_failure_detail("torch", "", "", outcome="timeout")[:2] == ("timeout", "outcome_timeout")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("common:\n  - {id: a, category: nonsense, pattern: x, example: {message: x}}\n", "category must be"),
        ("common:\n  - {id: a, category: other, pattern: '(', example: {message: x}}\n", "not a valid regex"),
        ("common:\n  - {id: a, category: other, pattern: x}\n", "needs an example"),
        (
            "common:\n  - {id: a, category: other, pattern: x, example: {message: x}}\n"
            "jax:\n  - {id: a, category: other, pattern: y, example: {message: y}}\n",
            "duplicate rule id",
        ),
        ("- just a list\n", "expected a mapping"),
    ],
)
def test_malformed_rule_file_names_file_rule_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "failures.yaml"
    path.write_text(text)
    with pytest.raises(RuleFileError, match=expected) as info:
        load_rules(path)
    assert str(path) in str(info.value)


def test_tensorflow_conv3d_dilation_message_of_our_cpu_runs_is_a_device_limit() -> None:
    """The message TF 2.21 gives on CPU (seen in our eager run), not only the older wording."""
    message = (
        "{{function_node __wrapped__Conv3D_device_/job:localhost/replica:0/task:0/device:CPU:0}} CPU "
        "implementation of Conv3D currently only supports dilated rates of 1. [Op:Conv3D] name: "
    )
    assert classify_failure_detail("tensorflow", "InvalidArgumentError", message) == (
        "not_implemented",
        "tf_cpu_dilation",
        "device_limit",
    )


def _unclassified_share_per_setting(rows) -> dict[tuple, tuple[int, int]]:
    """(framework, device, mode) -> (unclassified, failing) rows, read with today's rules. A reading
    depends on the framework, outcome, error type and message only: each distinct one is read once
    (60,636 failing rows held 13,604 at 2026-12-07)."""
    failing = rows[rows["outcome"].isin(["failed", "error", "timeout", "crashed", "memory"])]
    out: dict[tuple, tuple[int, int]] = {}
    rules: dict[tuple[str, str, str, str], str] = {}
    for r in failing.itertuples(index=False):
        error_type, message = (v if isinstance(v, str) else "" for v in (r.error_type, r.error_message))
        key = (r.framework, r.outcome, error_type, message)
        if key not in rules:
            rules[key] = classify_failure_detail(r.framework, error_type, message, outcome=r.outcome)[1]
        rule = rules[key]
        unclassified, total = out.get((r.framework, r.device, r.mode), (0, 0))
        out[r.framework, r.device, r.mode] = (unclassified + (rule == "unclassified"), total + 1)
    return out


def _over_the_bar(shares: dict[tuple, tuple[int, int]]) -> dict[tuple, str]:
    return {s: f"{u} of {n} ({100 * u / n:.1f}%)" for s, (u, n) in shares.items() if u / n > 0.05}


def _committed_shards() -> list[Path]:
    """Our committed result shards (git ls-files: a local shard of this machine is not the data)."""
    import subprocess

    root = Path(__file__).parent.parent
    listed = subprocess.run(
        ["git", "ls-files", "data/results/portability"], cwd=root, capture_output=True, text=True
    )
    names = listed.stdout.split() if listed.returncode == 0 else []
    return sorted(root / name for name in names if name.endswith(".parquet"))


def test_the_rules_leave_at_most_five_percent_of_failing_rows_unclassified_in_every_setting() -> None:
    """Every failing row of our committed runs (census and curated, pooled or superseded), classified
    again with today's rules, per framework x device x mode: pooled over settings, a setting at 12%
    hid behind the others (issue 49)."""
    import pandas as pd

    shards = _committed_shards()
    if not shards:
        pytest.skip("no runs of ours committed")
    columns = ["framework", "device", "mode", "outcome", "error_type", "error_message"]
    rows = pd.concat([pd.read_parquet(path, columns=columns) for path in shards], ignore_index=True)
    shares = _unclassified_share_per_setting(rows)
    assert len(shares) >= 2 and not _over_the_bar(shares), _over_the_bar(shares)


def test_the_reports_execution_table_keeps_every_setting_under_the_bar() -> None:
    """The rows the report's "Execution per setting" counts (curated cases, pooled runs): the same
    bar per setting, on the same rows the reader sees."""
    from portability_data.pipeline.aggregate.build import supersede, without_census
    from portability_data.tables.tableio import read_shards, read_table

    shards = _committed_shards()
    if not shards:
        pytest.skip("no runs of ours committed")
    root = Path(__file__).parent.parent

    results = read_shards("results", shards).frame  # as the aggregate stage reads them
    runs = read_table("runs", root / "data" / "runs")
    pooled, _ = supersede(without_census(results), runs, quiet_load_max=1.5)
    shares = _unclassified_share_per_setting(pooled)
    assert len(shares) >= 2 and not _over_the_bar(shares), _over_the_bar(shares)


def test_the_bar_is_per_setting() -> None:
    """A setting at 12% beside a large clean one fails the per-setting check that pooling passes."""
    import pandas as pd

    failing = [("torch", "xla", "compiled", "RuntimeError", "boom")] * 12 + [
        ("torch", "xla", "compiled", "RuntimeError", "Unsupported XLA type 11")
    ] * 88
    failing += [("torch", "cpu", "eager", "RuntimeError", "Unsupported XLA type 11")] * 900
    rows = pd.DataFrame(failing, columns=["framework", "device", "mode", "error_type", "error_message"])
    shares = _unclassified_share_per_setting(rows.assign(outcome="failed"))
    assert sum(u for u, _ in shares.values()) / sum(n for _, n in shares.values()) <= 0.05  # pooled: passes
    assert _over_the_bar(shares) == {("torch", "xla", "compiled"): "12 of 100 (12.0%)"}


def test_bfloat16_refused_by_litert_torchs_converter_is_the_converters_and_by_our_conversion_ours() -> None:
    """The same torch TypeError, two owners: raised inside litert_torch.convert (a bfloat16 module's
    parameters inlined through `Tensor.numpy()`) it is the converter's refusal of the dtype; raised by
    the harness's own NumPy conversion (rows before runner/devices/torch_arrays.py) it is ours."""
    refusal = "Got unsupported ScalarType BFloat16"
    assert classify_failure_detail(
        "torch", "ConvertError", f"conversion to TFLite failed (litert_torch.convert): TypeError: {refusal}"
    ) == ("type_failure", "convert_bfloat16_constant", "export_unsupported_dtype")
    assert classify_failure_detail(  # iree-turbine lifting a large constant to a global (torch.frombuffer)
        "torch", "LowerError", f"lowering to MLIR failed (iree.turbine): TypeError: {refusal}"
    ) == ("type_failure", "lower_bfloat16_constant", "export_unsupported_dtype")
    ours = classify_failure_detail("torch", "TypeError", refusal)
    assert ours[:2] == ("harness", "harness_torch_numpy_bfloat16")
