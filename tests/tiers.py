"""Test tiers, read from what a test reaches, so that the marks cannot drift from the code (issue 56).

- env: builds a virtual environment (`python -m venv`): minutes, and the network-free wheel cache.
- e2e: starts a process (a real worker, the CLI, git, DVC) or imports a framework (torch,
  TensorFlow, JAX, an export runtime) or DVC.
- unit: neither; `pytest -m unit` is the contributors' quick tier (CONTRIBUTING.md).

What a test reaches: the source of the test function, of the fixtures it requests and, followed by
name through their modules' globals, of every function and class of this repository (tests/ and
src/) that they name, with the imports made inside them. conftest.py marks each collected test with
the tier so found (a test may ask for a higher tier by marking itself e2e or env, never for unit),
and runs each unit test under `unit_guard`, which fails it if it starts a process or imports a
framework anyway: a tier the reading got wrong is a failing test, not a slow quick tier.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import inspect
import itertools
import os
import subprocess
import textwrap
import types
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
TIERS = ("unit", "e2e", "env")

# Imports that put a test in e2e: the frameworks, the export and edge runtimes, DVC; and the modules
# that start processes.
FRAMEWORK_ROOTS = frozenset(
    {
        "torch",
        "tensorflow",
        "jax",
        "jaxlib",
        "keras",
        "flax",
        "optax",
        "chex",
        "einops",
        "torchmetrics",
        "torch_xla",
        "torch_mlir",
        "onnx",
        "onnxruntime",
        "onnxscript",
        "tf2onnx",
        "jax2onnx",
        "openvino",
        "executorch",
        "iree",
        "ai_edge_litert",
        "litert_torch",
        "dvc",
        # `datasets` imports torch (and JAX, TensorFlow) where they are installed, as it loads
        "datasets",
    }
)
# GitPython runs `git version` when imported, and code_tokenize imports it.
PROCESS_ROOTS = frozenset({"subprocess", "multiprocessing", "git", "code_tokenize"})
# An import by a name known only when it runs (`import_module(framework)`): it may be a framework.
DYNAMIC = "<import by a runtime name>"
# Functions that reach a framework through a table the reading cannot follow: the device registry
# makes the path's backend for a framework (`path.backends[framework](device)`), which imports it.
THROUGH_A_REGISTRY = frozenset({"portability_data.runner.devices.backend_for"})


# nodeid -> tier of every collected test, before `-m` deselects any (conftest.py fills it).
COLLECTED = pytest.StashKey[dict[str, str]]()


class TierError(AssertionError):
    """A unit test did what only an e2e or env test may do."""


def _own(obj: Any) -> bool:
    """Whether `obj` is defined in this repository (src/ or tests/), so its source is read."""
    try:
        file = inspect.getsourcefile(obj)
    except TypeError:
        return False
    return file is not None and Path(file).resolve().is_relative_to(REPO_ROOT) and ".venv" not in file


class Reach:
    """What functions and classes reach: module roots imported or named, and whether a venv is
    built. Memoised per object, so one reading serves the whole collection."""

    def __init__(self) -> None:
        self._memo: dict[int, frozenset[str]] = {}
        self._keep: list[Any] = []  # the objects memoised by id stay alive

    def of(self, obj: Any) -> frozenset[str]:
        obj = getattr(getattr(obj, "hypothesis", None), "inner_test", obj)  # @given's test itself
        obj = inspect.unwrap(obj) if callable(obj) else obj
        key = id(obj)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = frozenset()  # a cycle reaches nothing new
        self._keep.append(obj)
        found = self._read(obj)
        self._memo[key] = frozenset(found)
        return self._memo[key]

    def _read(self, obj: Any) -> set[str]:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
        except (OSError, TypeError, SyntaxError):
            return set()
        if inspect.isfunction(obj):
            names: dict[str, Any] = obj.__globals__
        else:
            module = inspect.getmodule(obj)
            names = vars(module) if module else {}
        found: set[str] = set()
        local = self._local_imports(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found |= self._module(alias.name)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= self._module(node.module)
                for alias in node.names:
                    found |= self._attribute(node.module, alias.name)
            elif isinstance(node, ast.Name) and node.id in names:
                found |= self._value(names[node.id])
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                base = local.get(node.value.id, names.get(node.value.id))
                if isinstance(base, types.ModuleType):
                    found |= self._value(getattr(base, node.attr, None))
            elif isinstance(node, ast.Call):
                found |= _constant_imports(node)
            elif isinstance(node, ast.List | ast.Tuple):
                found |= _venv_made(node)
        return found

    def _local_imports(self, tree: ast.AST) -> dict[str, Any]:
        """Names bound by imports inside the source (`from portability_data.pipeline import
        run_stage as stage`), so that `stage.coverage` is read too."""
        bound: dict[str, Any] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.split(".")[0] in {"portability_data", "tests"}:
                    for alias in node.names:
                        with contextlib.suppress(Exception):
                            bound[alias.asname or alias.name] = _imported(node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name.split(".")[0] in {"portability_data", "tests"}:
                        with contextlib.suppress(Exception):
                            bound[alias.asname] = importlib.import_module(alias.name)
        return bound

    def _module(self, name: str) -> set[str]:
        root = name.split(".")[0]
        return {root} if root in FRAMEWORK_ROOTS | PROCESS_ROOTS | {"venv"} else set()

    def _attribute(self, module: str, name: str) -> set[str]:
        if module.split(".")[0] not in {"portability_data", "tests"}:
            return set()
        try:
            value = _imported(module, name)
        except Exception:  # an optional extra's module that does not import here: nothing to read
            return set()
        return self._value(value)

    def _value(self, value: Any) -> set[str]:
        if isinstance(value, types.ModuleType):
            return self._module(value.__name__)
        if (inspect.isfunction(value) or inspect.isclass(value)) and _own(value):
            if inspect.getsourcefile(value) == __file__:  # the reader itself (its imports are of src/)
                return set()
            if f"{value.__module__}.{value.__qualname__}" in THROUGH_A_REGISTRY:
                return {DYNAMIC}
            return set(self.of(value))
        return set()


def _imported(module: str, name: str) -> Any:
    """What `from module import name` binds: an attribute, or else the submodule of that name."""
    found = getattr(importlib.import_module(module), name, None)
    return found if found is not None else importlib.import_module(f"{module}.{name}")


def _constant_imports(call: ast.Call) -> set[str]:
    """`pytest.importorskip("torch")`, `importlib.import_module(name)`: an import by a string. A name
    made at run time counts as a framework (it may be one), unless it starts inside this package
    (`f"{__name__}.{path}"`) or with a module that is none (`"numpy" + ...`)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "spec_from_file_location":  # a module loaded from a file: what it imports is unread
        return {DYNAMIC}
    if name not in {"importorskip", "import_module", "__import__"} or not call.args:
        return set()
    first = call.args[0]
    while isinstance(first, ast.BinOp):
        first = first.left
    if isinstance(first, ast.JoinedStr) and first.values:
        first = first.values[0]
        if isinstance(first, ast.FormattedValue) and isinstance(first.value, ast.Name):
            return set() if first.value.id == "__name__" else {DYNAMIC}
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        root = first.value.split(".")[0]
        return {root} if root in FRAMEWORK_ROOTS | PROCESS_ROOTS else set()
    return {DYNAMIC}


