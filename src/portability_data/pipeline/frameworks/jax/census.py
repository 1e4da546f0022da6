"""The JAX census manifests (cases/jax/census/<source>.yaml), harvested from the installed wheel,
reviewable as data, read by the runner with PyYAML only (runner/census_rows.py).

Two sources:
- harnesses: JAX's own primitive harnesses (jax._src.internal_test_util.test_harnesses, what
  jax2tf and the primitive tests run): one entry per harness group, mapped to the public function
  the group exercises (checked against the api table); its dtypes, harnesses per dtype and the
  limitations JAX declares per device and dtype (`jax_unimplemented`). Groups with no public
  function are listed apart with the reason, never dropped.
- numpy: every jax.numpy function with a NumPy namesake, run at harvest time by NumPy on the
  framework-neutral inputs (runner/generator.py) to learn its arity and the input kinds it
  accepts per dtype: the census then holds jax.numpy to NumPy on exactly those. Functions NumPy
  takes none of the inputs for are listed apart with the reason.

The NumPy trials are the namesake census every framework shares (frameworks/namesakes.py).
"""

from __future__ import annotations

import collections
from typing import Any

import pandas as pd

from portability_data.pipeline.api_names import public_names
from portability_data.pipeline.frameworks.manifest import HarvestError, manifest_document
from portability_data.pipeline.frameworks.namesakes import namesake_census
from portability_data.runner.census_rows import census_case_id

HARNESS_SOURCE = "jax._src.internal_test_util.test_harnesses.all_harnesses"
NUMPY_SOURCE = "jax.numpy vs numpy on portability_data.runner.generator inputs"
DEVICES = ("cpu", "gpu", "tpu")  # the devices JAX's limitations name

# Harness groups whose primitive's public function has another name.
GROUP_FUNCTIONS = {
    "and": "jax.lax.bitwise_and",
    "or": "jax.lax.bitwise_or",
    "xor": "jax.lax.bitwise_xor",
    "approx_top_k": "jax.lax.approx_max_k",  # approx_min_k too: the group runs both (params is_max)
    "regularized_incomplete_beta": "jax.lax.betainc",
    "reduce_window_add": "jax.lax.reduce_window",
    "reduce_window_max": "jax.lax.reduce_window",
    "reduce_window_min": "jax.lax.reduce_window",
    "reduce_window_mul": "jax.lax.reduce_window",
}
# Groups that exercise an internal primitive with no public function of its own.
PRIVATE_GROUPS = {
    "add_any": "ad_util.add_jaxvals_p, autodiff's internal sum",
    "iota_2x32_shape": "prng.iota_2x32_shape, the threefry PRNG's internal counter",
    "select_and_gather_add": "windowed_reductions._select_and_gather_add (max_pool's gradient)",
    "select_and_scatter_add": "windowed_reductions._select_and_scatter_add (max_pool's gradient)",
}


def public_jax_names(api: pd.DataFrame, version: str) -> frozenset[str]:
    """The installed jax's public names from the api table; refuses a table of another version."""
    return public_names(api, "jax", version, HarvestError)


def group_function(group: str, public: frozenset[str]) -> tuple[str | None, str | None]:
    """(public function, None) for a harness group, or (None, reason) when it has none."""
    if group in PRIVATE_GROUPS:
        return None, "private_name"
    if group in GROUP_FUNCTIONS:
        candidates = [GROUP_FUNCTIONS[group]]
    elif group.startswith("random_"):
        candidates = [f"jax.random.{group.removeprefix('random_')}"]
    else:
        candidates = [f"jax.lax.{group}", f"jax.lax.linalg.{group}", f"jax.{group}"]
    found = next((name for name in candidates if name in public), None)
    return (found, None) if found else (None, "not_in_api")


def _dtype_name(dtype: Any) -> str:
    import numpy as np

    return np.dtype(dtype).name


