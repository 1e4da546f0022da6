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

The NumPy trials run in a child process with a memory cap and a time limit per function: some
functions turn two operands of a million elements into 1e12 (outer, kron, tile), and a hang or
an out-of-memory kill must reject the function, not the harvest.
"""

from __future__ import annotations

import collections
import importlib
import json
import select
import subprocess
import sys
import warnings
from typing import Any

import pandas as pd

from portability_data.pipeline.api_names import public_names
from portability_data.pipeline.census_harvest import HarvestError, manifest_document
from portability_data.runner.census_rows import census_case_id
from portability_data.runner.generator import DTYPES, MAX_ARITY, kinds_for, sample

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

# jax.numpy functions whose NumPy namesake is not tried: files, printing, global state, and
# functions whose NumPy result has undefined values (nothing to compare with).
NOT_TRIED = {
    **dict.fromkeys(
        ("save", "savez", "load", "fromfile", "frombuffer", "fromstring", "fromiter", "from_dlpack"),
        "io",
    ),
    **dict.fromkeys(("set_printoptions", "printoptions", "get_printoptions"), "global_state"),
    **dict.fromkeys(("empty", "empty_like"), "undefined_values"),
}
TRIAL_TIMEOUT_S = 120.0  # per function, all arities and dtypes
TRIAL_MEMORY_BYTES = 6 << 30
NUMPY_TRIAL_MAIN = "from portability_data.pipeline.census_harvest_jax import trial_main; trial_main()"


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
    entries, unmapped = [], []
    trials = Trials()
    try:
        for name in names:
            function = f"jax.numpy.{name}"
            assert function in public
            if numpy_function(name) is None:
                unmapped.append({"entry": name, "reason": "no_numpy_namesake", "detail": f"numpy.{name}"})
                continue
            arity, kinds, skipped = trials.namesake(name)
            if skipped is not None:
                unmapped.append(skipped)
                continue
            entries.append(
                {
                    "entry": name,
                    "case_id": census_case_id("jax", "numpy", name),
                    "function": function,
                    "reference": f"numpy.{name}",
                    "arity": arity,
                    "dtypes": sorted(kinds),
                    "kinds": dict(sorted(kinds.items())),
                }
            )
    finally:
        trials.close()
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


# --------------------------------------------------------------------------- NumPy trials


def numpy_function(name: str) -> Any:
    """numpy.<name> (numpy.linalg.svd for linalg.svd) if it exists and is callable, else None."""
    module_name, _, attribute = f"numpy.{name}".rpartition(".")
    try:
        found = getattr(importlib.import_module(module_name), attribute, None)
    except ImportError:
        return None
    return found if callable(found) else None


def _numeric(value: Any) -> bool:
    """Whether every leaf of a result is a number or an array of numbers (nothing else compares)."""
    import numpy as np

    if isinstance(value, (list, tuple)):
        return all(_numeric(v) for v in value)
    if isinstance(value, (bool, int, float, complex)):
        return True
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.kind in "biufc" or value.dtype.name == "bfloat16"
    return False


# Superlinear in the input however small their output: no large input (svd of 1001 x 999 takes a
# minute on a loaded CPU; polyval's Horner loop over a million coefficients never ends).
SUPERLINEAR_PREFIXES = ("linalg.", "poly")


def _size(value: Any) -> int:
    import numpy as np

    if isinstance(value, (list, tuple)):
        return sum(_size(v) for v in value)
    return int(np.size(value))


def _linear(name: str, args: tuple[Any, ...], result: Any) -> bool:
    """Whether the large kind may be tried: no more output than input on the odd matrix (outer,
    kron, tile and convolve grow it) and not a known superlinear family. Structural, not timed, so
    the manifest is the same on every machine."""
    return not name.startswith(SUPERLINEAR_PREFIXES) and _size(result) <= sum(_size(a) for a in args)


def accepted_kinds(
    name: str,
    function: Any = None,
    arities: tuple[int, ...] | None = None,
    allowed: list[str] | None = None,
) -> tuple[int | None, dict[str, list[str]], str | None]:
    """(arity, dtype -> kinds NumPy accepts, first error): the smallest arity NumPy takes any input
    of. The large kind is tried only where the odd matrix ran (the same shape, bigger) and the work
    looks linear (see _linear): a census sample must not run for minutes. Another census passes
    its own reference call (`function`), its arity and the kinds it allows (TensorFlow's mapping)."""
    import numpy as np

    function = function or numpy_function(name)
    first_error = None
    for arity in arities or range(1, MAX_ARITY + 1):
        kinds: dict[str, list[str]] = {}
        for dtype in DTYPES:
            accepted, large = [], False
            for kind in kinds_for(arity):
                if (kind == "large" and not large) or (allowed is not None and kind not in allowed):
                    continue
                args = sample(name, dtype, kind, arity).args
                try:
                    with np.errstate(all="ignore"), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        result = function(*args)
                except Exception as error:
                    first_error = first_error or f"{type(error).__name__}: {str(error)[:200]}"
                    continue
                if _numeric(result):
                    accepted.append(kind)
                    if kind == "odd_matrix":
                        large = _linear(name, args, result)
                else:
                    first_error = first_error or f"non-numeric result {type(result).__name__}"
            if accepted:
                kinds[dtype] = accepted
        if kinds:
            return arity, kinds, None
    return None, {}, first_error


def trial_main() -> None:
    """The child process: NumPy trials one function at a time (a name per line on stdin, a JSON
    answer per line on stdout), under a memory cap."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (TRIAL_MEMORY_BYTES, TRIAL_MEMORY_BYTES))
    for line in sys.stdin:
        try:
            answer = accepted_kinds(line.strip())
        except BaseException as error:  # MemoryError escaping the trial loop, and the like
            answer = (None, {}, f"{type(error).__name__}: {str(error)[:200]}")
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


class Trials:
    """A child process running NumPy trials (a subprocess: the harvest has jax's threads, and
    multiprocessing would re-run the caller's main script), restarted when one hangs or dies."""

    def __init__(self, code: str = NUMPY_TRIAL_MAIN) -> None:
        self.process: subprocess.Popen[str] | None = None
        self.code = code  # the child's main: another census answers its own requests (TensorFlow's mapping)

    def run(self, name: str) -> tuple[int | None, dict[str, list[str]], str | None]:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(
                [sys.executable, "-W", "ignore", "-c", self.code],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(name + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], TRIAL_TIMEOUT_S)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            dead = self.process.poll() is not None
            self.close()
            return None, {}, "the NumPy trial process died" if dead else "timeout"
        arity, kinds, problem = json.loads(line)
        return arity, kinds, problem

    def namesake(self, name: str) -> tuple[int | None, dict[str, list[str]], dict[str, str] | None]:
        """(arity, dtype -> kinds, None) of a NumPy name as NumPy takes the generator's inputs, or
        (None, {}, the unmapped record saying why not: not tried, NumPy timed out or took none);
        the step every census of NumPy namesakes (jax.numpy, tnp, torch's) shares."""
        if name in NOT_TRIED:
            return None, {}, {"entry": name, "reason": NOT_TRIED[name], "detail": "not tried"}
        arity, kinds, problem = self.run(name)
        if arity is None:
            reason = "numpy_timeout" if problem == "timeout" else "numpy_rejects_inputs"
            return None, {}, {"entry": name, "reason": reason, "detail": problem}
        return arity, kinds, None

    def close(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.process = None
