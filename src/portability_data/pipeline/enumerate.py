"""Enumerate the public API of a framework: every public function, builtin, class and class method.

This is step 1 of the study (docs/METHOD.md section 1): walk the framework's module tree and list what a
user can call. It runs in the calling process (no subprocess) and is deterministic: the same installed
versions give the same rows in the same order, because modules are visited breadth-first in sorted
order and the rows are sorted before they are returned.

The filters follow the study, with the choices it left implicit made explicit:
- a module is walked when it is reached through a public attribute (no ``_`` prefix) whose name is the
  module's own last name component, and the module lives inside its parent (``torch.nn`` inside
  ``torch``), so re-exports such as ``import numpy as np`` or ``F = torch.nn.functional`` are not
  walked twice; private modules (``torch._*``, ``jax._src``) are never reached;
- TensorFlow's public API lives in ``tensorflow._api.v2`` (compat included) and Keras behind
  ``tf.keras``; names are written the way users write them (``tensorflow.math.add``,
  ``tensorflow.keras.layers.Dense``), not with the private module path; the compat copies nested in
  compat (``tf.compat.v1.compat.v2``) are not walked again;
- public submodules that are not imported by default (``jax.experimental``, ``torch.distributed``)
  are imported first; an import that fails is skipped, counted and logged;
- a member counts when it is defined by the framework itself (its ``__module__`` starts with one of
  the framework's packages), so ``print`` or ``numpy.ndarray`` found in a module namespace are out;
  callable objects such as ``jax.numpy.add`` (a ufunc) or ``jax.nn.relu`` (custom_jvp) count as
  functions;
- methods are listed once per class, under the class's canonical (shortest, then first sorted) path:
  the public callables defined in the class itself or inherited from a base that is not itself part
  of the public API (``torch.Tensor.add`` comes from the private ``torch._C.TensorBase``).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
import time
import types
import warnings
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from portability_data.pipeline.api_aliases import canonical_names, tf_declared

log = logging.getLogger(__name__)

API_COLUMNS = [
    "framework",
    "framework_version",
    "qualified_name",
    "module",
    "name",
    "kind",
    "canonical_name",
    "alias",
]

# Submodule names never imported: scripts and test trees.
SKIP_SUBMODULES = frozenset({"__main__", "tests", "test_util", "conftest", "setup"})


@dataclass(frozen=True)
class FrameworkSpec:
    """Where a framework's public API starts and which packages count as the framework's own code."""

    framework: str
    import_name: str
    public_root: str
    # (real module name, public path) pairs: modules whose real name does not follow the public path.
    entry_points: tuple[tuple[str, str], ...]
    origins: tuple[str, ...]
    # Real module-name prefixes that may be walked (TensorFlow: not tensorflow.python, the implementation).
    walkable: tuple[str, ...]


SPECS: dict[str, FrameworkSpec] = {
    "torch": FrameworkSpec("torch", "torch", "torch", (("torch", "torch"),), ("torch",), ("torch",)),
    "jax": FrameworkSpec("jax", "jax", "jax", (("jax", "jax"),), ("jax", "jaxlib"), ("jax",)),
    "tensorflow": FrameworkSpec(
        "tensorflow",
        "tensorflow",
        "tensorflow",
        (
            ("tensorflow", "tensorflow"),
            ("tensorflow._api.v2", "tensorflow"),
            ("keras._tf_keras.keras", "tensorflow.keras"),
            ("keras.api._tf_keras.keras", "tensorflow.keras"),
            ("tf_keras", "tensorflow.keras"),
            # a module of its own, not under _api.v2, in front of tensorflow._api.v2.experimental
            ("tensorflow.experimental", "tensorflow.experimental"),
        ),
        ("tensorflow", "keras", "tf_keras", "tensorboard", "tensorflow_estimator"),
        (
            "tensorflow._api.v2",
            "keras._tf_keras.keras",
            "keras.api._tf_keras.keras",
            "tf_keras",
            "tensorflow.experimental",
        ),
    ),
}


@dataclass
class EnumerationStats:
    """What the walk saw and skipped: reported in the log and to the caller."""

    framework: str
    version: str = ""
    modules: int = 0
    import_errors: Counter[str] = field(default_factory=Counter)
    attribute_errors: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def summary(self) -> str:
        errors = sum(self.import_errors.values())
        return (
            f"{self.framework} {self.version}: {sum(self.kinds.values())} rows"
            f" {dict(sorted(self.kinds.items()))}"
            f" from {self.modules} modules in {self.seconds:.1f}s; {errors} submodule import(s) failed"
            f" ({dict(self.import_errors.most_common(5))}), {self.attribute_errors} attribute(s) unreadable"
        )


def _is_public(name: str) -> bool:
    return bool(name) and not name.startswith("_")


def _origin(obj: object) -> str:
    """The package that defined an object: its ``__module__``, else its type's."""
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or not module:
        module = getattr(type(obj), "__module__", None)
    return module if isinstance(module, str) else ""


