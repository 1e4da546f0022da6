"""The API side of counting: which names the counter looks for (`ApiIndex`: bare names, qualified
names, module members) and what a file's imports bind them to (`file_bindings`), with the qualified
name a dotted path denotes (the TensorFlow 1 and keras fallbacks). See frequencies.py's docstring
for the rules.

Apart from the tree-sitter scan (calls.py) because it is about names, not trees: the scan
hands it the import statements it found.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pandas as pd

FRAMEWORK_ROOTS = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}
# Module names a file may import that stand for a framework's public tree.
IMPORT_REWRITES = {"keras": "tensorflow.keras"}
TF2_ALIAS = "tensorflow.compat.v2."  # TF2's own API under compat: the same objects as tensorflow.*

_NOISE = re.compile(rb"\s+|\\\r?\n|#[^\n]*")


@dataclass(frozen=True)
class ApiIndex:
    """What the counter matches against: bare names (bytes) and qualified names per framework."""

    names: frozenset[bytes]
    qualified: dict[str, str]  # qualified name -> framework
    members: dict[str, frozenset[str]]  # module path -> public member names (for ``import *``)
    _canonical_cache: dict[str, str | None] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_frame(cls, api: pd.DataFrame, kinds: Sequence[str] | None = None) -> ApiIndex:
        """Index an api table; ``kinds`` limits the bare names (the study's list held no methods' owners)."""
        frame = api if kinds is None else api[api["kind"].isin(list(kinds))]
        members: dict[str, set[str]] = {}
        modules, names, kinds_ = (api[c].to_numpy(dtype=object).tolist() for c in ("module", "name", "kind"))
        for module, name, kind in zip(modules, names, kinds_):
            if kind != "method":
                members.setdefault(module, set()).add(name)
        qualified = api["qualified_name"].to_numpy(dtype=object).tolist()
        framework = api["framework"].to_numpy(dtype=object).tolist()
        return cls(
            names=frozenset(n.encode() for n in set(frame["name"].to_numpy(dtype=object).tolist())),
            qualified=dict(zip(qualified, framework)),
            members={m: frozenset(v) for m, v in members.items()},
        )

    def canonical(self, dotted: str) -> str | None:
        """The API qualified name a dotted path denotes (``_canonical``), remembered per process:
        a corpus names the same few hundred paths over and over."""
        try:
            return self._canonical_cache[dotted]
        except KeyError:
            found = self._canonical_cache[dotted] = _canonical(dotted, self)
            return found


@dataclass
class FileBindings:
    """What a file's imports bind: local name -> dotted target, and names brought by ``import *``."""

    names: dict[str, str]
    wildcard: dict[str, str]

    def target(self, head: str) -> str | None:
        return self.names.get(head) or self.wildcard.get(head)


def file_bindings(source: bytes, api: ApiIndex, captures: dict) -> FileBindings:
    names: dict[str, str] = {}
    wildcards: list[str] = []
    for node in captures.get("import", ()):
        for local, target in _import_bindings(source, node):
            if local == "*":
                wildcards.append(target)
            elif target.split(".", 1)[0] in _RESOLVABLE_HEADS:
                names[local] = target
    wildcard: dict[str, str] = {}
    for module in wildcards:
        canonical = _canonical(module, api) or module
        for name in api.members.get(canonical, ()):
            wildcard.setdefault(name, f"{canonical}.{name}")
    return FileBindings(names, wildcard)


def _import_bindings(source: bytes, node) -> Iterator[tuple[str, str]]:
    """(local name, dotted target) pairs bound by one import statement; ``*`` for wildcards."""

    def text(n) -> str:
        return _NOISE.sub(b"", source[n.start_byte : n.end_byte]).decode("utf-8", "replace")

    if node.type == "import_statement":
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                target, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
                if target is not None and alias is not None:
                    yield text(alias), text(target)
            elif child.type == "dotted_name":
                dotted = text(child)
                head = dotted.split(".", 1)[0]
                yield head, head
        return
    module = node.child_by_field_name("module_name")
    if module is None or module.type != "dotted_name":  # relative imports are the file's own package
        return
    base = text(module)
    if base.partition(".")[0] not in _RESOLVABLE_HEADS:
        return  # binds nothing a framework call goes through (what ``file_bindings`` keeps)
    if any(c.type == "wildcard_import" for c in node.children):
        yield "*", base
        return
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            target, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
            if target is not None and alias is not None:
                yield text(alias), f"{base}.{text(target)}"
        elif child.type == "dotted_name":
            name = text(child)
            yield name, f"{base}.{name}"


def _canonical(dotted: str, api: ApiIndex) -> str | None:
    """The API qualified name a dotted path denotes, with the TF1 and keras fallbacks. In TF2
    `tensorflow.compat.v2` is the top-level API itself (`import tensorflow.compat.v2 as tf`, the
    style of tensorflow-probability), so its names fold onto `tensorflow.<name>` where that exists:
    one function, one count."""
    if dotted.startswith(TF2_ALIAS):
        top = "tensorflow." + dotted[len(TF2_ALIAS) :]
        if top in api.qualified:
            return top
    if dotted in api.qualified:
        return dotted
    head, _, rest = dotted.partition(".")
    if head in IMPORT_REWRITES:
        dotted = IMPORT_REWRITES[head] + ("." + rest if rest else "")
        if dotted in api.qualified:
            return dotted
        head, _, rest = dotted.partition(".")
    if head == "tensorflow" and rest and not rest.startswith("compat."):
        v1 = f"tensorflow.compat.v1.{rest}"
        if v1 in api.qualified:
            return v1
    return None


_RESOLVABLE_HEADS = frozenset({*FRAMEWORK_ROOTS.values(), *IMPORT_REWRITES})
