"""Pipeline step `declared`: what the installed PyTorch, JAX and TensorFlow wheels declare per device
and dtype.

PyTorch generates much of its own test suite from databases it ships in the wheel
(``torch/testing/_internal``): the OpInfo entries of ``op_db``, the ModuleInfo entries of
``module_db`` and the OptimizerInfo entries of ``optim_db``, each with per-device expected failures,
skips and tolerance overrides (``DecorateInfo``), and for OpInfo the dtypes it supports per device
type; and ``common_mps.py``'s lists of what the MPS backend is expected to fail. These are code, not
data. This step reads them into the ``declared`` table (issue 19), so that what we measure on a
device can be set beside what PyTorch itself says about it. The choices:

- Declarations are read from the live objects, so what the table says is what the test suite
  applies. The MPS lists are the exception: ``common_mps.py`` defines them only when an MPS device is
  present, so they are read from the file with ``ast`` (literal dicts and sets, their comments as
  the reason) and the modifier's two blanket rules (no float64/complex128; complex only for the ops
  in ``SUPPORTED_COMPLEX_OPS``) are applied to every OpInfo entry, once the file shows them (the
  sparse tests' blanket complex128 skip is not: complex128 is already declared absent on MPS).
- Nothing is dropped: a declaration the harvester cannot read (a malformed ``DecorateInfo``, a
  decorator it has no rule for, an MPS list it does not know) becomes an ``unknown`` row that says
  what was found, and an entry whose name maps to no public function keeps ``function`` null with
  the reason (``private_name``, ``not_in_api``).
- Conditions are recorded, not applied: ``DecorateInfo.active_if`` and a ``skipIf`` dependency are
  evaluated where the wheel is read (``active``); a callable condition is decided per test (null).
- Supported dtypes are spelled out per device type as the wheel names it (``cpu`` plus the keys
  of ``OpInfo.dtypesIf``: cuda, rocm, xpu, mps, hpu), with the dtypes the entry does not support
  beside them: forward over the wheel's own universe (``get_all_dtypes()``, what
  ``OpDTypes.unsupported`` tests), backward over the differentiable dtypes
  (``supported_backward_dtypes``' own filter). ModuleInfo declares supported dtypes only (no test
  claims the others fail), OptimizerInfo none.
- ``OpInfo.decorators`` already holds its ``skips`` (``OpInfo.__post_init__`` merges them), so only
  ``decorators`` is read; ModuleInfo and OptimizerInfo merge them the same way.

JAX's rows (its primitive harnesses' `jax_unimplemented` limitations per device and dtype) come
from frameworks/jax/declared.py and sit beside PyTorch's, with JAX's own device names (cpu, gpu, tpu);
TensorFlow's (its kernel registry: CPU and XLA_CPU_JIT kernels per raw op, read per census entry
through the ops its traced graph holds) from frameworks/tensorflow/declared.py, device types cpu
and xla_cpu.

Where the parts live: each framework's readers (pipeline/frameworks, one registry): PyTorch's
frameworks/torch/entries.py (entries, the public functions they test, dtype names), databases.py
(OpInfo, ModuleInfo, OptimizerInfo: decorations and dtype lists), mps.py (the MPS lists and rules),
declared.py (its rows); this module loops over the registry, validates and writes the table (the
`declared` stage).
"""

from __future__ import annotations

import importlib.util
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from portability_data.pipeline.frameworks import FRAMEWORKS
from portability_data.pipeline.frameworks.readers import DeclaredError
from portability_data.tables.contracts import arrow_schema

log = logging.getLogger(__name__)


@dataclass
class HarvestSummary:
    """What a harvest found, for the log and the command's output."""

    rows: int = 0
    seconds: float = 0.0
    entries: Counter[str] = field(default_factory=Counter)
    declared: Counter[str] = field(default_factory=Counter)
    unmapped: Counter[tuple[str, str]] = field(default_factory=Counter)

    def report(self) -> list[str]:
        """Lines for people: rows, entries per origin, declarations per kind, unmapped entries."""
        lines = [f"{self.rows} declaration row(s) in {self.seconds:.1f} s"]
        by_origin = sorted(self.entries.items())
        lines.append("entries: " + ", ".join(f"{origin} {count}" for origin, count in by_origin))
        by_kind = self.declared.most_common()
        lines.append("declared: " + ", ".join(f"{kind} {count}" for kind, count in by_kind))
        by_reason = sorted(self.unmapped.items())
        unmapped = ", ".join(f"{origin}/{why} {count}" for (origin, why), count in by_reason) or "none"
        lines.append("entries without a public function: " + unmapped)
        return lines


def harvest_declared(api: pd.DataFrame) -> tuple[pd.DataFrame, HarvestSummary]:
    """The declared table of the installed torch (validated, declared types) and what it holds."""
    started = time.perf_counter()
    from portability_data.tables.tableio import to_arrow, validate

    frame: pd.DataFrame | None = None
    for readers in FRAMEWORKS.values():  # torch is required; the others where their wheel is installed
        if readers.required or importlib.util.find_spec(readers.module) is not None:
            rows = readers.declared_rows(api)
            frame = rows if frame is None else pd.concat([frame, rows], ignore_index=True)
    if frame is None:
        raise DeclaredError("no framework of the registry (pipeline/frameworks) is installed")
    frame = frame[arrow_schema("declared").names]
    typed = to_arrow("declared", frame).to_pandas(types_mapper=pd.ArrowDtype)
    typed = validate("declared", typed)
    summary = summarize(typed)
    summary.seconds = time.perf_counter() - started
    return typed, summary


def summarize(frame: pd.DataFrame) -> HarvestSummary:
    """Entries per origin, rows per declared kind, entries without a public function per reason."""
    summary = HarvestSummary(rows=len(frame))
    entries = frame[["origin", "entry", "variant", "unmapped_reason"]].drop_duplicates()
    summary.entries = Counter(entries["origin"].astype(str))
    summary.declared = Counter(frame["declared"].astype(str))
    unmapped = entries[entries["unmapped_reason"].notna()]
    summary.unmapped = Counter(zip(unmapped["origin"].astype(str), unmapped["unmapped_reason"].astype(str)))
    return summary


def run_declared(api_path: Path, out: Path) -> HarvestSummary:
    """Pipeline step `declared`: harvest the installed torch and write the table atomically."""
    from portability_data.tables.tableio import read_table, write_table

    api_path = Path(api_path)
    if not api_path.exists():
        raise DeclaredError(f"{api_path} not found; run `portability enumerate` first")
    frame, summary = harvest_declared(read_table("api", api_path))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write_table("declared", frame, Path(out))
    log.info("declared: %d row(s) from torch %s -> %s", summary.rows, frame["framework_version"].iloc[0], out)
    return summary