def harness_manifest(api: pd.DataFrame, census_params: dict[str, Any]) -> dict[str, Any]:
    """The manifest of the installed jax's primitive harnesses, one entry per group."""
    import jax
    from jax._src.internal_test_util import test_harnesses

    public = public_jax_names(api, jax.__version__)
    groups: dict[str, list[Any]] = collections.defaultdict(list)
    for harness in test_harnesses.all_harnesses:
        groups[harness.group_name].append(harness)
    entries, unmapped = [], []
    for group, harnesses in groups.items():
        function, reason = group_function(group, public)
        if function is None:
            detail = PRIVATE_GROUPS.get(
                group, "no jax.lax, jax.lax.linalg or jax.random function of that name"
            )
            unmapped.append({"entry": group, "reason": reason, "detail": detail, "harnesses": len(harnesses)})
            continue
        per_dtype = collections.Counter(_dtype_name(h.dtype) for h in harnesses)
        unimplemented: dict[str, dict[str, int]] = {}
        for device in DEVICES:
            declared = collections.Counter(
                _dtype_name(h.dtype)
                for h in harnesses
                if any(
                    device in lim.devices and lim.filter(device=device, dtype=h.dtype)
                    for lim in h.jax_unimplemented
                )
            )
            if declared:
                unimplemented[device] = dict(sorted(declared.items()))
        entries.append(
            {
                "entry": group,
                "case_id": census_case_id("jax", "harnesses", group),
                "function": function,
                "dtypes": sorted(per_dtype),
                "samples": dict(sorted(per_dtype.items())),
                "declared_cpu": sorted(set(per_dtype) - set(unimplemented.get("cpu", {}))),
                "unimplemented": unimplemented,
            }
        )
    return _manifest("harnesses", HARNESS_SOURCE, entries, unmapped, census_params)


def numpy_manifest(api: pd.DataFrame, census_params: dict[str, Any]) -> dict[str, Any]:
    """The manifest of jax.numpy against NumPy: arity and accepted input kinds per function."""
    import jax

    public = public_jax_names(api, jax.__version__)
    rows = api[(api["framework"] == "jax") & (api["kind"] == "function")]
    names = sorted(q.removeprefix("jax.numpy.") for q in rows["qualified_name"] if q.startswith("jax.numpy."))

    def counterpart(name: str) -> tuple[str, dict[str, Any]]:
        function = f"jax.numpy.{name}"
        assert function in public
        return function, {}

    entries, unmapped = namesake_census("jax", "numpy", names, counterpart)
    return _manifest("numpy", NUMPY_SOURCE, entries, unmapped, census_params)


def _manifest(
    origin: str,
    source: str,
    entries: list[dict[str, Any]],
    unmapped: list[dict[str, Any]],
    census_params: dict[str, Any],
) -> dict[str, Any]:
    import jax

    # jax runs 64-bit inputs as 32-bit unless jax_enable_x64: the census keeps the default
    x64 = {"x64": bool(jax.config.jax_enable_x64)}
    identity = ("jax", str(jax.__version__), origin, source)
    tolerances, compiled = census_params["tolerances"], census_params["compiled"]
    return manifest_document(identity, entries, unmapped, tolerances, compiled, x64)


def jax_manifests(api: pd.DataFrame, census_params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every JAX census manifest by source name (write each as cases/jax/census/<source>.yaml)."""
    return {"harnesses": harness_manifest(api, census_params), "numpy": numpy_manifest(api, census_params)}


def summary_lines(manifest: dict[str, Any]) -> list[str]:
    """Counts for the command's output: entries, functions, pairs, unmapped by reason."""
    entries = manifest["entries"]
    reasons = collections.Counter(u["reason"] for u in manifest["unmapped"])
    pairs = sum(len(e["dtypes"]) for e in entries)
    samples = sum(sum(e["samples"].values()) for e in entries if "samples" in e)
    return [
        f"{manifest['origin']} (jax {manifest['framework_version']}): "
        f"{len(entries) + len(manifest['unmapped'])} entries, {len(entries)} mapped to "
        f"{len({e['function'] for e in entries})} public functions, {pairs} (entry, dtype) pairs"
        + (f", {samples} harnesses" if samples else ""),
        "unmapped: " + (", ".join(f"{n} {r}" for r, n in sorted(reasons.items())) or "none"),
    ]
