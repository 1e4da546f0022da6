"""The TensorFlow census manifests (cases/tensorflow/census/<source>.yaml), harvested from the
installed wheel and NumPy, reviewable as data, read by the runner with PyYAML only.

TensorFlow ships no database of sample inputs, so both sources run on the framework-neutral
generator (runner/generator.py), the inputs the JAX census uses:
- tnp: every tf.experimental.numpy function with a NumPy namesake, run at harvest time by NumPy
  on the generator's inputs to learn its arity and the kinds it accepts per dtype, exactly as
  jax.numpy's (frameworks/namesakes.py, the namesake census every framework shares): one function
  name, the same inputs in both frameworks. Functions NumPy takes none of the inputs for are listed
  apart with the reason.
- mapped: the rest of the numeric API (tf.math, tf.nn, tf.linalg, tf.signal, tf.image,
  tf.bitwise, the top level, ...) through cases/tensorflow/census/mapping.yml, written by hand:
  per function its reference, argument adapter and constants, or the reason none is mapped. The
  harvest checks the mapping against the installed wheel and the api table (every function of the
  mapping's modules has exactly one record; every name exists and is public; adapters, references
  and reasons are known), then runs each reference through its adapter on the generator's inputs
  (a child process importing test_mapped.py, where the adapters and small references live) to
  learn the dtypes and kinds it accepts.

Names that are one function object (tf.sin is tf.math.sin) are one function: its record names it,
the others are kept as its aliases, so counts are of functions, not spellings.

Declared support (declared.py's tf_declared_rows): the wheel's kernel registry, see its docstring.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from portability_data.pipeline.api_names import public_names
from portability_data.pipeline.frameworks.manifest import HarvestError, load_census_module, manifest_document
from portability_data.pipeline.frameworks.namesakes import Trials, accepted_kinds, namesake_census
from portability_data.runner.census_rows import census_case_id
from portability_data.runner.generator import KINDS

FRAMEWORK = "tensorflow"
CENSUS_FOLDER = Path("cases") / "tensorflow" / "census"
TNP_PREFIX = "tensorflow.experimental.numpy."
TNP_SOURCE = "tf.experimental.numpy vs numpy on portability_data.runner.generator inputs"
# .yml: the runner reads every *.yaml of a census folder as a manifest (runner/census_rows.py)
MAPPING_FILE = "mapping.yml"
MAPPED_SOURCE = (
    f"cases/tensorflow/census/{MAPPING_FILE}: references on portability_data.runner.generator inputs"
)
MAPPING_VERSION = 1
RECORD_FIELDS = {"reference", "adapter", "args", "kwargs", "prefix", "kinds"}
TRIAL_MEMORY_BYTES = 6 << 30


def public_tf_names(api: pd.DataFrame, version: str) -> frozenset[str]:
    """The installed TensorFlow's public function names from the api table (kind function only);
    refuses a table of another version."""
    public_names(api, FRAMEWORK, version, HarvestError)
    rows = api[(api["framework"] == FRAMEWORK) & (api["kind"] == "function")]
    return frozenset(rows["qualified_name"].astype(str))


def resolve_tf(name: str) -> Any:
    """tensorflow.math.sin -> the function object in the installed wheel (AttributeError if none)."""
    import tensorflow as tf

    found: Any = tf
    for part in name.split(".")[1:]:
        found = getattr(found, part)
    return found


# --------------------------------------------------------------------------- tnp


def tnp_manifest(api: pd.DataFrame, census_params: dict[str, Any]) -> dict[str, Any]:
    """The manifest of tf.experimental.numpy against NumPy: arity and accepted kinds per function,
    from NumPy's trials on the generator's inputs (the same trials as jax.numpy's)."""
    import tensorflow as tf

    public = public_tf_names(api, tf.__version__)
    names = sorted(q.removeprefix(TNP_PREFIX) for q in public if q.startswith(TNP_PREFIX))

    def counterpart(name: str) -> tuple[str, dict[str, Any]] | dict[str, Any]:
        if name.startswith("random."):
            return {"entry": name, "reason": "random", "detail": "draws random numbers"}
        return f"{TNP_PREFIX}{name}", {}

    entries, unmapped = namesake_census(FRAMEWORK, "tnp", names, counterpart)
    # tnp needs NumPy behaviour for its ndarray methods (tnp.sin of an integer tensor raises
    # without it): test_tnp.py enables it with TensorFlow's default, float64 for float functions
    # of integers as in NumPy
    extra = {"numpy_behavior": True, "prefer_float32": False}
    return _manifest("tnp", TNP_SOURCE, entries, unmapped, census_params, extra)


# --------------------------------------------------------------------------- mapped


def read_mapping(path: Path) -> dict[str, Any]:
    """The mapping, checked for its form: version, modules, reasons, mapped and unmapped records."""
    try:
        mapping = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise HarvestError(f"{path}: cannot read the mapping ({exc})") from None
    if not isinstance(mapping, dict) or mapping.get("mapping_version") != MAPPING_VERSION:
        raise HarvestError(f"{path}: not a census mapping of version {MAPPING_VERSION}")
    reasons = mapping.get("reasons") or {}
    for name, record in (mapping.get("mapped") or {}).items():
        if not isinstance(record, dict) or not {"reference", "adapter"} <= set(record):
            raise HarvestError(f"{path}: mapped record {name!r} needs a reference and an adapter")
        unknown = set(record) - RECORD_FIELDS
        if unknown:
            raise HarvestError(
                f"{path}: mapped record {name!r} has unknown field(s) {', '.join(sorted(unknown))}"
            )
        bad_kinds = set(record.get("kinds", [])) - set(KINDS)
        if bad_kinds:
            raise HarvestError(
                f"{path}: mapped record {name!r} names unknown kind(s) {', '.join(sorted(bad_kinds))}"
            )
    for reason, names in (mapping.get("unmapped") or {}).items():
        if reason not in reasons:
            raise HarvestError(
                f"{path}: unmapped reason {reason!r} is not one of `reasons` ({', '.join(reasons)})"
            )
        if not isinstance(names, list):
            raise HarvestError(f"{path}: unmapped reason {reason!r} must list function names")
    return mapping


def load_mapped_module(path: Path) -> Any:
    """test_mapped.py as a module (its adapters and references), without pytest."""
    import hashlib

    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    return load_census_module(path, f"portability_census_tf_mapped_{digest}")


def function_groups(modules: list[str], public: frozenset[str]) -> dict[int, list[str]]:
    """id of the function object -> its public names in the mapping's modules (tf.sin and
    tf.math.sin are one group). tf.experimental.numpy has its own manifest and is left out."""
    groups: dict[int, list[str]] = collections.defaultdict(list)
    for name in sorted(public):
        module = name.rpartition(".")[0]
        inside = module in modules or any(module.startswith(f"{m}.") for m in modules if m != FRAMEWORK)
        if not inside or name.startswith("tensorflow.experimental."):
            continue
        try:
            groups[id(resolve_tf(name))].append(name)
        except AttributeError:
            continue  # in the api table but not importable: reported when a record names it
    return groups


def checked_records(
    mapping: dict[str, Any], path: Path, public: frozenset[str], module: Any
) -> tuple[list[tuple[str, dict[str, Any], list[str]]], list[dict[str, Any]]]:
    """(mapped (name, record, aliases), unmapped rows): every function of the mapping's modules
    has exactly one record; every name, adapter, reference and reason is known."""
    import tensorflow as tf

    groups = function_groups(mapping["modules"], public)
    group_of = {name: key for key, names in groups.items() for name in names}
    seen: dict[int, str] = {}

    def claim(name: str, where: str) -> list[str]:
        if name not in public:
            raise HarvestError(
                f"{path}: {where} {name!r} is not a public function of tensorflow {tf.__version__}"
            )
        try:
            resolve_tf(name)
        except AttributeError:
            raise HarvestError(
                f"{path}: {where} {name!r} does not exist in tensorflow {tf.__version__}"
            ) from None
        if name not in group_of:
            raise HarvestError(f"{path}: {where} {name!r} is outside the mapping's modules")
        key = group_of[name]
        if key in seen:
            raise HarvestError(f"{path}: {where} {name!r} is the function {seen[key]!r} already has a record")
        seen[key] = name
        return [alias for alias in groups[key] if alias != name]

    mapped = []
    for name, record in (mapping.get("mapped") or {}).items():
        aliases = claim(name, "mapped record")
        if record["adapter"] not in module.ADAPTERS:
            raise HarvestError(
                f"{path}: mapped record {name!r} names the unknown adapter {record['adapter']!r} "
                f"(test_mapped.py has {', '.join(module.ADAPTERS)})"
            )
        try:
            module.resolve(record["reference"])
        except (AttributeError, ImportError, KeyError):
            raise HarvestError(
                f"{path}: mapped record {name!r} names the unknown reference {record['reference']!r}"
            ) from None
        mapped.append((name, record, aliases))
    unmapped = []
    for reason, names in (mapping.get("unmapped") or {}).items():
        for name in names:
            aliases = claim(name, f"unmapped ({reason})")
            unmapped.append(
                {"entry": name.removeprefix("tensorflow."), "reason": reason, "function": name}
                | ({"aliases": aliases} if aliases else {})
            )
    missing = sorted(names[0] for key, names in groups.items() if key not in seen)
    if missing:
        raise HarvestError(
            f"{path}: {len(missing)} function(s) of the mapping's modules have no record (map each or "
            f"list it with its reason): {', '.join(missing)}"
        )
    return mapped, unmapped


def mapped_trial_main(module_path: str) -> None:
    """The child process of the mapped trials: one JSON record per line on stdin (entry, reference,
    adapter, constants, kinds), the JSON answer of accepted_kinds per line on stdout."""
    import os
    import resource

    module = load_mapped_module(Path(module_path))
    # TensorFlow's import maps gigabytes of address space: the cap is on what the trials add
    with open(f"/proc/{os.getpid()}/statm") as statm:
        mapped_bytes = int(statm.read().split()[0]) * resource.getpagesize()
    limit = mapped_bytes + TRIAL_MEMORY_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    for line in sys.stdin:
        try:
            entry = json.loads(line)
            adapter = module.ADAPTERS[entry["adapter"]]
            answer = accepted_kinds(
                entry["entry"], module.reference_call(entry), (adapter.arity,), entry.get("kinds")
            )
        except BaseException as error:  # MemoryError escaping the trial loop, and the like
            answer = (None, {}, f"{type(error).__name__}: {str(error)[:200]}")
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def mapped_manifest(
    api: pd.DataFrame, census_params: dict[str, Any], folder: Path = CENSUS_FOLDER
) -> dict[str, Any]:
    """The manifest of the mapping (folder/mapping.yml, adapters and references of
    folder/test_mapped.py): per mapped function the dtypes and kinds its reference accepts."""
    import tensorflow as tf

    path, module_path = Path(folder) / MAPPING_FILE, Path(folder) / "test_mapped.py"
    mapping = read_mapping(path)
    public = public_tf_names(api, tf.__version__)
    module = load_mapped_module(module_path)
    mapped, unmapped = checked_records(mapping, path, public, module)
    code = (
        "from portability_data.pipeline.frameworks.tensorflow.census import mapped_trial_main; "
        f"mapped_trial_main({str(module_path.resolve())!r})"
    )
    trials = Trials(code)
    entries = []
    try:
        for name, record, aliases in mapped:
            entry_name = name.removeprefix("tensorflow.")
            request = {"entry": entry_name, **record}
            arity, kinds, problem = trials.run(json.dumps(request))
            if arity is None:
                reason = "reference_timeout" if problem == "timeout" else "reference_rejects_inputs"
                unmapped.append(
                    {"entry": entry_name, "reason": reason, "function": name, "detail": problem}
                    | ({"aliases": aliases} if aliases else {})
                )
                continue
            constants = {key: record[key] for key in ("prefix", "args", "kwargs") if key in record}
            entries.append(
                {
                    "entry": entry_name,
                    "case_id": census_case_id(FRAMEWORK, "mapped", entry_name),
                    "function": name,
                    "aliases": aliases,
                    "reference": record["reference"],
                    "adapter": record["adapter"],
                    **constants,
                    "arity": arity,
                    "dtypes": sorted(kinds),
                    "kinds": dict(sorted(kinds.items())),
                }
            )
    finally:
        trials.close()
    extra = {"modules": list(mapping["modules"]), "reasons": dict(mapping["reasons"])}
    return _manifest("mapped", MAPPED_SOURCE, entries, unmapped, census_params, extra)


# --------------------------------------------------------------------------- both


def _manifest(
    origin: str,
    source: str,
    entries: list[dict[str, Any]],
    unmapped: list[dict[str, Any]],
    census_params: dict[str, Any],
    extra: dict[str, Any],
) -> dict[str, Any]:
    import tensorflow as tf

    identity = (FRAMEWORK, str(tf.__version__), origin, source)
    tolerances, compiled = census_params["tolerances"], census_params["compiled"]
    return manifest_document(identity, entries, unmapped, tolerances, compiled, extra)


def tf_manifests(api: pd.DataFrame, census_params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every TensorFlow census manifest by source name (cases/tensorflow/census/<source>.yaml)."""
    return {"tnp": tnp_manifest(api, census_params), "mapped": mapped_manifest(api, census_params)}


def module_of(function: str) -> str:
    """tensorflow.math.special.erf -> tensorflow.math; tensorflow.sin -> tensorflow."""
    parts = function.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else parts[0]


def summary_lines(manifest: dict[str, Any]) -> list[str]:
    """Counts for the command's output and the note: functions measured (per module for the
    mapping), (entry, dtype) pairs, unmapped functions per reason (and per module)."""
    entries, unmapped = manifest["entries"], manifest["unmapped"]
    pairs = sum(len(e["dtypes"]) for e in entries)
    lines = [
        f"{manifest['origin']} (tensorflow {manifest['framework_version']}): "
        f"{len(entries) + len(unmapped)} functions, {len(entries)} measured, {pairs} (entry, dtype) pairs, "
        f"{sum(len(e.get('aliases', [])) for e in entries)} aliases"
    ]
    if manifest["origin"] == "mapped":
        measured = collections.Counter(module_of(e["function"]) for e in entries)
        lines.append("measured per module: " + ", ".join(f"{m} {n}" for m, n in sorted(measured.items())))
        not_measured = collections.Counter(module_of(u["function"]) for u in unmapped)
        lines.append("unmapped per module: " + ", ".join(f"{m} {n}" for m, n in sorted(not_measured.items())))
    reasons = collections.Counter(u["reason"] for u in unmapped)
    lines.append("unmapped: " + (", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) or "none"))
    return lines
