"""Import the study's raw results (Mince et al. 2023) as result shards with source "mince2023".

Input: the study's published files (docs/METHOD.md "The raw data of the study"), read-only:
`<fw>_timings/<machine>/[<device>/]<device>_<run>.json` (per subtest "<file>:<test>" ->
{"operations": [seconds], "test_time": seconds}), pytest-json-report `test_failure_report.json`
files, and `study_function_map.json` (test file -> qualified name). Output: one results shard
`<out_dir>/<run_id>.parquet` and one runs row `<runs_out>/<run_id>.parquet` per run set.

Decisions (each one keeps a quirk of the raw data visible rather than smoothing it over):

- Grain: one shard per framework x machine x device, `repeat` = run index (0-based, from the
  sorted `_<run>` numbers). This is the grain of the project's own runner (one run, N repeats,
  one shard) and the one the study's latency rule needs ("timings in every run" is a property of
  the run set, checked against runs.repeats). run_id = mince2023-<framework>-<machine>-<device>.
- Which files: only `<machine>/.../<device>_<n>.json` under the machines t4_vm (T4), a100_vm
  (A100), tpu_vm (TPU v3-8), tpu_v2 / tpu_v2_vm (TPU v2-8). Left out, and logged: top-level files
  (PyTorch gpu_cpu_vm.json, tpu_cpu_vm*.json; TF cpu.json, gpu.json, cpu_vm_*.json, tpu_1/2.json),
  whose machine and run are not recorded; TF soft_placement/ and tpu_vm_soft/, run with soft
  device placement on, which the method forbids (ops may fall back to the CPU silently);
  soft_placement/tpu is a byte copy of tpu_vm_soft.
- PyTorch device-generic tests carry the device in the name. A run file holds the CPU variants
  (`_cpu`) beside the accelerator's (`_cuda`, `_xla`): they are split into a cpu run of that
  machine (device_model "<machine> CPU") and the accelerator run. The device token is the last
  `_cuda|_xla|_cpu` in the name followed by the end or `_` (the dtype suffix is kept):
  `test_diag_cuda_bool` -> `test_diag_bool`, `test_batchnorm_nhwc_cuda_cpu` -> cpu variant of
  `test_batchnorm_nhwc_cuda`. Names without a token (TestCuda::test_copy_streams) belong to the
  accelerator run. TF and JAX names carry no device; the folder gives it.
- Which report: the one in the timing files' folder where there is one (a later rerun), else the
  machine's top-level one (docs/METHOD.md section 6). A report is used only for the devices it was
  made on (REPORT_COVERAGE, checked in the tests): PyTorch reports hold both the CPU and the
  accelerator variants; TF reports were made on the accelerator (their errors name
  device:GPU:0 / device:TPU:0); the three JAX reports are one file made on the T4 GPU machine.
  So: outcome = the report's where the report covers the device and lists the subtest; "passed"
  where it covers the device and does not list the subtest (the study kept those: TF
  flush_test.py and JAX select_test.py postdate their reports); "unknown" where no report
  covers the device (every A100 and TPU v2 run, the TF and JAX CPU runs, JAX on TPU v3).
- Keys. The study keyed a subtest by its timing key "<file>:<test>": no test class, and (PyTorch)
  the device token still in the name. Its figures pair a subtest across devices on that key with
  the device token removed, i.e. on (case_id, subtest) here. `subtest` keeps exactly that key (the
  test name, device token removed, never the class), so the study's pairing and figures are
  reproduced. A test name shared by several classes of one file (TF's inherited `test_session`,
  collected in every test class; `reduce_mean_test.py:testAxesType`) is therefore one study subtest
  with one timing entry (the last class run overwrote the others) but several report entries.
  `test_id` is the row's own identity, unique per (run_id, test_id, repeat): the report's node id
  (`<path>::<Class>::<test>`, the class kept) wherever a covering report lists the key, one row per
  node id, the timings on the last one in report (= run) order; else "src/<dir>/<file>::<test>",
  since the timing files record no class (an entry is just {"operations", "test_time"}), which is
  unique because a timing file holds each key once. Rows that still share (run_id, test_id,
  repeat) (a report listing one node id twice) cannot be told apart: the import raises, naming the
  file and the key, instead of writing duplicates. Several rows may share (run_id, case_id,
  subtest, repeat), as they shared the study's key.
- Report entries with no timing entry get a row per repeat with no timings (outcome from the
  report).
- Failures: error type and message from pytest's crash record, category and rule from
  `failures.classify_failure` (the JAX `partial_timed()` TypeError is "harness"); the outcome stays
  the report's ("failed", also for the pytest-timeout "Failed: Timeout >1020.0s"). Skipped rows
  keep the skip reason in error_message.
- Functions: test file -> qualified_name from study_function_map.json, 'tf.' spelled
  'tensorflow.' (function and case_id alike). Files marked in_sample=false (JAX PRNG_test.py, a
  duplicate of PRNGKey_test.py, and save_test.py) and files absent from the map (PyTorch
  apply_test.py, TF append_test.py) are left out and logged.
- Versions: TensorFlow 2.11.0, PyTorch 1.12.0, JAX 0.4.8; mode "eager" (JAX ran with jit
  disabled). Seconds become milliseconds. OS and Python come from the covering report's
  environment, else "unknown"; the timeout from a "Timeout >Ns" message in the report, else the
  method's 900 s.
- Deterministic: rows sorted by (test_id, repeat), files written through tableio; the same input
  gives byte-identical files.
- Written once (import_once): an existing shard or runs row is never rewritten. Run again, the
  import says "already imported" where it makes what is there, and refuses, naming each file and
  what differs, where it makes something else (it writes nothing then). A missing or misshapen
  folder is refused naming the path and the layout expected (ReferenceImportError).
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from portability_data.pipeline.import_once import Imported, Planned, import_once
from portability_data.runner.failures import classify_failure

log = logging.getLogger(__name__)

SOURCE = "mince2023"
MODE = "eager"
REPORT_NAME = "test_failure_report.json"
DEFAULT_TIMEOUT_S = 900.0
MESSAGE_LIMIT = 2000

FRAMEWORK_DIRS = {"pytorch_timings": "torch", "tensorflow_timings": "tensorflow", "jax_timings": "jax"}
TEST_DIRS = {
    fw: f"{prefix}_tests_reduced"
    for fw, prefix in (("torch", "pytorch"), ("tensorflow", "tensorflow"), ("jax", "jax"))
}
FRAMEWORK_VERSIONS = {"torch": "1.12.0", "tensorflow": "2.11.0", "jax": "0.4.8"}
# machine folder -> (accelerator device, device model)
MACHINES = {
    "t4_vm": ("gpu", "T4"),
    "a100_vm": ("gpu", "A100"),
    "tpu_vm": ("tpu", "TPU v3-8"),
    "tpu_v2": ("tpu", "TPU v2-8"),
    "tpu_v2_vm": ("tpu", "TPU v2-8"),
}
# Report (relative path) -> devices it was made on. Evidence: PyTorch reports list TestXCPU and
# TestXCUDA / TestXXLA classes; TF errors name device:GPU:0 or device:TPU:0; the JAX reports are
# byte-identical, created 2023-05-04 on the T4 machine (eig: "only implemented on the CPU backend").
REPORT_COVERAGE: dict[str, frozenset[str]] = {
    "pytorch_timings/t4_vm/test_failure_report.json": frozenset({"cpu", "gpu"}),
    "pytorch_timings/tpu_vm/test_failure_report.json": frozenset({"cpu", "tpu"}),
    "tensorflow_timings/t4_vm/test_failure_report.json": frozenset({"gpu"}),
    "tensorflow_timings/t4_vm/gpu/test_failure_report.json": frozenset({"gpu"}),
    "tensorflow_timings/tpu_vm/test_failure_report.json": frozenset({"tpu"}),
    "tensorflow_timings/tpu_vm/tpu/test_failure_report.json": frozenset({"tpu"}),
    "jax_timings/t4_vm/test_failure_report.json": frozenset({"gpu"}),
    "jax_timings/t4_vm/gpu/test_failure_report.json": frozenset({"gpu"}),
    "jax_timings/tpu_vm/test_failure_report.json": frozenset(),  # the T4 file, copied
}
DEVICE_TOKENS = {"cuda": "gpu", "xla": "tpu", "cpu": "cpu"}
_TOKEN = re.compile(r"_(cuda|xla|cpu)(?=_|$)")
_RUN_FILE = re.compile(r"^(cpu|gpu|tpu)_(\d+)\.json$")
_OUTCOMES = {
    "passed": "passed",
    "failed": "failed",
    "skipped": "skipped",
    "error": "error",
    "xfailed": "skipped",
    "xpassed": "passed",
}
_FAILING = ("failed", "error")


LAYOUT = (
    "the study's raw data laid out as <folder>/study_function_map.json and "
    "<folder>/{pytorch,tensorflow,jax}_timings/<machine>/[<device>/]<device>_<run>.json "
    '(docs/METHOD.md, "The raw data of the study"; e.g. ../shared/reference/mince2023)'
)


class ReferenceImportError(ValueError):
    """The study's folder is missing, laid out otherwise, or holds a file the import cannot read:
    the message names the path and what was expected."""


def _json(path: Path) -> Any:
    """A raw JSON file of the study; an unreadable one is named with the reason."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReferenceImportError(f"{path}: cannot be read as JSON ({exc}); expected {LAYOUT}") from None


