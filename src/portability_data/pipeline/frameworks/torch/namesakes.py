"""PyTorch's NumPy namesakes as a census source (cases/torch/census/numpy.yaml): the torch functions
whose own OpInfo entry names a NumPy function as its reference, run on the framework-neutral
generator's inputs (runner/generator.py), the very arrays jax.numpy and tf.experimental.numpy get
under the same NumPy name. With them the cross-framework table holds all three frameworks.

Why only declared references: a torch function that merely shares a NumPy name does not promise
NumPy's behaviour (torch.std divides by n - 1, torch.sort returns values and indices,
torch.transpose swaps two given dimensions), so holding every namesake to NumPy would call
different contracts failures. PyTorch's OpInfo database declares the equivalence itself: an
entry's `ref` is the NumPy function its test_numpy_ref compares against (test/test_ops.py). Where
that `ref` is NumPy's own function object (numpy.sin, numpy.linalg.tensorinv, numpy.fft.rfft;
not a lambda or a wrapper), the entry's op is that NumPy name's torch counterpart: the public
torch function of the same name where it is the op or one of its aliases (torch.arccos for
acos's numpy.arccos), else the op's own public function (torch.conj for numpy.conjugate).

Inputs: NumPy's trials at harvest time (frameworks/namesakes.py, the namesake census jax.numpy's
and tnp's manifests come from too) give the arity and the kinds NumPy takes per dtype. torch receives every
positional argument as a tensor, so only functions whose NumPy arguments are all array operands
are entries: NumPy ufuncs, functions of one array, and ARRAY_OPERANDS; the rest (numpy.tile's
reps, numpy.roll's shift: torch wants ints there) are listed apart with the reason, as are the
public torch namesakes without a declared NumPy reference. Nothing is dropped.

The OpInfo entry's dtype lists are what torch declares for the namesake: each entry names it
(`opinfo`), and the support matrix reads the declared table's rows of that OpInfo entry for the
namesake's pairs, so a pair outside them that fails is a finding, not a failure.
"""

from __future__ import annotations

import importlib
from typing import Any

import pandas as pd

from portability_data.pipeline.api_names import public_names
from portability_data.pipeline.frameworks.manifest import HarvestError, manifest_document
from portability_data.pipeline.frameworks.namesakes import namesake_census, numpy_function
from portability_data.pipeline.frameworks.torch.entries import dtype_name
from portability_data.runner.census_rows import entry_id

ORIGIN = "numpy"
SOURCE = (
    "torch functions whose OpInfo ref is a NumPy function, vs that function on "
    "portability_data.runner.generator inputs"
)
# NumPy's submodules whose functions torch mirrors under the same path (torch.linalg, torch.fft).
SUBMODULES = ("", "linalg.", "fft.")
# Not ufuncs and of more than one argument, but every argument an array in both APIs.
ARRAY_OPERANDS = frozenset({"allclose", "isclose"})
# Reviewed: the declaring op's torch function needs what NumPy's call leaves out or takes otherwise.
OTHER_SIGNATURE = {
    "transpose": "torch.permute needs the dims numpy.transpose defaults to reversed",
    "permute_dims": "torch.permute needs the dims numpy.permute_dims defaults to reversed",
    "broadcast_shapes": "takes shapes, not arrays (NumPy reads a small array as a shape)",
}


def numpy_names_of(ref: Any) -> list[str]:
    """Every NumPy name bound to the function object `ref` (arccos and acos, absolute and abs;
    linalg.tensorinv, fft.rfft), or none (a lambda, a wrapper, a SciPy function, nothing)."""
    import numpy as np

    if ref is None or not callable(ref) or not isinstance(getattr(ref, "__name__", None), str):
        return []
    names = []
    for prefix in SUBMODULES:
        module = importlib.import_module("numpy" + (f".{prefix[:-1]}" if prefix else ""))
        if prefix == "" and not (isinstance(ref, np.ufunc) or getattr(ref, "__module__", "") == "numpy"):
            continue
        names += [
            prefix + name for name in dir(module) if not name.startswith("_") and getattr(module, name) is ref
        ]
    return sorted(names)


