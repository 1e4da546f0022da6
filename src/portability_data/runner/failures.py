"""Rule-based failure classifier: exception type + message pattern -> failure category, per framework.

The study annotated failure reasons by hand (docs/METHOD.md section 6); this project assigns them with a
rule table so that the same error always gets the same category and the rule that fired is stored
beside it (results.failure_rule). Rules are tried in order, the common ones (harness, timeout,
memory) first, then the framework's own; the first match wins; nothing matching gives
("other", "unclassified").

Categories (contracts.FAILURE_CATEGORIES):
- type_failure: a dtype is not supported on the device (float64 shown as float32, complex or
  bfloat16 kernel missing, "Element type C128 is not supported on TPU");
- not_implemented: no kernel or no placement for this device or input ("Could not run ... backend",
  TF "Could not satisfy device specification ... Supported device types [CPU]", NotImplementedError);
- timeout: the per-test time limit (pytest-timeout's "Failed: Timeout >1020.0s");
- memory: allocation or pinned memory not possible ("Cannot allocate memory", ResourceExhausted,
  aten::_pin_memory has no kernel);
- float_precision: a numeric comparison off by tolerance (assert_close, assertAllClose, gradcheck);
- harness: the timing harness failed, not the function: the study's JAX bug "partial_timed()
  takes 1 positional argument" (docs/METHOD.md section 6). Harness failures do not count against the
  function (aggregate.py);
- other: defects of the reduced test files themselves (absl parameterisation mismatches, a
  NameError in the test module: rules test_parameters, test_name_error; the study counted these
  against the function, so they are not "harness", which would change its latency tables), and
  everything else with rule id "unclassified" (plain assertion mismatches, unexpected passes).

The rules are data: `rules/failures.yaml` (one example message per rule, checked by the tests),
so a reviewer reads and amends them without reading code. Rules may refine a category with a
subcategory (compile_limitation, wrong_result, dropped_check, ...), which results keep in
`failure_subcategory`; the category itself stays one of the study's, so 2023 and now compare.

Decisions: rule order puts the specific before the generic (pinned memory before "Could not run",
dtype messages before NotImplementedError); messages are matched anywhere in the text because
wrapped errors ("AssertionError: ... does not match 'Could not satisfy device ...'") carry the
real cause inside; the exception type is compared by its bare class name.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

UNCLASSIFIED = ("other", "unclassified")
RULES_FILE = Path(__file__).resolve().parent / "rules" / "failures.yaml"
SECTIONS = ("common", "torch", "tensorflow", "jax", "fallback")
CATEGORIES = ("type_failure", "not_implemented", "timeout", "memory", "float_precision", "harness", "other")


class RuleFileError(ValueError):
    """The rule file breaks its format; the message names the file, the rule and the field."""


@dataclass(frozen=True)
class Rule:
    """One row of the rule table: a bare exception type (None: any) and a message regex."""

    rule_id: str
    category: str
    error_type: str | None
    pattern: str
    subcategory: str | None = None
    example: tuple[str, str] | None = None  # (error_type, message) that this rule must classify

    def matches(self, error_type: str, message: str) -> bool:
        if self.error_type is not None and self.error_type != error_type:
            return False
        return self._regex.search(message) is not None

    @functools.cached_property
    def _regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, flags=re.IGNORECASE | re.DOTALL)


def load_rules(path: Path = RULES_FILE) -> dict[str, tuple[Rule, ...]]:
    """The rule file's sections, each a tuple of rules in file order; every problem is named."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise RuleFileError(f"{path}: cannot read the rule file: {exc}") from None
    if not isinstance(data, dict):
        raise RuleFileError(f"{path}: expected a mapping with sections {', '.join(SECTIONS)}")
    problems: list[str] = []
    sections: dict[str, tuple[Rule, ...]] = {}
    seen: set[str] = set()
    for section in SECTIONS:
        rules = []
        for index, entry in enumerate(data.get(section) or []):
            where = f"{path}: {section}[{index}]"
            rule_id = entry.get("id") if isinstance(entry, dict) else None
            if not rule_id:
                problems.append(f"{where}: a rule needs an id")
                continue
            where += f" ({rule_id})"
            if rule_id in seen:
                problems.append(f"{where}: duplicate rule id")
            seen.add(rule_id)
            if entry.get("category") not in CATEGORIES:
                problems.append(f"{where}: category must be one of {', '.join(CATEGORIES)}")
            pattern = entry.get("pattern", "")
            try:
                re.compile(pattern or "")
            except re.error as exc:
                problems.append(f"{where}: pattern is not a valid regex: {exc}")
                continue
            example = entry.get("example")
            if not isinstance(example, dict) or "message" not in example:
                problems.append(f"{where}: every rule needs an example {{error_type, message}}")
                continue
            rules.append(
                Rule(
                    rule_id,
                    entry["category"],
                    entry.get("error_type"),
                    pattern or "",
                    entry.get("subcategory"),
                    (str(example.get("error_type") or ""), str(example.get("message") or "")),
                )
            )
        sections[section] = tuple(rules)
    if problems:
        raise RuleFileError("\n".join(problems))
    return sections


@functools.cache
def rules_for(framework: str) -> tuple[Rule, ...]:
    """The rules tried for a framework, in order: common, the framework's own, fallback."""
    sections = load_rules()
    return sections["common"] + sections.get(framework, ()) + sections["fallback"]


def bare_type(error_type: str) -> str:
    """The class name without its module: 'tensorflow...errors_impl.InvalidArgumentError' -> last part."""
    return (error_type or "").strip().rsplit(".", 1)[-1]


def classify_failure_detail(
    framework: str, error_type: str, error_message: str | None, *, outcome: str | None = None
) -> tuple[str, str, str | None]:
    """(category, rule_id, subcategory) for one failure. `outcome` lets the runner's own verdicts
    (timeout, memory: the worker was killed) decide before any message is read."""
    if not isinstance(error_message, str):  # a null message read back from Parquet (NaN, None)
        error_message = ""
    if outcome == "timeout":
        return "timeout", "outcome_timeout", None
    if outcome == "memory":
        return "memory", "outcome_memory", None
    name = bare_type(error_type)
    message = error_message or ""
    for rule in rules_for(framework if framework in SECTIONS else "common"):
        if rule.matches(name, message):
            return rule.category, rule.rule_id, rule.subcategory
    return (*UNCLASSIFIED, None)


def classify_failure(
    framework: str, error_type: str, error_message: str, *, outcome: str | None = None
) -> tuple[str, str]:
    """(category, rule_id) for one failure (see classify_failure_detail)."""
    category, rule, _ = classify_failure_detail(framework, error_type, error_message, outcome=outcome)
    return category, rule


def rule_table() -> list[dict[str, Any]]:
    """Every rule as a plain record (for the report and the card)."""
    sections = load_rules()
    return [
        {
            "section": section,
            "rule": r.rule_id,
            "category": r.category,
            "subcategory": r.subcategory,
            "error_type": r.error_type,
            "pattern": r.pattern,
        }
        for section in SECTIONS
        for r in sections[section]
    ]