def check_layout(reference_dir: Path) -> None:
    """Refuse a folder that is not the study's raw data, naming the path and the expected layout."""
    if not reference_dir.is_dir():
        problem = "is not a folder" if reference_dir.exists() else "does not exist"
        raise ReferenceImportError(f"{reference_dir}: {problem}; give the folder of {LAYOUT}")
    if not (reference_dir / "study_function_map.json").is_file():
        raise ReferenceImportError(
            f"{reference_dir}: no study_function_map.json in it; give the folder of {LAYOUT}"
        )
    if not any((reference_dir / name).is_dir() for name in FRAMEWORK_DIRS):
        raise ReferenceImportError(
            f"{reference_dir}: none of {', '.join(sorted(FRAMEWORK_DIRS))} in it; give the folder of {LAYOUT}"
        )


@dataclass
class RunSet:
    """The raw files of one framework x machine x device: run files in order and the report used."""

    framework: str
    machine: str
    device: str
    folder: str
    run_files: list[Path]
    report: Path | None
    report_rel: str | None
    covered: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class ReportEntry:
    """One pytest-json-report test: node id, outcome and error (type, message) where it failed."""

    node_id: str
    outcome: str
    error_type: str | None
    error_message: str | None


def strip_device_token(test_name: str) -> tuple[str, str | None]:
    """(subtest name without the device token, device or None): the last `_cuda|_xla|_cpu`
    followed by the end or `_` is the instantiated device; the dtype suffix after it is kept."""
    matches = list(_TOKEN.finditer(test_name))
    if not matches:
        return test_name, None
    last = matches[-1]
    return test_name[: last.start()] + test_name[last.end() :], DEVICE_TOKENS[last.group(1)]