def declared_namesakes(op_db: list[Any]) -> dict[str, list[Any]]:
    """NumPy name -> the OpInfo entries that declare it as their reference (base entries first)."""
    found: dict[str, list[Any]] = {}
    for op in op_db:
        for name in numpy_names_of(getattr(op, "ref", None)):
            found.setdefault(name, []).append(op)
    return {name: sorted(ops, key=lambda op: bool(op.variant_test_name)) for name, ops in found.items()}


def torch_counterpart(name: str, ops: list[Any], public: frozenset[str]) -> tuple[str | None, Any]:
    """(the public torch function for NumPy's `name`, the OpInfo entry that declares it), or
    (None, first entry) when neither the namesake nor the op's own name is public."""
    for op in ops:
        spellings = {op.name, *(alias.name for alias in getattr(op, "aliases", ()))}
        if name in spellings and f"torch.{name}" in public:
            return f"torch.{name}", op
    for op in ops:
        if f"torch.{op.name}" in public:
            return f"torch.{op.name}", op
    return None, ops[0]


def public_namesakes(public: frozenset[str]) -> list[str]:
    """NumPy names (sin, linalg.svd, fft.rfft) of public torch functions that NumPy also has."""
    names = set()
    for qualified in public:
        for prefix in SUBMODULES:
            rest = qualified.removeprefix(f"torch.{prefix}")
            if rest != qualified and "." not in rest and numpy_function(prefix + rest) is not None:
                names.add(prefix + rest)
    return sorted(names)


def array_operands_only(name: str, arity: int) -> bool:
    """Whether each of NumPy's `arity` positional arguments is an array operand in torch too."""
    import numpy as np

    return arity == 1 or isinstance(numpy_function(name), np.ufunc) or name in ARRAY_OPERANDS


def torch_numpy_manifest(api: pd.DataFrame, census_params: dict[str, Any]) -> dict[str, Any]:
    """The manifest of PyTorch's declared NumPy namesakes: per NumPy name the torch function, the
    OpInfo entry declaring it (`opinfo`) and its cpu dtypes, and NumPy's arity and kinds per dtype."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    public = public_names(api, "torch", torch.__version__, HarvestError)
    rows = api[(api["framework"] == "torch") & api["kind"].isin(["function", "builtin"])]
    functions = frozenset(rows["qualified_name"].astype(str)) & public
    declared = declared_namesakes(list(op_db))
    undeclared = [
        {"entry": name, "reason": "no_declared_numpy_reference", "detail": f"torch.{name}"}
        for name in public_namesakes(functions)
        if name not in declared
    ]

    def counterpart(name: str) -> tuple[str, dict[str, Any]] | dict[str, Any]:
        function, op = torch_counterpart(name, declared[name], functions)
        source = entry_id(op.name, op.variant_test_name)
        if function is None:
            return {"entry": name, "reason": "not_in_api", "detail": f"opinfo {source}"}
        if name in OTHER_SIGNATURE:
            return {"entry": name, "reason": "other_signature", "detail": OTHER_SIGNATURE[name]}
        cpu = sorted(dtype_name(d) for d in op.supported_dtypes("cpu"))
        return function, {"opinfo": source, "declared_cpu": cpu}

    def takes_arguments(name: str, arity: int | None, function: str) -> dict[str, Any] | None:
        if array_operands_only(name, arity):
            return None
        detail = f"numpy.{name} takes {arity} arguments, not all arrays in {function}"
        return {"entry": name, "reason": "non_array_arguments", "detail": detail}

    entries, unmapped = namesake_census("torch", ORIGIN, sorted(declared), counterpart, takes_arguments)
    unmapped = undeclared + unmapped
    identity = ("torch", str(torch.__version__), ORIGIN, SOURCE)
    unmapped.sort(key=lambda row: row["entry"])
    return manifest_document(
        identity, entries, unmapped, census_params["tolerances"], census_params["compiled"]
    )
