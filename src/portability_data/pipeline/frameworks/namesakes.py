"""NumPy namesakes as a census source, the code jax.numpy's, tf.experimental.numpy's and torch's
censuses share: a framework function held to NumPy's function of the same name, on the
framework-neutral inputs (runner/generator.py), the very arrays every framework gets under that name.

NumPy runs each namesake at harvest time to learn its arity and the input kinds it accepts per
dtype (`accepted_kinds`): the census then holds the framework to NumPy on exactly those. Functions
NumPy takes none of the inputs for are listed apart with the reason, never dropped.

The trials run in a child process with a memory cap and a time limit per function (`Trials`): some
functions turn two operands of a million elements into 1e12 (outer, kron, tile), and a hang or an
out-of-memory kill must reject the function, not the harvest.

The three censuses differ only in where their names come from and what they check around the trial
(`namesake_census`'s parameters): jax.numpy tries every jax.numpy function; tnp leaves out
tf.experimental.numpy.random (it draws random numbers); torch tries only the NumPy functions its own
OpInfo entries declare as their reference, names the declaring entry and its cpu dtypes, and keeps
only functions whose NumPy arguments are all arrays (torch receives every argument as a tensor).
"""

from __future__ import annotations

import importlib
import json
import select
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from portability_data.runner.census_rows import census_case_id
from portability_data.runner.generator import DTYPES, MAX_ARITY, kinds_for, sample

# NumPy namesakes that are not tried: files, printing, global state, and functions whose NumPy
# result has undefined values (nothing to compare with).
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
NUMPY_TRIAL_MAIN = "from portability_data.pipeline.frameworks.namesakes import trial_main; trial_main()"
# The fields of a namesake's manifest entry in the manifest's order; `opinfo` and `declared_cpu`
# (the OpInfo entry declaring the namesake, its cpu dtypes) only where the framework declares them.
ENTRY_FIELDS = (
    "entry",
    "case_id",
    "function",
    "reference",
    "opinfo",
    "arity",
    "dtypes",
    "declared_cpu",
    "kinds",
)


def namesake_census(
    framework: str,
    origin: str,
    names: Iterable[str],
    counterpart: Callable[[str], tuple[str, dict[str, Any]] | dict[str, Any]],
    takes_arguments: Callable[[str, int | None, str], dict[str, Any] | None] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(entries, unmapped) of a census of NumPy namesakes, in the order of `names` (NumPy names:
    sin, linalg.svd). Per name: `counterpart` gives the framework's public function and the fields
    it declares for it (ENTRY_FIELDS), or the unmapped record saying why there is none; a name NumPy
    has no function for is unmapped (no_numpy_namesake); NumPy's trials give the arity and the kinds
    per dtype (Trials.namesake) or the unmapped record; `takes_arguments` (name, arity, function)
    gives the unmapped record where the framework does not take NumPy's arguments as they are."""
    entries: list[dict[str, Any]] = []
    unmapped: list[dict[str, Any]] = []
    trials = Trials()
    try:
        for name in names:
            found = counterpart(name)
            if isinstance(found, dict):
                unmapped.append(found)
                continue
            function, declared = found
            if numpy_function(name) is None:
                unmapped.append({"entry": name, "reason": "no_numpy_namesake", "detail": f"numpy.{name}"})
                continue
            arity, kinds, skipped = trials.namesake(name)
            if skipped is not None:
                unmapped.append(skipped)
                continue
            refused = takes_arguments(name, arity, function) if takes_arguments is not None else None
            if refused is not None:
                unmapped.append(refused)
                continue
            fields = {
                "entry": name,
                "case_id": census_case_id(framework, origin, name),
                "function": function,
                "reference": f"numpy.{name}",
                "arity": arity,
                "dtypes": sorted(kinds),
                "kinds": dict(sorted(kinds.items())),
                **declared,
            }
            entries.append({key: fields[key] for key in ENTRY_FIELDS if key in fields})
    finally:
        trials.close()
    return entries, unmapped


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
