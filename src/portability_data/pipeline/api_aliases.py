"""One function, all its names: the canonical name of every public name (the api table's
``canonical_name`` and ``alias``), and the joins that read tables through it.

A framework exports one function under several names (``tf.exp`` is ``tf.math.exp``, ``tf.concat``
is ``tf.compat.v1.concat``, ``torch.nn.Linear`` is ``torch.nn.modules.linear.Linear``), and
documents others as aliases of a function that is a different Python object (``torch.absolute``:
"Alias for :func:`torch.abs`"). The api table lists each name; this module groups them:

- ``same_object``: names whose objects are one object. TensorFlow's decorators (dispatch,
  deprecation) wrap its functions, so for TensorFlow the object compared is the undecorated one
  (``tf_decorator.unwrap``), the one TensorFlow's own ``tf_export`` marks with its API names.
  Objects are compared by identity within one walk (``id``, so unhashable objects are fine); an
  object re-created on every attribute access has no identity to share and stays a name of its own
  (no alias is guessed);
- ``documented``: a name whose docstring opens (first 400 characters) with "Alias for/of
  :func:`X`" (or ``:class:``/``:obj:``/``:meth:``) where X is a public name of the same framework:
  the framework's own documentation says it is X (torch, jax).

The canonical name of a group, the first rule that applies:
1. the name the framework's own export declares (TensorFlow's ``tf_export``: the first
   non-deprecated TF 2 name, else ``compat.v1.`` + the TF 1 name), when it is one of the group's names;
2. a name other names are documented as aliases of, and that is no documented alias itself;
3. the shortest: names outside ``compat`` first, then fewest dotted components, fewest characters,
   and the first in sorted order.

Methods (kind method) are listed once, under their class's path, and are their own canonical name.
Every other table joins on the canonical name through `canonical_map` (the name people wrote stays
in the table beside it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

import pandas as pd

DOC_CHARS = 400
_DOC_ALIAS = re.compile(r"Alias (?:for|of)\s+:(?:func|class|obj|meth):`~?([A-Za-z_][\w.]*)`")


def documented_target(obj: object) -> str | None:
    """X where the object's docstring opens with "Alias for :func:`X`" (None otherwise)."""
    try:
        doc = getattr(obj, "__doc__", None)
    except Exception:
        return None
    if not isinstance(doc, str):
        return None
    found = _DOC_ALIAS.search(doc[:DOC_CHARS])
    return found.group(1) if found else None


def tf_declared(obj: object) -> tuple[object, str | None]:
    """The `declared` hook for TensorFlow (see canonical_names): the undecorated object and the name
    its tf_export declares (None when it declares none)."""
    try:
        from tensorflow.python.util import tf_decorator, tf_export
    except Exception:  # no TensorFlow: nothing is declared
        return obj, None
    try:
        _, undecorated = tf_decorator.unwrap(obj)
        name = tf_export.get_canonical_name_for_symbol(obj, add_prefix_to_v1_names=True)
    except Exception:
        return obj, None
    return undecorated, (f"tensorflow.{name}" if name else None)


def _shortest_key(name: str) -> tuple[int, int, int, str]:
    return (".compat." in name, name.count("."), len(name), name)


class _Groups:
    """Union-find over names."""

    def __init__(self, names: Iterable[str]) -> None:
        self.parent = {n: n for n in names}

    def find(self, name: str) -> str:
        root = name
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[name] != root:
            self.parent[name], name = root, self.parent[name]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def canonical_names(
    objects: Mapping[str, object],
    *,
    declared: Callable[[object], tuple[object, str | None]] | None = None,
) -> dict[str, tuple[str, str | None]]:
    """name -> (canonical name, alias kind or None) for the public names and their objects.

    ``declared`` gives (the object to compare, the name its framework declares) for an object;
    by default the object itself and no name (TensorFlow passes `tf_declared`)."""
    names = sorted(objects)
    groups = _Groups(names)
    by_object: dict[int, str] = {}
    declared_names: dict[str, str] = {}
    keep_alive = []  # the undecorated objects, so that no id is reused while the walk runs
    for name in names:
        obj = objects[name]
        key, declared_name = declared(obj) if declared is not None else (obj, None)
        keep_alive.append(key)
        first = by_object.setdefault(id(key), name)
        if first != name:
            groups.union(first, name)
        if declared_name:
            declared_names[name] = declared_name
    same_object_roots = {name: groups.find(name) for name in names}
    documented: dict[str, str] = {}
    for name in names:
        target = documented_target(objects[name])
        if target and target in objects and same_object_roots[target] != same_object_roots[name]:
            documented[name] = target
            groups.union(name, target)

    members: dict[str, list[str]] = {}
    for name in names:
        members.setdefault(groups.find(name), []).append(name)
    out: dict[str, tuple[str, str | None]] = {}
    for group in members.values():
        canonical = _pick(group, declared_names, documented)
        for name in group:
            if name == canonical:
                out[name] = (name, None)
            elif same_object_roots[name] == same_object_roots[canonical]:
                out[name] = (canonical, "same_object")
            else:
                out[name] = (canonical, "documented")
    return out


def _pick(group: list[str], declared: dict[str, str], documented: dict[str, str]) -> str:
    members = set(group)
    said = sorted({declared[n] for n in group if n in declared} & members, key=_shortest_key)
    if said:
        return said[0]
    targets = {t for n, t in documented.items() if n in members} - set(documented)
    originals = sorted(targets, key=_shortest_key)
    if originals:
        return originals[0]
    return min(group, key=_shortest_key)


def alias_counts(api: pd.DataFrame) -> pd.DataFrame:
    """Per framework: names, names that are another's alias (by kind), canonical functions that
    have more than one name."""
    records = []
    for framework, group in api.groupby("framework", sort=True):
        alias = group["alias"] if "alias" in group else pd.Series(dtype=object)
        canonical = group["canonical_name"] if "canonical_name" in group else group["qualified_name"]
        sizes = canonical.value_counts()
        records.append(
            {
                "framework": framework,
                "names": len(group),
                "aliases": int(alias.notna().sum()),
                "same_object": int((alias == "same_object").sum()),
                "documented": int((alias == "documented").sum()),
                "functions_with_aliases": int((sizes > 1).sum()),
            }
        )
    return pd.DataFrame.from_records(records)