def qualified(name: str) -> str:
    """The study's 'tf.' prefix spelled as the importable module, 'tensorflow.'."""
    return "tensorflow." + name[3:] if name.startswith("tf.") else name


def load_function_map(reference_dir: Path) -> dict[tuple[str, str], str]:
    """(framework, test file) -> qualified name; in_sample=false extras are left out (logged)."""
    entries = _json(reference_dir / "study_function_map.json")
    mapping = {}
    for entry in entries:
        if entry.get("in_sample") is False:
            log.info(
                "left out %s %s: marked in_sample=false (%s)",
                entry["framework"],
                entry["test_file"],
                entry.get("note", ""),
            )
            continue
        mapping[(entry["framework"], entry["test_file"])] = qualified(entry["qualified_name"])
    return mapping


def find_run_sets(reference_dir: Path) -> list[RunSet]:
    """Every run set under the machine folders, with the report that applies (see module doc)."""
    run_sets = []
    for fw_dir, framework in sorted(FRAMEWORK_DIRS.items()):
        root = reference_dir / fw_dir
        if not root.is_dir():
            continue
        for item in sorted(root.iterdir()):
            if item.is_file() and item.suffix == ".json":
                log.info(
                    "left out %s: top-level file, machine and run not recorded",
                    item.relative_to(reference_dir),
                )
                continue
            if item.name not in MACHINES:
                log.info(
                    "left out %s/: not a machine folder of the method (soft placement)",
                    item.relative_to(reference_dir),
                )
                continue
            groups: dict[tuple[Path, str], list[tuple[int, Path]]] = defaultdict(list)
            for path in item.rglob("*.json"):
                match = _RUN_FILE.match(path.name)
                if match:
                    groups[(path.parent, match.group(1))].append((int(match.group(2)), path))
            for (folder, device), files in sorted(groups.items()):
                report = folder / REPORT_NAME if (folder / REPORT_NAME).exists() else item / REPORT_NAME
                report_rel = report.relative_to(reference_dir).as_posix() if report.exists() else None
                covered = REPORT_COVERAGE.get(report_rel, frozenset()) if report_rel else frozenset()
                if report_rel and report_rel not in REPORT_COVERAGE:
                    log.warning(
                        "report %s has no known coverage; its run set is imported as unknown", report_rel
                    )
                run_sets.append(
                    RunSet(
                        framework=framework,
                        machine=item.name,
                        device=device,
                        folder=folder.relative_to(reference_dir).as_posix(),
                        run_files=[path for _, path in sorted(files)],
                        report=report if report_rel else None,
                        report_rel=report_rel,
                        covered=covered,
                    )
                )
    return run_sets


