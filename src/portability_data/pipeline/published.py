"""Import the study's printed numbers (Mince et al. 2023) as a table of ours, `published`.

Input: a transcription of what the paper prints, `published_tables.json` (a file, or a folder
holding one): the per-function latency tables (appendix Tables 5-7: T4 vs TPU v3-8, ms and the
TPU/GPU ratio), the outcome counts of appendix Table 8, and figures stated in the text. Output: one
row per printed value with where it is printed, what it measures, and its text, number and printed
precision, so that `reproduction` can set ours beside each one. The JSON itself is not part of the
dataset; the table is (source `mince2023-published`).

Decisions:
- Numbers are read as decimals, never floats, so "0.10" keeps its text and its two decimals.
- Precision: a table that states its rounding ("rounded to 3 decimals") gives every value of it
  that precision (948.21 printed at 3 decimals is 948.210); a literal with more decimals than
  stated is malformed. Elsewhere the precision is the literal's own.
- Devices: the study's main machines, gpu = T4 and tpu = TPU v3-8 (docs/METHOD.md section 5); the
  sentences name other models where they mean them (A100 in Table 3).
- Sentences are read by explicit rules (TEXT_RULES); a sentence no rule reads stops the import
  naming its field, rather than entering the table half-understood.
- Any malformed field stops the import with the file and the field (PublishedImportError).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.pipeline.import_once import Imported, Planned, import_once
from portability_data.tables.contracts import FRAMEWORKS

SOURCE = "mince2023-published"
FILE_NAME = "published_tables.json"
MODELS = {"gpu": "T4", "tpu": "TPU v3-8"}
FRAMEWORK_WORDS = {"pytorch": "torch", "tensorflow": "tensorflow", "jax": "jax"}
PREFIXES = {"torch": "torch", "tf": "tensorflow", "tensorflow": "tensorflow", "jax": "jax"}
# key -> (quantity, device, reference device, unit): every value of the table is over the subtests
# that passed with timings on both devices, so each one is paired with the other device.
LATENCY_FIELDS = (
    ("gpu_ms", "latency_ms", "gpu", "tpu", "ms"),
    ("tpu_ms", "latency_ms", "tpu", "gpu", "ms"),
    ("ratio", "ratio", "tpu", "gpu", "ratio"),
)
COUNT_FIELDS = ("success", "partial_failure", "complete_failure", "n_functions")
_NAME = re.compile(r"^[A-Za-z_][\w.]*(\(\))?$")
_STATED_ROUNDING = re.compile(r"rounded to (\d+) decimals?")


class PublishedImportError(ValueError):
    """The transcription is malformed: names the file and the field."""

    def __init__(self, path: Path | str, field: str, problem: str) -> None:
        self.path, self.field = str(path), field
        super().__init__(f"{path}: field {field}: {problem}")


def _decimals(number: Decimal) -> int:
    return max(0, -int(number.as_tuple().exponent))


class _Reader:
    """Typed access to the JSON with errors that name the file and the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, field: str, problem: str) -> PublishedImportError:
        return PublishedImportError(self.path, field, problem)

    def get(self, obj: Any, key: str, where: str) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(where, f"expected an object, got {type(obj).__name__}")
        if key not in obj:
            raise self.fail(f"{where}.{key}" if where else key, "missing")
        return obj[key]

    def text(self, obj: Any, key: str, where: str) -> str:
        value = self.get(obj, key, where)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{where}.{key}", f"expected a non-empty string, got {value!r}")
        return value

    def number(self, obj: Any, key: str, where: str) -> Decimal:
        value = self.get(obj, key, where)
        if not isinstance(value, Decimal) or not value.is_finite():
            raise self.fail(f"{where}.{key}", f"expected a number, got {value!r}")
        if value < 0:
            raise self.fail(f"{where}.{key}", f"expected a number >= 0, got {value}")
        return value

    def rows(self, obj: Any, key: str) -> list[Any]:
        section = self.get(obj, key, "")
        rows = self.get(section, "rows", key)
        if not isinstance(rows, list) or not rows:
            raise self.fail(f"{key}.rows", "expected a non-empty list")
        return rows


