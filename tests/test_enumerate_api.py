"""API enumeration: the study's filters on a synthetic package tree, and one real framework (JAX)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from portability_data.pipeline import enumerate as en

PACKAGE = {
    "__init__.py": """
        __version__ = "0.1"
        import os
        from fakefw import core
        from fakefw.core import add, Tensor
        from fakefw import _private

        _hidden = 1
        print_ = print


        def top(x):
            return x


        class _Base:
            def base_method(self):
                return 1


        class Public(_Base):
            def run(self):
                return 2

            @staticmethod
            def make():
                return Public()

            @property
            def prop(self):
                return 3

            def _priv(self):
                return 4


        class Child(Public):
            def extra(self):
                return 5


        class CallableThing:
            def __call__(self, x):
                return x


        instance_fn = CallableThing()
    """,
    "core.py": """
        import numpy as np
        ndarray = np.ndarray


        def add(a, b):
            return a + b


        class Tensor:
            def view(self):
                return self
    """,
    "lazy/__init__.py": """
        def lazy_fn():
            return 0
    """,
    "broken.py": """
        raise ImportError("an optional dependency is missing")
    """,
    "_private.py": """
        def secret():
            return 0
    """,
    "tests/__init__.py": "",
    "tests/test_x.py": """
        raise RuntimeError("test folders are never imported")
    """,
}


@pytest.fixture
def fake_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> en.FrameworkSpec:
    for name, text in PACKAGE.items():
        path = tmp_path / "fakefw" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield en.FrameworkSpec("torch", "fakefw", "fakefw", (("fakefw", "fakefw"),), ("fakefw",), ("fakefw",))
    for module in [m for m in sys.modules if m == "fakefw" or m.startswith("fakefw.")]:
        del sys.modules[module]


def test_synthetic_tree(fake_spec: en.FrameworkSpec) -> None:
    frame, stats = en.enumerate_api_with_stats("torch", spec=fake_spec)
    rows = dict(zip(frame["qualified_name"], frame["kind"]))
    assert rows["fakefw.top"] == "function"
    assert rows["fakefw.add"] == "function" and rows["fakefw.core.add"] == "function"
    assert rows["fakefw.Public"] == "class" and rows["fakefw.Tensor"] == "class"
    assert rows["fakefw.instance_fn"] == "function"  # a callable object defined by the framework
    assert rows["fakefw.lazy.lazy_fn"] == "function"  # a submodule the package does not import itself
    # Methods: own ones, and those of a private base; not properties, not private, not a public base's.
    assert rows["fakefw.Public.run"] == "method" and rows["fakefw.Public.make"] == "method"
    assert rows["fakefw.Public.base_method"] == "method"
    assert rows["fakefw.Child.extra"] == "method"
    assert "fakefw.Child.run" not in rows and "fakefw.Public.prop" not in rows
    assert "fakefw.Public._priv" not in rows
    # Methods once per class, under its canonical path.
    assert "fakefw.Tensor.view" in rows and "fakefw.core.Tensor.view" not in rows
    # Private modules, foreign objects and foreign modules are out.
    assert not any("._" in name or name.startswith("fakefw.os") for name in rows)
    assert "fakefw.print_" not in rows and "fakefw.core.ndarray" not in rows
    assert stats.import_errors["ImportError"] == 1
    assert set(frame["framework"]) == {"torch"} and set(frame["framework_version"]) == {"0.1"}
    assert list(frame["qualified_name"]) == sorted(frame["qualified_name"])
    again, _ = en.enumerate_api_with_stats("torch", spec=fake_spec)
    pd.testing.assert_frame_equal(frame, again)


def test_study_comparable_counts() -> None:
    frame = pd.DataFrame(
        {
            "name": ["a", "a", "B", "run"],
            "kind": ["function", "function", "class", "method"],
        }
    )
    counts = en.study_comparable_counts(frame)
    assert counts == {
        "rows": 4,
        "rows_without_methods": 3,
        "unique_names_without_methods": 2,
        "unique_names_with_methods": 3,
    }


def test_real_jax(tmp_path: Path) -> None:
    """One real framework end to end: JAX (a few seconds), written through the table layer."""
    pytest.importorskip("jax")
    en.run_enumerate(["jax"], tmp_path)
    from portability_data.tables.tableio import read_table

    frame = read_table("api", tmp_path / "jax.parquet")
    rows = dict(zip(frame["qualified_name"], frame["kind"]))
    assert rows["jax.jit"] == "function"
    assert rows["jax.numpy.add"] == "function"  # a ufunc object
    assert rows["jax.nn.relu"] == "function"  # a custom_jvp object
    assert rows["jax.Array"] == "class"
    assert not any("._src" in name or "._" in name for name in rows)
    assert frame["qualified_name"].is_unique
    assert len(frame[frame["kind"] != "method"]) > 1000
    assert (frame["canonical_name"] == frame["qualified_name"]).sum() > 1000  # most names are their own
    others = frame["canonical_name"] != frame["qualified_name"]
    assert set(frame.loc[others, "alias"]) <= {"same_object", "documented"}


def test_synthetic_aliases(fake_spec: en.FrameworkSpec) -> None:
    """One object under two names (fakefw.add is fakefw.core.add): one canonical name, the shortest."""
    frame, _ = en.enumerate_api_with_stats("torch", spec=fake_spec)
    rows = frame.set_index("qualified_name")
    assert rows.loc["fakefw.core.add", "canonical_name"] == "fakefw.add"
    assert rows.loc["fakefw.core.add", "alias"] == "same_object"
    assert rows.loc["fakefw.add", "canonical_name"] == "fakefw.add"
    assert pd.isna(rows.loc["fakefw.add", "alias"])
    assert rows.loc["fakefw.core.Tensor", "canonical_name"] == "fakefw.Tensor"
    methods = frame[frame["kind"] == "method"]
    assert (methods["canonical_name"] == methods["qualified_name"]).all() and methods["alias"].isna().all()
