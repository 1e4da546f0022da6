"""The census input generator (runner/generator.py): the same arrays for the same (function,
dtype, kind, seed) in any process, every dtype and kind the censuses name, the edge values that
separate devices, and nothing but NumPy underneath (a bare device machine runs it)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from portability_data.runner import generator
from portability_data.runner.generator import (
    DTYPES,
    KINDS,
    GeneratorError,
    edge_values,
    kinds_for,
    numpy_dtype,
    sample,
    samples,
)


def test_the_same_names_give_the_same_arrays_in_another_process() -> None:
    here = sample("add", "float32", "odd_matrix", arity=2, seed=3)
    code = (
        "from portability_data.runner.generator import sample; import sys; "
        "sys.stdout.buffer.write(b''.join("
        "a.tobytes() for a in sample('add', 'float32', 'odd_matrix', 2, 3).args))"
    )
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert there == b"".join(a.tobytes() for a in here.args)
    assert not np.array_equal(here.args[0], here.args[1])  # two operands, two draws
    other_seed = sample("add", "float32", "odd_matrix", arity=2, seed=4)
    other_function = sample("sub", "float32", "odd_matrix", arity=2, seed=3)
    assert not np.array_equal(here.args[0], other_seed.args[0])
    assert not np.array_equal(here.args[0], other_function.args[0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_has_every_kind_in_its_own_dtype(dtype: str) -> None:
    found = samples("f", dtype, arity=2)
    assert [s.kind for s in found] == list(KINDS)
    for given in found:
        assert len(given.args) == 2 and all(a.dtype == numpy_dtype(dtype) for a in given.args)
    shapes = {s.kind: [a.shape for a in s.args] for s in found}
    assert shapes["empty"] == [(0,), (0,)] and shapes["scalar"] == [(), ()]
    assert shapes["broadcast"] == [(3, 1), (1, 5)]
    assert 9e5 < np.prod(shapes["large"][0]) < 1.1e6 and all(n % 2 for n in shapes["large"][0])
    assert sum(a.size for s in found for a in s.args) < 2.1e6  # one large input, the rest small


def test_bfloat16_comes_from_ml_dtypes_and_unknown_names_are_refused() -> None:
    assert numpy_dtype("bfloat16") == np.dtype(ml_dtypes.bfloat16)
    with pytest.raises(GeneratorError, match="unknown dtype 'float8'"):
        sample("f", "float8", "scalar")
    with pytest.raises(GeneratorError, match="unknown input kind"):
        sample("f", "float32", "huge")
    with pytest.raises(GeneratorError, match="two operands"):
        sample("f", "float32", "broadcast", arity=1)
    assert "broadcast" not in kinds_for(1) and "broadcast" in kinds_for(3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_floating_edges_hold_nan_infinities_signed_zero_and_denormals(dtype: str) -> None:
    values = edge_values(dtype).astype(np.float64)
    assert np.isnan(values).any() and np.isposinf(values).any() and np.isneginf(values).any()
    assert any(v == 0 and np.signbit(v) for v in values)
    tiny = float(ml_dtypes.finfo(numpy_dtype(dtype)).tiny)
    assert any(0 < abs(v) < tiny for v in values)  # a denormal survives in the dtype itself


def test_complex_integer_and_bool_edges() -> None:
    complex_edges = edge_values("complex64")
    assert complex_edges.dtype == np.complex64
    assert any(v.real == 0 and np.isinf(v.imag) for v in complex_edges)  # not NaN + inf j
    assert np.isnan(complex_edges.real).any() and np.isnan(complex_edges.imag).any()
    assert {-128, 127, 0, -1} <= set(edge_values("int8").tolist())
    assert {0, 255} <= set(edge_values("uint8").tolist())
    assert edge_values("bool").tolist() == [False, True]
    pairs = sample("f", "int8", "edge", arity=2)
    assert pairs.args[0].size == edge_values("int8").size ** 2  # every pair of edge values
    assert pairs.describe() == f"edge ({pairs.args[0].size},) x ({pairs.args[0].size},) int8"


def test_the_generator_imports_numpy_and_the_standard_library_only() -> None:
    tree = ast.parse(Path(generator.__file__).read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert imported <= {"__future__", "hashlib", "dataclasses", "typing", "numpy", "ml_dtypes"}