def load_json(path: Path) -> tuple[Path, dict[str, Any]]:
    """(file, parsed JSON with numbers as Decimal); a folder means its published_tables.json."""
    path = Path(path)
    file = path / FILE_NAME if path.is_dir() else path
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise PublishedImportError(
            file,
            "(file)",
            f"cannot be read ({exc.strerror or exc}); give {FILE_NAME} or a folder holding it "
            "(e.g. ../shared/reference/mince2023)",
        ) from None
    try:
        data = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except json.JSONDecodeError as exc:
        raise PublishedImportError(file, "(file)", f"not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PublishedImportError(file, "(top level)", "expected an object")
    return file, data


def _row(
    value_id: str,
    table: str,
    location: str,
    framework: str,
    quantity: str,
    number: Decimal,
    decimals: int,
    unit: str,
    context: str,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "source": SOURCE,
        "value_id": value_id,
        "published_table": table,
        "location": location,
        "framework": framework,
        "device": extra.get("device"),
        "device_model": extra.get("device_model") or MODELS.get(extra.get("device") or ""),
        "reference_device": extra.get("reference_device"),
        "reference_device_model": extra.get("reference_device_model")
        or MODELS.get(extra.get("reference_device") or ""),
        "printed_name": extra.get("printed_name"),
        "quantity": quantity,
        "relation": extra.get("relation", "equals"),
        "value_text": format(number, "f"),
        "value": float(number),
        "decimals": decimals,
        "unit": unit,
        "context": context,
    }


def latency_rows(reader: _Reader, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Appendix Tables 5-7: per function, GPU ms, TPU ms and the printed TPU/GPU ratio."""
    rows = reader.rows(data, "per_function_latency")
    caption = reader.text(data["per_function_latency"], "what", "per_function_latency")
    stated = _STATED_ROUNDING.search(caption)
    out = []
    for index, entry in enumerate(rows):
        where = f"per_function_latency.rows[{index}]"
        name = reader.text(entry, "function", where)
        framework = PREFIXES.get(name.split(".", 1)[0])
        if framework is None or not _NAME.match(name):
            raise reader.fail(f"{where}.function", f"not a torch/tf/jax function name: {name!r}")
        for key, quantity, device, reference, unit in LATENCY_FIELDS:
            number = reader.number(entry, key, where)
            decimals = int(stated.group(1)) if stated else _decimals(number)
            if _decimals(number) > decimals:
                raise reader.fail(f"{where}.{key}", f"{number} has more decimals than the stated {decimals}")
            out.append(
                _row(
                    f"/per_function_latency/rows/{index}/{key}",
                    "per_function_latency",
                    "appendix Tables 5-7",
                    framework,
                    quantity,
                    number,
                    decimals,
                    unit,
                    caption,
                    device=device,
                    reference_device=reference,
                    printed_name=name,
                )
            )
    return out


def outcome_rows(reader: _Reader, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Appendix Table 8: functions per outcome per framework and device, and n."""
    rows = reader.rows(data, "outcome_counts")
    caption = reader.text(data["outcome_counts"], "what", "outcome_counts")
    out = []
    for index, entry in enumerate(rows):
        where = f"outcome_counts.rows[{index}]"
        framework = reader.text(entry, "framework", where)
        if framework not in FRAMEWORKS:
            raise reader.fail(
                f"{where}.framework", f"expected one of {', '.join(FRAMEWORKS)}, got {framework!r}"
            )
        device = reader.text(entry, "device", where)
        if device not in MODELS:
            raise reader.fail(f"{where}.device", f"expected gpu or tpu, got {device!r}")
        for quantity in COUNT_FIELDS:
            key = "n" if quantity == "n_functions" else quantity
            number = reader.number(entry, key, where)
            if number != number.to_integral_value():
                raise reader.fail(f"{where}.{key}", f"a count must be a whole number, got {number}")
            out.append(
                _row(
                    f"/outcome_counts/rows/{index}/{key}",
                    "outcome_counts",
                    "appendix Table 8",
                    framework,
                    quantity,
                    number,
                    0,
                    "functions",
                    caption,
                    device=device,
                )
            )
    return out


# --------------------------------------------------------------------------- sentences

_FW = r"(TensorFlow|PyTorch|JAX)"
_NUM = r"(\d+(?:\.\d+)?)"
_DEV = r"(GPU|TPU)s?"


def _fw(word: str) -> str:
    return FRAMEWORK_WORDS[word.lower()]


def _listed(text: str, pattern: str) -> list[tuple[str, str]]:
    """'51 TensorFlow, 43 PyTorch and 61 JAX' -> [('51', 'tensorflow'), ...]; the whole text must parse."""
    items = re.split(r",\s*|\s+and\s+", text.strip())
    found = [re.fullmatch(pattern, item.strip()) for item in items]
    if not items or not all(found):
        raise ValueError(f"cannot read the list {text!r}")
    return [(m.group(1), _fw(m.group(2))) for m in found if m]


Value = dict[str, Any]


def _failing_share(m: re.Match[str]) -> list[Value]:
    return [
        {
            "framework": _fw(m[1]),
            "device": m[2].lower(),
            "quantity": "pct_failing",
            "number": m[3],
            "unit": "%",
            "location": m[4],
        }
    ]


def _complete_share(m: re.Match[str]) -> list[Value]:
    return [
        {
            "framework": _fw(m[1]),
            "device": device.lower(),
            "quantity": "pct_complete_failure",
            "number": number,
            "unit": "%",
            "location": m[6],
        }
        for number, device in ((m[2], m[3]), (m[4], m[5]))
    ]


def _timed_on_both(m: re.Match[str]) -> list[Value]:
    return [
        {
            "framework": fw,
            "device": m[4].lower(),
            "reference_device": m[3].lower(),
            "quantity": "n_timed_on_both",
            "number": n,
            "unit": "functions",
            "location": m[1],
        }
        for n, fw in _listed(m[2], rf"{_NUM} {_FW}")
    ]


def _slower_share(m: re.Match[str]) -> list[Value]:
    return [
        {
            "framework": fw,
            "device": m[2].lower(),
            "reference_device": m[3].lower(),
            "quantity": "pct_slower_on_device",
            "number": n,
            "unit": "%",
            "location": "text",
        }
        for n, fw in _listed(m[1], rf"{_NUM}% of {_FW}")
    ]


def _generation_bound(m: re.Match[str]) -> list[Value]:
    frameworks = [_fw(w) for w in re.split(r",\s*|\s+and\s+", m[4].strip())]
    return [
        {
            "framework": fw,
            "device": "gpu",
            "device_model": m[2],
            "reference_device": "gpu",
            "reference_device_model": m[1],
            "quantity": "max_outcome_share_difference_pct",
            "number": m[3],
            "unit": "%",
            "location": m[5],
            "relation": "at_most",
        }
        for fw in frameworks
    ]


# Each rule: a sentence pattern and what its numbers are. Extend here for a new sentence.
TEXT_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], list[Value]]]] = [
    (
        re.compile(rf"^{_FW} on {_DEV}: {_NUM}% complete and partial failures \((Table \d+)\)$"),
        _failing_share,
    ),
    (
        re.compile(
            rf"^{_FW}: {_NUM}% complete failure on the {_DEV} and {_NUM}% on the {_DEV} \((Table \d+)\)$"
        ),
        _complete_share,
    ),
    (re.compile(rf"^(Figure \d+): (.+) functions timed on both {_DEV} and {_DEV}$"), _timed_on_both),
    (re.compile(rf"^(.+) functions slower on {_DEV} than {_DEV}$"), _slower_share),
    (
        re.compile(
            rf"^(T4|A100) vs (T4|A100) outcome shares differ by at most {_NUM}% for (.+) \((Table \d+)\)$"
        ),
        _generation_bound,
    ),
]


