"""Import torch_xla's own expectations (the lists of its OpInfo test) as declared rows for device
`xla`, so that the census on xla is set beside what torch_xla itself claims (issue 48).

Input: a folder laid out as `shared/reference/torch_xla/`: `test_ops_lists.json` holds the lists of
pytorch/xla's `test/test_ops.py` at one tag (its `source`: repository, path, tag, commit):
`allowed_opinfo` (entries torch_xla says pass its reference test on XLA), `allowed_fallback_opinfo`
(pass with named ATen ops falling back to the CPU) and `commented_out` (entries commented out in
that file, each with its section and line). The JSON is not part of the dataset; the rows are.

What a row claims, read from that test (the folder's README): for each sample it runs the op on XLA
and on the CPU and compares the two, for float32 and int64 intersected with the entry's dtypes,
with atol = rtol >= 1e-3. So an allowed entry becomes `supported_dtype` rows for those dtypes on
device type `xla`; the entry's dtypes are those its OpInfo declares for the CPU (torch's
`supported_dtypes` falls back to them for a device type with no list of its own, as xla has), read
from the wheel's own declared table (the pinned torch, not torch 2.9: said in `reason`), which also
gives each entry its public function, or why it has none.
An entry commented out under "Failing Ops" is an `expected_failure` on xla; one commented out for
another reason (a duplicate, "worked locally, failing CI", "in theory") is `other`, with the line
as written. An entry no longer in op_db keeps `function` null (`not_in_op_db`), so it is counted,
never joined to a measurement.

The rows join the support matrix as declarations of origin `opinfo` (the database they speak of);
`source` names torch_xla's file and list. The table is written per torch_xla version
(`torch_xla-<tag>.parquet` beside the wheel's declared.parquet) and never rewritten: importing the
same lists again writes nothing; different lists under the same tag are refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.readings.torch_xla import DEVICE_TYPE, FAILING_SECTION

FILE_NAME = "test_ops_lists.json"
TESTED_DTYPES = ("float32", "int64")  # test_ops.py's dtypes, intersected with the entry's
LISTS = ("allowed_opinfo", "allowed_fallback_opinfo", "commented_out")
WHY = {
    "allowed_opinfo": "passes torch_xla's OpInfo test on XLA: each sample on XLA and on the CPU, "
    "compared at atol = rtol >= 1e-3",
    "allowed_fallback_opinfo": "passes torch_xla's OpInfo test on XLA with named ATen ops falling back "
    "to the CPU",
}
DTYPES_FROM = "(the entry's CPU dtypes read from the pinned torch's op_db, not torch 2.9's)"


class TorchXlaImportError(ValueError):
    """The folder or its lists are not what the importer reads: names the path and what to do."""


def read_lists(folder: Path) -> tuple[dict[str, Any], Path]:
    """The lists and the file they came from; a missing or malformed file is a clear error."""
    folder = Path(folder)
    path = folder / FILE_NAME if folder.is_dir() else folder
    if not path.is_file():
        raise TorchXlaImportError(
            f"{path}: not found; pass the folder holding {FILE_NAME} (e.g. ../shared/reference/torch_xla)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TorchXlaImportError(f"{path}: not JSON ({exc})") from None
    missing = [key for key in ("source", *LISTS) if key not in data]
    if missing:
        raise TorchXlaImportError(f"{path}: field(s) {', '.join(missing)} missing")
    for key in ("tag", "commit", "repository", "path"):
        if not isinstance(data["source"].get(key), str) or not data["source"][key]:
            raise TorchXlaImportError(f"{path}: field source.{key} missing or empty")
    for key in LISTS[:2]:
        if not all(isinstance(name, str) and name for name in data[key]):
            raise TorchXlaImportError(f"{path}: field {key}: every item must be an entry name")
    for index, item in enumerate(data["commented_out"]):
        if not isinstance(item, dict) or not all(
            isinstance(item.get(k), str) for k in ("entry", "section", "line")
        ):
            raise TorchXlaImportError(f"{path}: field commented_out[{index}]: needs entry, section and line")
    return data, path


def _source(data: dict[str, Any], listed: str) -> str:
    src = data["source"]
    return f"{src['repository']} {src['path']} at {src['tag']} ({src['commit'][:12]}): {listed}"


def torch_xla_rows(
    data: dict[str, Any], entries: dict[str, dict[str, Any]], framework_version: str
) -> list[dict[str, Any]]:
    """Declared rows of the lists; `entries` maps an OpInfo name (name.variant) to what the wheel's
    declared rows say of it: entry, variant, function, unmapped_reason, cpu_dtypes."""
    rows: list[dict[str, Any]] = []

    def add(name: str, listed: str, declared: str, dtype: str | None, reason: str) -> None:
        known = entries.get(name)
        if known is None:  # op_db no longer has it: split where a variant would be, count it only
            entry, dot, variant = name.rpartition(".")
            entry, variant = (entry, variant) if dot and entry else (name, None)
            known = {"entry": entry, "variant": variant, "function": None, "unmapped_reason": "not_in_op_db"}
        rows.append(
            {
                "framework": "torch",
                "framework_version": framework_version,
                **{key: known[key] for key in ("function", "unmapped_reason", "entry", "variant")},
                "origin": "opinfo",
                "device_type": DEVICE_TYPE,
                "dtype": dtype,
                "declared": declared,
                "aspect": "forward" if declared == "supported_dtype" else None,
                "test_class": "TestOpInfo",
                "test_name": "test_reference_eager",
                "active": True,
                "reason": reason,
                "source": _source(data, listed),
            }
        )

    for listed in LISTS[:2]:
        for name in dict.fromkeys(data[listed]):  # once each, in the file's order
            known = entries.get(name)
            if known is None:
                add(
                    name,
                    listed,
                    "other",
                    None,
                    f"{WHY[listed]}; {name!r} is not an entry of the pinned op_db",
                )
                continue
            dtypes = [d for d in TESTED_DTYPES if d in known["cpu_dtypes"]]
            if not dtypes:
                add(
                    name,
                    listed,
                    "other",
                    None,
                    f"{WHY[listed]}; the entry declares neither float32 nor int64",
                )
            for dtype in dtypes:
                add(name, listed, "supported_dtype", dtype, f"{WHY[listed]} {DTYPES_FROM}")
    seen: set[tuple[str, str]] = set()
    for item in data["commented_out"]:
        name, section = item["entry"], item["section"]
        if (name, section) in seen:
            continue
        seen.add((name, section))
        declared = "expected_failure" if section == FAILING_SECTION else "other"
        add(name, "commented_out", declared, None, f"commented out ({section}): {item['line'].strip()}")
    return rows


def opinfo_entries(wheel: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """name.variant -> entry, variant, function, unmapped_reason and the forward dtypes declared for
    the CPU, of every OpInfo entry in the wheel's declared table."""
    from portability_data.readings.frames import plain_frame

    opinfo = plain_frame(wheel[(wheel["origin"] == "opinfo") & (wheel["framework"] == "torch")])
    found: dict[str, dict[str, Any]] = {}
    columns = [
        "entry",
        "variant",
        "function",
        "unmapped_reason",
        "device_type",
        "dtype",
        "declared",
        "aspect",
    ]
    for row in opinfo[columns].itertuples(index=False):
        variant = None if pd.isna(row.variant) else str(row.variant)
        name = f"{row.entry}.{variant}" if variant else str(row.entry)
        known = found.setdefault(
            name,
            {
                "entry": str(row.entry),
                "variant": variant,
                "function": None if pd.isna(row.function) else str(row.function),
                "unmapped_reason": None if pd.isna(row.unmapped_reason) else str(row.unmapped_reason),
                "cpu_dtypes": set(),
            },
        )
        cpu_forward = row.device_type == "cpu" and row.aspect == "forward"
        if cpu_forward and row.declared == "supported_dtype":
            known["cpu_dtypes"].add(str(row.dtype))
    return found