def _owned(obj: object, spec: FrameworkSpec) -> bool:
    return _origin(obj).split(".", 1)[0] in spec.origins


def classify(obj: object, spec: FrameworkSpec) -> str | None:
    """The API kind of a module member (function, builtin, class), or None when it is not API."""
    try:
        if isinstance(obj, types.ModuleType):
            return None
        if inspect.isclass(obj):
            return "class" if _owned(obj, spec) else None
        if inspect.isbuiltin(obj):
            return "builtin" if _owned(obj, spec) else None
        if inspect.isfunction(obj):
            return "function" if _owned(obj, spec) else None
        if callable(obj) and _owned(obj, spec):
            return "function"
    except Exception:  # an exotic object whose attributes raise: not API
        return None
    return None


def _method_kind(raw: object) -> bool:
    """Whether a raw class-dict entry is a callable method (not a property or a data attribute)."""
    if isinstance(raw, (staticmethod, classmethod)):
        return True
    return inspect.isfunction(raw) or inspect.isbuiltin(raw) or inspect.ismethoddescriptor(raw)


def _import_public_submodules(module: types.ModuleType, stats: EnumerationStats) -> None:
    """Import the public submodules of a package that are not loaded yet; failures are counted."""
    paths = getattr(module, "__path__", None)
    if paths is None:
        return
    try:
        infos = sorted(pkgutil.iter_modules(list(paths)), key=lambda info: info.name)
    except Exception:
        return
    for info in infos:
        if not _is_public(info.name) or info.name in SKIP_SUBMODULES:
            continue
        full = f"{module.__name__}.{info.name}"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                importlib.import_module(full)
        except BaseException as exc:  # ImportError, but also SystemExit or RuntimeError at import time
            if isinstance(exc, KeyboardInterrupt):
                raise
            stats.import_errors[type(exc).__name__] += 1
            log.debug("skipped %s: %s: %s", full, type(exc).__name__, exc)


def _members(module: types.ModuleType, stats: EnumerationStats) -> list[tuple[str, object]]:
    try:
        names = sorted({n for n in dir(module) if _is_public(n)})
    except Exception:
        return []
    out = []
    for name in names:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append((name, getattr(module, name)))
        except Exception:
            stats.attribute_errors += 1
    return out


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _public_path(name: str, spec: FrameworkSpec) -> str | None:
    """A module's public path from its real name (``tensorflow._api.v2.math`` -> ``tensorflow.math``)."""
    for real, public in sorted(spec.entry_points, key=lambda pair: -len(pair[0])):
        if name == real or name.startswith(real + "."):
            return public + name[len(real) :]
    return None


def _walkable(
    child: types.ModuleType, attr: str, parent: types.ModuleType, spec: FrameworkSpec, parent_path: str
) -> bool:
    """Whether a module reached as ``parent.attr`` is part of the public tree (see the module docstring).
    A child whose public path is the parent's path plus ``attr`` counts too: TensorFlow's lazily
    loaded ``tf.experimental`` is a module named ``tensorflow.experimental`` whose ``numpy`` is
    ``tensorflow._api.v2.experimental.numpy``."""
    name = getattr(child, "__name__", None)
    if not isinstance(name, str) or name.rsplit(".", 1)[-1] != attr or not _within(name, spec.walkable):
        return False
    if any(name == real for real, _ in spec.entry_points):
        return True
    return name.startswith(parent.__name__ + ".") or _public_path(name, spec) == f"{parent_path}.{attr}"


def _import_root(spec: FrameworkSpec) -> types.ModuleType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(spec.import_name)


def enumerate_api_with_stats(
    framework: str, *, import_submodules: bool = True, spec: FrameworkSpec | None = None
) -> tuple[pd.DataFrame, EnumerationStats]:
    """Walk one framework and return its api rows (sorted) and what the walk saw.

    ``spec`` replaces the framework's own (tests walk a synthetic package tree with it).
    """
    with warnings.catch_warnings():  # deprecated attributes warn when they are merely looked at
        warnings.simplefilter("ignore")
        return _enumerate(framework, spec or SPECS[framework], import_submodules)