def _venv_made(node: ast.List | ast.Tuple) -> set[str]:
    """[..., "-m", "venv", ...]: a command that builds a virtual environment."""
    values = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
    return {"venv"} if any(a == "-m" and b == "venv" for a, b in itertools.pairwise(values)) else set()


def tier_of(reached: Iterable[str]) -> str:
    """The tier of a test that reaches these module roots."""
    reached = set(reached)
    if "venv" in reached:
        return "env"
    if reached & (FRAMEWORK_ROOTS | PROCESS_ROOTS | {DYNAMIC}):
        return "e2e"
    return "unit"


def reached_by(reach: Reach, test: Callable[..., Any], fixtures: Iterable[Callable[..., Any]]) -> set[str]:
    """What a test reaches: its own function and the fixtures it requests (their own requests are in
    the test's closure of fixture names, so they come here too)."""
    found: set[str] = set(reach.of(test))
    for fixture in fixtures:
        found |= reach.of(fixture)
    return found


@contextlib.contextmanager
def unit_guard(test_id: str) -> Iterator[None]:
    """Run a unit test so that starting a process or importing a framework fails it, naming what it
    did and how to tier it."""

    def refuse(what: str) -> TierError:
        return TierError(
            f"{test_id} is in the unit tier (tests/tiers.py read no process or framework in what it "
            f"reaches) but {what}: name what does it in the test or a fixture so the reading finds "
            "it, or mark the test @pytest.mark.e2e"
        )

    real_import = builtins.__import__
    real_import_module = importlib.import_module

    def guarded_import(name: str, *args: Any, **kwargs: Any) -> Any:
        level = args[3] if len(args) > 3 else kwargs.get("level", 0)
        if level == 0 and name.split(".")[0] in FRAMEWORK_ROOTS:
            raise refuse(f"imported {name}")
        return real_import(name, *args, **kwargs)

    def guarded_import_module(name: str, package: str | None = None) -> Any:
        if name.split(".")[0] in FRAMEWORK_ROOTS:
            raise refuse(f"imported {name}")
        return real_import_module(name, package)

    def no_process(*args: Any, **kwargs: Any) -> Any:
        raise refuse(f"started a process ({args[1] if len(args) > 1 else args})")

    patches: list[tuple[Any, str, Any]] = [
        (builtins, "__import__", guarded_import),
        (importlib, "import_module", guarded_import_module),
        (subprocess.Popen, "_execute_child", no_process),
        (os, "fork", no_process),
        (os, "system", no_process),
        (os, "posix_spawn", no_process),
        (os, "posix_spawnp", no_process),
    ]
    saved = [(target, attr, getattr(target, attr)) for target, attr, _ in patches]
    try:
        for target, attr, value in patches:
            setattr(target, attr, value)
        yield
    finally:
        for target, attr, value in saved:
            setattr(target, attr, value)
