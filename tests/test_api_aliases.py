"""One function, all its names (issue 60): the canonical name of every public name, on synthetic
objects and on the real frameworks' namespaces, and the joins that read tables through it."""

from __future__ import annotations

import pandas as pd
import pytest

from portability_data.pipeline import api_aliases as al
from portability_data.readings import canonical


def _fn(doc: str | None = None):
    def f(x):
        return x

    f.__doc__ = doc
    return f


def test_same_object_groups_and_shortest_name() -> None:
    add, other = _fn(), _fn()
    found = al.canonical_names({"fw.math.add": add, "fw.add": add, "fw.compat.v1.add": add, "fw.sub": other})
    assert found["fw.add"] == ("fw.add", None)
    assert found["fw.math.add"] == ("fw.add", "same_object")
    assert found["fw.compat.v1.add"] == ("fw.add", "same_object")
    assert found["fw.sub"] == ("fw.sub", None)


def test_compat_names_come_last_even_when_shorter() -> None:
    fn = _fn()
    found = al.canonical_names({"fw.compat.v1.f": fn, "fw.linalg.long_name_f": fn})
    assert found["fw.compat.v1.f"] == ("fw.linalg.long_name_f", "same_object")


def test_unhashable_objects_are_compared_by_identity() -> None:
    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

        def __eq__(self, other: object) -> bool:
            raise RuntimeError("never compared by value")

        def __call__(self) -> None:
            return None

    one, two = Unhashable(), Unhashable()
    found = al.canonical_names({"fw.a": one, "fw.b": one, "fw.c": two})
    assert found["fw.b"] == ("fw.a", "same_object")
    assert found["fw.c"] == ("fw.c", None)  # another object, equal or not: no alias is guessed


def test_documented_alias_points_at_the_original() -> None:
    found = al.canonical_names(
        {
            "fw.abs": _fn("abs(x) -> T\n\nAlias of :func:`fw.absolute`."),
            "fw.absolute": _fn("The absolute value."),
            "fw.elsewhere": _fn("Alias for :func:`other.thing`."),  # not a name of this framework
        }
    )
    assert found["fw.abs"] == ("fw.absolute", "documented")
    assert found["fw.absolute"] == ("fw.absolute", None)
    assert found["fw.elsewhere"] == ("fw.elsewhere", None)
    late = "x" * al.DOC_CHARS + " Alias for :func:`fw.absolute`."
    assert al.canonical_names({"fw.a": _fn(late), "fw.absolute": _fn()})["fw.a"] == ("fw.a", None)


def test_declared_name_wins_over_the_shortest() -> None:
    fn = _fn()

    def declared(obj: object) -> tuple[object, str | None]:
        return obj, "fw.math.exp" if obj is fn else None

    found = al.canonical_names({"fw.exp": fn, "fw.math.exp": fn}, declared=declared)
    assert found["fw.exp"] == ("fw.math.exp", "same_object")
    # a declared name the group does not hold falls back to the rule
    found = al.canonical_names({"fw.exp": fn, "fw.x.exp": fn}, declared=declared)
    assert found["fw.x.exp"] == ("fw.exp", "same_object")