def _split_crash(text: str) -> tuple[str | None, str]:
    """'pkg.mod.SomeError: message' -> ('SomeError', 'message'); plain text -> (None, text)."""
    head, sep, rest = text.partition(":")
    if sep and re.fullmatch(r"[A-Za-z_][\w.]*", head.strip()):
        return head.strip().rsplit(".", 1)[-1], rest.strip()
    return None, text.strip()


def _report_entry(test: dict[str, Any]) -> ReportEntry:
    outcome = _OUTCOMES.get(test.get("outcome", ""), "failed")
    error_type = error_message = None
    phases = [test.get(name) or {} for name in ("setup", "call", "teardown")]
    if outcome in _FAILING:
        phase = next((p for p in phases if p.get("outcome") == "failed"), {})
        crash = phase.get("crash") or {}
        longrepr = str(phase.get("longrepr", ""))
        e_lines = [ln[1:].strip() for ln in longrepr.splitlines() if ln.startswith("E ")]
        if crash.get("message"):
            error_type, error_message = _split_crash(crash["message"])
            if "unexpected exception above" in error_message and e_lines:
                # torch's comparison wraps the real error; the first E line of the traceback holds it.
                error_message = f"[caused by] {e_lines[0]}\n{error_message}"
        else:
            error_type, error_message = _split_crash(e_lines[0] if e_lines else longrepr)
    elif outcome == "skipped":
        phase = next((p for p in phases if p.get("outcome") == "skipped"), {})
        error_message = str(phase.get("longrepr") or "") or None
    return ReportEntry(test["nodeid"], outcome, error_type, error_message)


def load_report(path: Path) -> tuple[dict[str, list[ReportEntry]], dict[str, Any], float | None]:
    """Report entries keyed like the timing files ("<file>:<test>", in run order), the
    environment, and the per-test timeout seen in a "Timeout >Ns" message (None if none)."""
    report = _json(path)
    entries: dict[str, list[ReportEntry]] = defaultdict(list)
    timeout = None
    for test in report.get("tests", []):
        parts = test["nodeid"].split("::")
        key = f"{parts[0].rsplit('/', 1)[-1]}:{parts[-1]}"
        entry = _report_entry(test)
        entries[key].append(entry)
        found = re.search(r"Timeout >\s*([\d.]+)s", entry.error_message or "")
        if found:
            timeout = float(found.group(1))
    return dict(entries), report.get("environment", {}), timeout


def _subtest_device(framework: str, test_name: str, run_device: str) -> tuple[str, str]:
    """(subtest, device of the variant); TF and JAX names have no device token."""
    if framework != "torch":
        return test_name, run_device
    subtest, device = strip_device_token(test_name)
    return subtest, device or run_device