def out_path(out_dir: Path, data: dict[str, Any]) -> Path:
    """The table of one torch_xla tag: torch_xla-v2.9.0.parquet."""
    return Path(out_dir) / f"torch_xla-{data['source']['tag']}.parquet"


def import_torch_xla(folder: Path, declared_path: Path, out_dir: Path) -> tuple[Path, bool]:
    """The `torch-xla import` command: (the table's path, whether it was written). The same lists
    imported again write nothing; different lists under a tag already imported are refused."""
    from portability_data.tables.tableio import read_file, read_table, to_arrow, write_table

    data, path = read_lists(folder)
    if not Path(declared_path).exists():
        raise TorchXlaImportError(
            f"{declared_path}: not found; run `portability declared` (or dvc repro) first"
        )
    wheel = read_table("declared", Path(declared_path))
    tag = data["source"]["tag"]
    version = tag.removeprefix("v")  # torch_xla X.Y.Z runs with torch X.Y.Z
    frame = pd.DataFrame(torch_xla_rows(data, opinfo_entries(wheel), version))
    out = out_path(out_dir, data)
    if out.exists():
        if read_file("declared", out).equals(to_arrow("declared", frame, source=str(out))):
            return out, False
        raise TorchXlaImportError(
            f"{out}: already holds torch_xla {tag}'s lists, and {path} differs from them; imported "
            "tables are not rewritten: check the lists, and delete the table deliberately to replace it"
        )
    metadata = {"citation": _source(data, FILE_NAME)}
    return write_table("declared", frame, out, metadata=metadata, exclusive=True), True