def test_real_tensorflow_names() -> None:
    tf = pytest.importorskip("tensorflow")
    names = {
        "tensorflow.exp": tf.exp,
        "tensorflow.math.exp": tf.math.exp,
        "tensorflow.matmul": tf.matmul,
        "tensorflow.linalg.matmul": tf.linalg.matmul,
        "tensorflow.concat": tf.concat,
        "tensorflow.compat.v1.concat": tf.compat.v1.concat,
        "tensorflow.reduce_mean": tf.reduce_mean,
        "tensorflow.math.reduce_mean": tf.math.reduce_mean,
        "tensorflow.compat.v1.reduce_mean": tf.compat.v1.reduce_mean,
        "tensorflow.compat.v1.app.run": tf.compat.v1.app.run,
    }
    found = al.canonical_names(names, declared=al.tf_declared)
    assert tf.exp is tf.math.exp
    assert found["tensorflow.exp"] == ("tensorflow.math.exp", "same_object")  # tf_export's first name
    assert found["tensorflow.matmul"] == ("tensorflow.linalg.matmul", "same_object")
    assert found["tensorflow.compat.v1.concat"] == ("tensorflow.concat", "same_object")
    assert found["tensorflow.reduce_mean"] == ("tensorflow.math.reduce_mean", "same_object")
    # TF 1's reduce_mean (keep_dims) is another function, not an alias
    assert tf.compat.v1.reduce_mean is not tf.math.reduce_mean
    assert found["tensorflow.compat.v1.reduce_mean"] == ("tensorflow.compat.v1.reduce_mean", None)
    assert found["tensorflow.compat.v1.app.run"] == ("tensorflow.compat.v1.app.run", None)


def test_real_torch_names() -> None:
    torch = pytest.importorskip("torch")
    from torch.nn.modules import linear

    names = {
        "torch.nn.Linear": torch.nn.Linear,
        "torch.nn.modules.linear.Linear": linear.Linear,
        "torch.softmax": torch.softmax,
        "torch.nn.functional.softmax": torch.nn.functional.softmax,
        "torch.abs": torch.abs,
        "torch.absolute": torch.absolute,
        "torch.as_tensor": torch.as_tensor,
        "torch.tensor": torch.tensor,
    }
    found = al.canonical_names(names)
    assert found["torch.nn.modules.linear.Linear"] == ("torch.nn.Linear", "same_object")
    # not one object: an alias only where torch's own docstring says so
    assert torch.softmax is not torch.nn.functional.softmax
    said = al.documented_target(torch.softmax)
    expected = (
        ("torch.nn.functional.softmax", "documented")
        if said == "torch.nn.functional.softmax"
        else (
            "torch.softmax",
            None,
        )
    )
    assert found["torch.softmax"] == expected
    assert found["torch.absolute"][0] == "torch.abs" and al.documented_target(torch.absolute) == "torch.abs"
    assert found["torch.as_tensor"] == ("torch.as_tensor", None)  # not torch.tensor
    assert found["torch.tensor"] == ("torch.tensor", None)


def test_real_jax_names() -> None:
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    names = {"jax.jit": jax.jit, "jax.numpy.ndarray": jnp.ndarray, "jax.Array": jax.Array}
    found = al.canonical_names(names)
    assert found["jax.jit"] == ("jax.jit", None)
    assert (found["jax.numpy.ndarray"][0] == "jax.Array") == (jnp.ndarray is jax.Array)


def test_with_canonical_and_counts() -> None:
    api = pd.DataFrame(
        {
            "framework": ["tensorflow", "tensorflow", "tensorflow"],
            "qualified_name": ["tensorflow.exp", "tensorflow.math.exp", "tensorflow.cast"],
            "canonical_name": ["tensorflow.math.exp", "tensorflow.math.exp", "tensorflow.cast"],
            "alias": ["same_object", None, None],
        }
    )
    mapping = canonical.canonical_map(api)
    frame = pd.DataFrame(
        {"framework": ["tensorflow", "tensorflow"], "function": ["tensorflow.exp", "tf.unknown"]}
    )
    out = canonical.with_canonical(frame, mapping)
    assert list(out["canonical_name"]) == ["tensorflow.math.exp", "tf.unknown"]
    counts = al.alias_counts(api).iloc[0]
    keys = ["names", "aliases", "same_object", "functions_with_aliases"]
    assert [counts[k] for k in keys] == [3, 1, 1, 1]
    assert canonical.canonical_map(api.drop(columns=["canonical_name"])) == {}
    with pytest.raises(KeyError, match="no column function"):
        canonical.with_canonical(frame.rename(columns={"function": "name"}), mapping)