def _rows_for_run_set(
    run_set: RunSet, function_map: dict[tuple[str, str], str], reference_dir: Path
) -> dict[str, tuple[list[dict[str, Any]], dict[str, Any]]]:
    """Rows per device of one run set (PyTorch splits off the CPU variants), plus run facts."""
    framework = run_set.framework
    _, accelerator_model = MACHINES[run_set.machine]
    runs = [_json(path) for path in run_set.run_files]
    entries, environment, timeout = load_report(run_set.report) if run_set.report else ({}, {}, None)
    test_dir = TEST_DIRS[framework]
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    unmapped: set[str] = set()
    # (run_id, test_id, repeat) -> (raw file, key) of the row that took it: two rows the raw data
    # cannot tell apart stop the import rather than enter the dataset twice.
    seen: dict[tuple[str, str, int], tuple[str, str]] = {}
    run_files_rel = [path.relative_to(reference_dir).as_posix() for path in run_set.run_files]

    def device_model(device: str) -> str:
        return f"{run_set.machine} CPU" if device == "cpu" else accelerator_model

    def base_row(key: str) -> dict[str, Any] | None:
        test_file, test_name = key.split(":", 1)
        function = function_map.get((framework, test_file))
        if function is None:
            unmapped.add(test_file)
            return None
        subtest, device = _subtest_device(framework, test_name, run_set.device)
        return {
            "run_id": run_id_for(framework, run_set.machine, device),
            "source": SOURCE,
            "case_id": function,
            "framework": framework,
            "function": function,
            "subtest": subtest,
            "device": device,
            "device_model": device_model(device),
            "mode": MODE,
            "framework_version": FRAMEWORK_VERSIONS[framework],
            "_classless_id": f"src/{test_dir}/{test_file}::{test_name}",
        }

    def outcome_fields(key: str, device: str) -> list[dict[str, Any]]:
        """One dict per report node id for this key (one if the report does not list it)."""
        if device not in run_set.covered:
            return [{"test_id": None, "outcome": "unknown", "error_type": None, "error_message": None}]
        listed = entries.get(key)
        if not listed:
            return [{"test_id": None, "outcome": "passed", "error_type": None, "error_message": None}]
        return [
            {
                "test_id": e.node_id,
                "outcome": e.outcome,
                "error_type": e.error_type,
                "error_message": e.error_message,
            }
            for e in listed
        ]

    def emit(base: dict[str, Any], repeat: int, ops: list[float], test_time: float | None, key: str) -> None:
        variants = outcome_fields(key, base["device"])
        for index, variant in enumerate(variants):
            row = {k: v for k, v in base.items() if k != "_classless_id"}
            row.update(variant)
            row["test_id"] = variant["test_id"] or base["_classless_id"]
            row["repeat"] = repeat
            origin = run_set.report_rel if variant["test_id"] else run_files_rel[repeat]
            identity = (row["run_id"], row["test_id"], repeat)
            if identity in seen:
                first_file, first_key = seen[identity]
                raise ReferenceImportError(
                    f"{origin}: key {key!r} gives test_id {row['test_id']!r} (run {row['run_id']}, "
                    f"repeat {repeat}) a second time (first from {first_file}, key {first_key!r}); "
                    "the raw data cannot tell these rows apart"
                )
            seen[identity] = (str(origin), key)
            # The timing entry belongs to the last class run (later ones overwrote earlier ones).
            last = index == len(variants) - 1
            row["op_latencies_ms"] = [float(s) * 1000.0 for s in ops] if last else []
            timed = last and test_time is not None
            row["test_time_ms"] = float(test_time) * 1000.0 if timed else None
            if row["outcome"] in _FAILING:
                # Classified on the whole message (causes sit deep in TF graph errors), stored cut.
                row["failure_category"], row["failure_rule"] = classify_failure(
                    framework, row["error_type"] or "", row["error_message"] or ""
                )
            else:
                row["failure_category"] = row["failure_rule"] = None
            if row["error_message"] is not None:
                row["error_message"] = row["error_message"][:MESSAGE_LIMIT]
            rows[row["device"]].append(row)

    timed_keys: set[str] = set()
    for repeat, timings in enumerate(runs):
        for key, value in timings.items():
            base = base_row(key)
            if base is None:
                continue
            timed_keys.add(key)
            emit(base, repeat, value.get("operations") or [], value.get("test_time"), key)
    # Report entries that never recorded a timing entry: one row per repeat, no timings.
    for key in sorted(set(entries) - timed_keys):
        base = base_row(key)
        if base is None or base["device"] not in run_set.covered:
            continue
        if framework != "torch" and base["device"] != run_set.device:
            continue
        if framework == "torch" and base["device"] not in (run_set.device, "cpu"):
            continue
        for repeat in range(len(runs)):
            emit(base, repeat, [], None, key)
    for test_file in sorted(unmapped):
        log.info(
            "left out %s rows of %s/%s: test file not mapped (absent from the map or in_sample=false)",
            framework,
            run_set.folder,
            test_file,
        )

    result = {}
    for device, device_rows in sorted(rows.items()):
        covered = device in run_set.covered
        packages = {framework: FRAMEWORK_VERSIONS[framework]}
        if covered:
            packages.update({k: str(v) for k, v in (environment.get("Packages") or {}).items()})
            packages.update({f"pytest-{k}": str(v) for k, v in (environment.get("Plugins") or {}).items()})
        facts = {
            "run_id": run_id_for(framework, run_set.machine, device),
            "source": SOURCE,
            "framework": framework,
            "framework_version": FRAMEWORK_VERSIONS[framework],
            "device": device,
            "device_model": device_model(device),
            "mode": MODE,
            "repeats": len(runs),
            "timeout_s": timeout or DEFAULT_TIMEOUT_S,
            "host": run_set.machine,
            "os": str(environment.get("Platform", "unknown")) if covered else "unknown",
            "python": str(environment.get("Python", "unknown")) if covered else "unknown",
            "cpu_model": "unknown",
            "accelerator": None if device == "cpu" else accelerator_model,
            "driver": None,
            "packages": json.dumps(packages, sort_keys=True),
            "git_commit": None,
            "params_hash": None,
            "timer_floor_ms": None,
            "started_at": None,
            "finished_at": None,
            "status": "complete",
            "n_results": len(device_rows),
        }
        result[device] = (device_rows, facts)
    return result