def _enumerate(
    framework: str, spec: FrameworkSpec, import_submodules: bool
) -> tuple[pd.DataFrame, EnumerationStats]:
    started = time.perf_counter()
    stats = EnumerationStats(framework)
    module = _import_root(spec)
    stats.version = str(getattr(module, "__version__", "unknown"))

    rows: dict[str, tuple[str, str, str]] = {}  # qualified_name -> (module path, name, kind)
    objects: dict[str, object] = {}  # qualified_name -> the object (not methods): the aliases
    classes: dict[int, tuple[str, type]] = {}  # id -> (canonical path, class)
    seen_modules: set[int] = {id(module)}
    queue: deque[tuple[types.ModuleType, str]] = deque([(module, spec.public_root)])
    while queue:
        current, path = queue.popleft()
        stats.modules += 1
        if import_submodules and _within(current.__name__, spec.walkable):
            _import_public_submodules(current, stats)
        for name, obj in _members(current, stats):
            if isinstance(obj, types.ModuleType):
                nested_compat = name == "compat" and ".compat." in f"{path}."  # tf.compat.v1.compat.v2...
                if (
                    id(obj) not in seen_modules
                    and not nested_compat
                    and _walkable(obj, name, current, spec, path)
                ):
                    seen_modules.add(id(obj))
                    queue.append((obj, f"{path}.{name}"))
                continue
            kind = classify(obj, spec)
            if kind is None:
                continue
            qualified = f"{path}.{name}"
            rows[qualified] = (path, name, kind)
            objects[qualified] = obj
            if kind == "class":
                known = classes.get(id(obj))
                if known is None or (qualified.count("."), qualified) < (known[0].count("."), known[0]):
                    classes[id(obj)] = (qualified, obj)  # type: ignore[assignment]

    public_classes = set(classes)
    for class_path, cls in classes.values():
        for name, raw in _class_methods(cls, public_classes):
            if _method_kind(raw):
                rows.setdefault(f"{class_path}.{name}", (class_path, name, "method"))

    declared = tf_declared if spec.import_name == "tensorflow" else None
    canonical = canonical_names(objects, declared=declared)  # methods: their own (not in objects)
    own: tuple[str | None, str | None] = (None, None)
    frame = pd.DataFrame(
        [
            (framework, stats.version, qualified, mod, name, kind, *canonical.get(qualified, own))
            for qualified, (mod, name, kind) in sorted(rows.items())
        ],
        columns=API_COLUMNS,
    )
    frame["canonical_name"] = frame["canonical_name"].fillna(frame["qualified_name"])
    stats.kinds = Counter(frame["kind"])
    stats.seconds = time.perf_counter() - started
    log.info("enumerated %s", stats.summary())
    return frame, stats


def _class_methods(cls: type, public_classes: set[int]) -> list[tuple[str, object]]:
    """Public methods of a class: its own, and those inherited from bases outside the public API."""
    out = []
    try:
        mro = inspect.getmro(cls)
        names = sorted({n for klass in mro if klass is not object for n in vars(klass) if _is_public(n)})
    except Exception:
        return out
    for name in names:
        for klass in mro:
            if name in vars(klass):
                if klass is cls or (id(klass) not in public_classes and klass is not object):
                    out.append((name, vars(klass)[name]))
                break
    return out


def enumerate_api(framework: str, *, import_submodules: bool = True) -> pd.DataFrame:
    """The api table rows of one installed framework (torch, tensorflow or jax), sorted."""
    return enumerate_api_with_stats(framework, import_submodules=import_submodules)[0]


def study_comparable_counts(frame: pd.DataFrame) -> dict[str, int]:
    """Counts to set beside the study's (which counted unique bare names of functions and classes)."""
    no_methods = frame[frame["kind"] != "method"]
    return {
        "rows": len(frame),
        "rows_without_methods": len(no_methods),
        "unique_names_without_methods": int(no_methods["name"].nunique()),
        "unique_names_with_methods": int(frame["name"].nunique()),
    }


def run_enumerate(frameworks: list[str], out: Path) -> None:
    """Pipeline step `enumerate`: write the api table, one Parquet file per framework.

    ``out`` is the table folder (``data/api``): each framework lands in ``<out>/<framework>.parquet``;
    a path ending in ``.parquet`` gets all frameworks in that one file instead.
    """
    from portability_data.tables.tableio import write_table

    out = Path(out)
    frames = []
    for framework in frameworks:
        frame, _ = enumerate_api_with_stats(framework)
        counts = study_comparable_counts(frame)
        log.info("%s counts: %s", framework, counts)
        if out.suffix == ".parquet":
            frames.append(frame)
        else:
            out.mkdir(parents=True, exist_ok=True)
            write_table("api", frame, out / f"{framework}.parquet")
    if frames:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_table("api", pd.concat(frames, ignore_index=True), out)