def text_rows(reader: _Reader, data: dict[str, Any]) -> list[dict[str, Any]]:
    """Figures stated in the text, one row per number, read by TEXT_RULES."""
    sentences = reader.get(data, "stated_in_text", "")
    if not isinstance(sentences, list):
        raise reader.fail("stated_in_text", "expected a list of sentences")
    out = []
    for index, sentence in enumerate(sentences):
        where = f"stated_in_text[{index}]"
        if not isinstance(sentence, str):
            raise reader.fail(where, f"expected a sentence, got {sentence!r}")
        values = None
        for pattern, read in TEXT_RULES:
            match = pattern.match(sentence.strip())
            if match:
                try:
                    values = read(match)
                except (ValueError, KeyError) as exc:
                    raise reader.fail(where, f"{exc} in {sentence!r}") from None
                break
        if values is None:
            raise reader.fail(where, f"no rule in published.TEXT_RULES reads {sentence!r}")
        for k, value in enumerate(values):
            number = Decimal(value.pop("number"))
            out.append(
                _row(
                    f"/stated_in_text/{index}#{k}",
                    "stated_in_text",
                    value.pop("location"),
                    value.pop("framework"),
                    value.pop("quantity"),
                    number,
                    _decimals(number),
                    value.pop("unit"),
                    sentence.strip(),
                    **value,
                )
            )
    return out


def build_published(path: Path) -> pd.DataFrame:
    """Every printed value of the transcription at `path` (file or folder), in reading order."""
    file, data = load_json(Path(path))
    reader = _Reader(file)
    try:
        rows = latency_rows(reader, data) + outcome_rows(reader, data) + text_rows(reader, data)
    except InvalidOperation as exc:
        raise PublishedImportError(file, "(number)", str(exc)) from None
    return pd.DataFrame(rows)


def import_published(path: Path, out: Path) -> Imported:
    """The `published import` command: read, validate and write the table (atomically). The table
    is written once (import_once): an `out` already there must hold what the import makes ("already
    imported"), else nothing is written (ImportConflictError names the file and what differs)."""
    frame = build_published(Path(path))
    _, data = load_json(Path(path))
    citation = data.get("source") if isinstance(data.get("source"), str) else ""
    fix = (
        "to see what this import makes, import into a scratch file (--out <tmp>/published.parquet); to "
        f"replace {out} on purpose, `git rm` it in a reviewed change that says why, then import again"
    )
    return import_once([Planned("published", frame, Path(out), {"citation": citation})], fix)