def run_id_for(framework: str, machine: str, device: str) -> str:
    """mince2023-<framework>-<machine>-<device>: derived from the raw files' path, stable."""
    return f"{SOURCE}-{framework}-{machine}-{device}"


RESULT_COLUMNS = (
    "run_id",
    "source",
    "case_id",
    "framework",
    "function",
    "test_id",
    "subtest",
    "repeat",
    "outcome",
    "failure_category",
    "failure_rule",
    "error_type",
    "error_message",
    "op_latencies_ms",
    "test_time_ms",
    "device",
    "device_model",
    "mode",
    "framework_version",
)


def build_reference(reference_dir: Path) -> dict[str, tuple[pd.DataFrame, dict[str, Any]]]:
    """run_id -> (results frame, runs row) for every run set; nothing is written."""
    reference_dir = Path(reference_dir)
    function_map = load_function_map(reference_dir)
    built: dict[str, tuple[pd.DataFrame, dict[str, Any]]] = {}
    for run_set in find_run_sets(reference_dir):
        for _device, (rows, facts) in _rows_for_run_set(run_set, function_map, reference_dir).items():
            run_id = facts["run_id"]
            if run_id in built:
                raise ValueError(f"two run sets give run_id {run_id!r}; the naming rule needs a new part")
            frame = pd.DataFrame(rows, columns=list(RESULT_COLUMNS))
            frame = frame.sort_values(["test_id", "repeat"], kind="stable").reset_index(drop=True)
            built[run_id] = (frame, facts)
    return built


def import_reference(reference_dir: Path, out_dir: Path, runs_out: Path | None = None) -> Imported:
    """Write one results shard per run set to out_dir/<run_id>.parquet and its runs row to
    runs_out/<run_id>.parquet (default: <out_dir>/../../runs/<out_dir name>, i.e. data/runs/mince2023
    for data/results/mince2023). Never rewrites one (import_once: the study's shards are immutable
    and their run ids its own): what is there must be what the import makes, else nothing is
    written (ImportConflictError names each file and what differs)."""
    reference_dir, out_dir = Path(reference_dir), Path(out_dir)
    runs_out = Path(runs_out) if runs_out is not None else out_dir.parent.parent / "runs" / out_dir.name
    check_layout(reference_dir)
    built = build_reference(reference_dir)
    if not built:
        raise ReferenceImportError(f"{reference_dir}: no run files found in it; expected {LAYOUT}")
    planned = []
    for run_id, (frame, facts) in sorted(built.items()):
        planned.append(Planned("results", frame, out_dir / f"{run_id}.parquet"))
        planned.append(Planned("runs", pd.DataFrame([facts]), runs_out / f"{run_id}.parquet"))
    fix = (
        f"to see what this import makes, import into a scratch folder (--out <tmp>/results/{out_dir.name} "
        f"--runs-out <tmp>/runs/{out_dir.name}); to replace the study's shards on purpose, `git rm` them "
        "and their runs rows in a reviewed change that says why, then import again (where only "
        "failure_category or failure_rule differ, today's rules read the study's messages otherwise: "
        "aggregate already reads every failing row with today's rules, so nothing needs importing)"
    )
    return import_once(planned, fix)
