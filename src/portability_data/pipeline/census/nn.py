"""The NN-op census manifests (cases/<framework>/census/nn.yaml, TensorFlow and JAX) from the
reviewed mapping cases/nn_ops.yml (issue 60): the neural-network ops the three frameworks share, on
PyTorch's own OpInfo / ModuleInfo samples, each framework held to torch's CPU result of the sample.

The mapping is data a reviewer reads: per torch op, each framework's function, adapter, conventions
and their documentation, or the reason it has none. The harvest checks it against the installed
wheels (every name public in the api table, every adapter one the framework's test_nn.py defines,
every entry in torch's databases) and counts, per dtype, the torch samples the adapter can express;
an op with none in any dtype is listed unmapped with that reason. Ops without a counterpart are
listed too: counted, never dropped.
"""

from __future__ import annotations

import collections
import importlib.util
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from portability_data.pipeline.api_names import public_names
from portability_data.pipeline.frameworks.manifest import HarvestError, load_census_module, manifest_document
from portability_data.runner.census_rows import census_case_id
from portability_data.runner.nn_samples import ORACLE, SIGNATURES

MAPPING_FILE = Path("cases") / "nn_ops.yml"
ORIGIN = "nn"
FRAMEWORKS = ("tensorflow", "jax")
SOURCES = ("opinfo", "module")
OP_KEYS = {"entry", "source", "signature", "torch", *FRAMEWORKS}
TARGET_KEYS = {"function", "adapter", "conventions", "docs"}
NO_SAMPLE = "no torch sample the function can express (every one refused by the adapter)"


def read_mapping(path: Path) -> dict[str, Any]:
    """The mapping, its shape checked: every op names its torch entry, source, signature and torch
    function, and per framework either a complete target (function, adapter, conventions, docs) or
    the reason it has none."""
    try:
        mapping = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise HarvestError(f"{path}: cannot read the NN-op mapping ({exc})") from None
    if not isinstance(mapping, dict) or mapping.get("mapping_version") != 1:
        raise HarvestError(f"{path}: not an NN-op mapping of mapping_version 1")
    seen = set()
    for number, op in enumerate(mapping.get("ops") or [], start=1):
        where = f"{path}: op {number} ({op.get('entry', '?')})"
        if set(op) != OP_KEYS:
            raise HarvestError(f"{where}: has keys {sorted(op)}, needs exactly {sorted(OP_KEYS)}")
        if op["entry"] in seen:
            raise HarvestError(f"{where}: a second row for the entry; one row per torch op")
        seen.add(op["entry"])
        if op["source"] not in SOURCES:
            raise HarvestError(f"{where}: source {op['source']!r} is not one of {SOURCES}")
        if op["signature"] not in SIGNATURES:
            raise HarvestError(
                f"{where}: signature {op['signature']!r} is not in runner/nn_samples.py SIGNATURES"
            )
        for framework in FRAMEWORKS:
            target = op[framework]
            if set(target) == {"none"} and str(target["none"]).strip():
                continue
            if set(target) != TARGET_KEYS or not target["docs"]:
                raise HarvestError(
                    f"{where}: {framework} needs {sorted(TARGET_KEYS)} (docs: at least one URL), "
                    "or `none:` with the reason it has no counterpart"
                )
    if not seen:
        raise HarvestError(f"{path}: lists no ops")
    return mapping


def load_test_module(path: Path) -> Any:
    """A framework's test_nn.py as a module (its ADAPTERS and `applicable`), without pytest."""
    return load_census_module(path, f"portability_census_nn_{path.parent.parent.name}")


def _installed_version(framework: str) -> str:
    module = importlib.import_module(framework)
    return str(module.__version__)


