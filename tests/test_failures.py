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


def test_the_rules_leave_at_most_five_percent_of_our_failing_rows_unclassified() -> None:
    """Every failing row of our committed runs, classified again with today's rules."""
    import pandas as pd

    shards = sorted((Path(__file__).parent.parent / "data" / "results" / "portability").glob("*.parquet"))
    if not shards:
        pytest.skip("no runs of ours committed")
    columns = ["framework", "outcome", "error_type", "error_message"]
    rows = pd.concat([pd.read_parquet(path, columns=columns) for path in shards], ignore_index=True)
    failing = rows[rows["outcome"].isin(["failed", "error", "timeout", "crashed", "memory"])]
    rules = [
        classify_failure_detail(r.framework, r.error_type or "", r.error_message or "", outcome=r.outcome)[1]
        for r in failing.itertuples(index=False)
    ]
    unclassified = sum(rule == "unclassified" for rule in rules)
    assert len(failing) > 0 and unclassified / len(failing) <= 0.05, (unclassified, len(failing))