def nn_manifest(
    framework: str,
    api: pd.DataFrame,
    census_params: dict[str, Any],
    mapping_path: Path = MAPPING_FILE,
    folder: Path | None = None,
) -> dict[str, Any]:
    """The framework's NN-op manifest from the mapping and the installed wheels."""
    if framework not in FRAMEWORKS:
        raise HarvestError(f"the NN-op census maps torch's ops to {FRAMEWORKS}, not {framework!r}")
    mapping = read_mapping(mapping_path)
    folder = folder or Path("cases") / framework / "census"
    module = load_test_module(Path(folder) / "test_nn.py")
    version, torch_version = _installed_version(framework), _installed_version("torch")
    names = public_names(api, framework, version, HarvestError)
    torch_names = public_names(api, "torch", torch_version, HarvestError)
    dtypes = mapping["dtypes"][framework]
    entries, unmapped = [], []
    for op in mapping["ops"]:
        where = f"{mapping_path}: {op['entry']}"
        if op["torch"] not in torch_names:
            raise HarvestError(
                f"{where}: torch function {op['torch']!r} is not public in torch {torch_version}"
            )
        target = op[framework]
        if "none" in target:
            unmapped.append({"entry": op["entry"], "torch_function": op["torch"], "reason": target["none"]})
            continue
        if target["function"] not in names:
            raise HarvestError(f"{where}: {target['function']!r} is not public in {framework} {version}")
        if target["adapter"] not in module.ADAPTERS:
            raise HarvestError(
                f"{where}: adapter {target['adapter']!r} is not in {framework}'s test_nn.py "
                f"(it has {', '.join(module.ADAPTERS)})"
            )
        record = {
            "entry": op["entry"],
            "case_id": census_case_id(framework, ORIGIN, op["entry"]),
            "function": target["function"],
            "torch_function": op["torch"],
            "source": op["source"],
            "signature": op["signature"],
            "adapter": target["adapter"],
        }
        try:
            counts = {dtype: sum(1 for _ in module.applicable(record, dtype)) for dtype in dtypes}
        except KeyError as exc:  # the entry is not in the installed torch's databases
            raise HarvestError(f"{where}: {exc.args[0]}") from None
        counts = {dtype: n for dtype, n in counts.items() if n}
        if not counts:
            unmapped.append({"entry": op["entry"], "torch_function": op["torch"], "reason": NO_SAMPLE})
            continue
        entries.append({**record, "dtypes": sorted(counts), "samples": counts})
    # the mapping's place in the repository, whichever copy was read (a test's scratch checkout)
    source = (
        f"{MAPPING_FILE.as_posix()}: PyTorch {torch_version}'s OpInfo / ModuleInfo samples, oracle {ORACLE}"
    )
    eager_cap = (census_params.get("eager", {}).get("max_samples") or {}).get("torch")
    return manifest_document(
        (framework, version, ORIGIN, source),
        entries,
        unmapped,
        census_params["tolerances"],
        census_params["compiled"],
        extra={"torch_version": torch_version, "oracle": ORACLE},
        eager_max_samples=eager_cap,
    )


def summary_lines(manifest: dict[str, Any]) -> list[str]:
    """Counts for the command's output: ops mapped, pairs, samples, ops without a counterpart."""
    entries, unmapped = manifest["entries"], manifest["unmapped"]
    pairs = sum(len(e["dtypes"]) for e in entries)
    samples = sum(sum(e["samples"].values()) for e in entries)
    reasons = collections.Counter(u["reason"].split(":")[0] for u in unmapped)
    return [
        f"nn ({manifest['framework']} {manifest['framework_version']}): "
        f"{len(entries) + len(unmapped)} torch ops, "
        f"{len(entries)} mapped to {len({e['function'] for e in entries})} public functions",
        f"(op, dtype) pairs: {pairs}, torch samples they can express: {samples}",
        "no counterpart: "
        + (", ".join(f"{u['entry']}" for u in unmapped) or "none")
        + (f" ({'; '.join(f'{n} {r}' for r, n in sorted(reasons.items()))})" if unmapped else ""),
    ]
