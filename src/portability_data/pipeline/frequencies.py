"""Count how often each API function is called in a corpus (docs/METHOD.md section 2).

Two counts per function, from one tree-sitter parse per file:
- ``bare_calls``: the study's rule, exactly. code_tokenize turns a file into the leaves of its
  tree-sitter tree (a string literal is one leaf, comments are leaves) and the study counts every
  ``identifier`` leaf whose text is an API name, directly followed by a ``(`` leaf and not preceded by
  ``def``. So ``class Model(tf.keras.Model)`` counts ``Model``; ``f  # c`` then ``(x)`` does not count;
  calls inside f-strings do not count. We compute the same thing without materialising the token
  stream (``scan_calls``): a regular expression proposes every API name followed by ``(`` and the
  tree confirms each one (the ``(`` is a token, the name is the identifier token just before it, not
  in an f-string, not after ``def``). Where the tree has errors (Python 2, broken files) the leaves
  are walked one by one instead (``bare_counts_walk``), so the rule holds there too. The tests check
  both against code_tokenize's own token stream (``study_bare_counts``), on fixtures and on random
  token soup. (The study's own run raised on any syntax error and dropped the file;
  ``syntax_errors: skip`` does that, the default counts what tree-sitter parses and flags the file.)
- ``calls``: calls resolved to qualified names through the file's imports (``import torch.nn as nn``,
  ``from jax import numpy as jnp``, ``from torch.nn import functional as F``, ``from torch import *``)
  and attribute chains (``tf.keras.layers.Dense``). A TensorFlow 1 name missing from the TF 2 API is
  looked up in ``tensorflow.compat.v1``; ``import keras`` is read as ``tensorflow.keras``. Imports are
  collected file-wide (flow-insensitive); a call on the result of a call (``x.view(...)``) is not
  resolvable without types and is not counted.

The parser is built once per process from the ``tree-sitter-python`` wheel (code_tokenize's own
loader downloads a grammar, which fails offline). Files are counted in parallel (``num_proc``
processes) from a stream, with a bounded number of files in flight, so a full corpus fits one machine.
"""

from __future__ import annotations

import bisect
import logging
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from portability_data.pipeline.corpus import Record, contains_framework, corpus_id, records_for

log = logging.getLogger(__name__)

FREQUENCY_COLUMNS = ["framework", "corpus", "qualified_name", "calls", "bare_calls", "files", "resolution"]
DEFAULT_MAX_BYTES = 1_000_000
FRAMEWORK_ROOTS = {"torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}
# Module names a file may import that stand for a framework's public tree.
IMPORT_REWRITES = {"keras": "tensorflow.keras"}

_NOISE = re.compile(rb"\s+|\\\r?\n|#[^\n]*")

_PARSER = None


def parser():
    """The process's tree-sitter Python parser (built once; grammar from the tree-sitter-python wheel)."""
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_python

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    return _PARSER


# ----------------------------------------------------------------------------------------------------
# The API side: names to look for


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


# ----------------------------------------------------------------------------------------------------
# One file


@dataclass
class FileResult:
    """The counts of one file, or the reason it was skipped."""

    key: str
    frameworks: tuple[str, ...] = ()
    bare: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    size: int = 0
    skipped: str | None = None
    flags: tuple[str, ...] = ()


def _prev_leaf(node):
    """The leaf before ``node`` in code_tokenize's order (a string literal counts as one leaf)."""
    n = node
    while True:
        s = n.prev_sibling
        if s is not None:
            break
        n = n.parent
        if n is None:
            return None
    while s.child_count and s.type != "string":
        s = s.child(s.child_count - 1)
    return s


# A call site, matched on the reversed source: "(" then optional whitespace, the last name and the
# chain of dotted names before it (possessive quantifiers, so a failed match never backtracks).
# Starting with the literal "(" lets the regex engine jump from one paren to the next, several times
# faster than trying a name at every byte of the forward text. Group 1 is the last name reversed,
# group 2 the head reversed (Python keeps a group's last repeat). A word may start with a digit here
# (it is then no name nor import and is dropped by the lookups); the tree check rejects a match
# inside a longer non-ASCII identifier.
_CALL_REVERSED = re.compile(rb"\([ \t\f\r\n]*+(\w++)(?:[ \t]*+\.[ \t]*+(\w++))*+")
_SPACE_BEFORE_NAME = frozenset(b" \t\n\r\x0b\x0c\\")  # what bytes.rstrip strips, and "\\"
_FSTRING_MARKS = (b"f'", b'f"', b"fr'", b'fr"')  # searched in the lower-cased source

_IMPORT_TYPES = ("import_statement", "import_from_statement")


def find_nodes(source: bytes, tree) -> dict[str, list]:
    """Import statements and Python 2 statements of a parsed file, and whether it may hold f-strings.

    Found from their keywords in the text and confirmed in the tree (a keyword inside a string or a
    comment is no node), which is cheaper than a tree-wide query.
    """
    root = tree.root_node
    found: dict[str, list] = {"import": [], "py2": []}
    seen: set[int] = set()
    for pos in _word_positions(source, b"import"):
        node = root.descendant_for_byte_range(pos, pos + 1)
        parent = node.parent if node is not None and node.type == "import" else None
        if parent is not None and parent.type in _IMPORT_TYPES and parent.start_byte not in seen:
            seen.add(parent.start_byte)
            found["import"].append(parent)
    for keyword in (b"print", b"exec"):
        for pos in _word_positions(source, keyword):
            after = source[pos + len(keyword) : pos + len(keyword) + 2]
            if len(after) < 2 or after[:1] not in b" \t" or after[1:] in b"(=.,)]}":
                continue
            node = root.descendant_for_byte_range(pos, pos + 1)
            parent = node.parent if node is not None else None
            if parent is not None and parent.type in ("print_statement", "exec_statement"):
                found["py2"].append(parent)
    found["fstrings"] = _fstrings(source, root)
    return found


def _word_positions(source: bytes, word: bytes) -> Iterator[int]:
    """Where a keyword occurs as a whole word (``bytes.find`` is much faster than a regex scan)."""
    pos = source.find(word)
    size = len(word)
    while pos >= 0:
        before = source[pos - 1 : pos] if pos else b" "
        after = source[pos + size : pos + size + 1]
        if not (before.isalnum() or before in b"_.") and not (after.isalnum() or after == b"_"):
            yield pos
        pos = source.find(word, pos + size)


def _fstrings(source: bytes, root) -> list:
    """The f-string literals of a file, found from their prefix and confirmed in the tree."""
    out = []
    lowered = source.lower()  # one copy, then four scans instead of twelve
    for mark in _FSTRING_MARKS:
        pos = lowered.find(mark)
        while pos >= 0:
            node = root.descendant_for_byte_range(pos, pos + 1)
            if node is not None and node.type == "string_start" and node.parent is not None:
                out.append(node.parent)
            pos = lowered.find(mark, pos + 1)
    return out


def _outermost(nodes) -> tuple[list[int], list[int]]:
    """Sorted start and end bytes of the outermost of some nodes (nested ones dropped)."""
    starts: list[int] = []
    ends: list[int] = []
    for start, end in sorted((n.start_byte, n.end_byte) for n in nodes):
        if ends and start < ends[-1]:
            continue
        starts.append(start)
        ends.append(end)
    return starts, ends


def _inside(starts: list[int], ends: list[int], pos: int) -> bool:
    i = bisect.bisect_right(starts, pos) - 1
    return i >= 0 and pos < ends[i]


def _paren_at(root, pos: int):
    """The ``(`` leaf starting at byte ``pos``, or None (a paren in a string or comment is no leaf)."""
    node = root.descendant_for_byte_range(pos, pos + 1)
    if node is None or node.type != "(" or node.start_byte != pos or node.is_missing:
        return None
    return node


@dataclass
class _Bindings:
    """What a file's imports bind: local name -> dotted target, and names brought by ``import *``."""

    names: dict[str, str]
    wildcard: dict[str, str]

    def target(self, head: str) -> str | None:
        return self.names.get(head) or self.wildcard.get(head)


def _bindings(source: bytes, api: ApiIndex, captures: dict) -> _Bindings:
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
    return _Bindings(names, wildcard)


def scan_calls(
    source: bytes, tree, api: ApiIndex, captures: dict, *, bare: bool = True
) -> tuple[Counter[str], Counter[str]]:
    """Bare-name counts (the study's rule; error-free trees only) and resolved calls, in one pass.

    A regular expression proposes every dotted chain followed by optional whitespace and ``(``
    (whitespace is no leaf; a comment or a line continuation in between is one, and fails the rule);
    only chains whose last name is an API name, or whose head an import binds, are looked at further.
    The tree then confirms what the text suggests: the ``(`` is a leaf (not text in a string or a
    comment), the name is the identifier leaf just before it, it is not inside an f-string and not
    after ``def`` (bare rule), and the chain is the function of a call (resolved calls, confirmed only
    for chains that name an API function).
    """
    bare_bytes: Counter[bytes] = Counter()
    calls_out: Counter[str] = Counter()
    bindings = _bindings(source, api, captures)
    resolve = bool(bindings.names or bindings.wildcard)
    if not bare and not resolve:
        return Counter(), calls_out
    names = api.names
    root = tree.root_node
    # A "(" leaf inside an f-string literal is in an interpolation: code_tokenize never looks there.
    starts, ends = _outermost(captures.get("fstrings", ()))
    heads = {k.encode(): v for k, v in (*bindings.wildcard.items(), *bindings.names.items())}
    at = root.descendant_for_byte_range
    size = len(source)
    for match in _CALL_REVERSED.finditer(source[::-1]):
        word_reversed, head_reversed = match.group(1, 2)
        word = word_reversed[::-1]
        end = size - match.start(1)  # where the last name ends in the source
        if bare and word in names:
            # The leaf before the "(" is the one holding the word's last byte (whitespace is no leaf),
            # and a "(" right after an identifier token (only whitespace between) is a "(" token.
            prev = at(end - 1, end)
            start = end - len(word)
            if (
                prev.type == "identifier"
                and prev.end_byte == end
                and prev.start_byte == start
                and not (starts and _inside(starts, ends, end))
            ):
                # Only a function's name follows "def"; look in the tree when the text suggests one
                # (the name follows whitespace or a line continuation that may follow a "def").
                before = None
                if not start or source[start - 1] in _SPACE_BEFORE_NAME:
                    tail = source[max(0, start - 24) : start].rstrip()
                    if not tail or tail.endswith((b"def", b"\\")):
                        before = _prev_leaf(prev)
                if before is None or source[before.start_byte : before.end_byte] != b"def":
                    bare_bytes[word] += 1
        if resolve:
            head = word if head_reversed is None else head_reversed[::-1]
            target = heads.get(head)
            if target is None:
                continue
            chain_start = size - match.end()
            if chain_start and source[chain_start - 1] == 46:  # "." : the chain continues a call's result
                continue
            if head_reversed is None:
                dotted = target
            else:
                rest = source[chain_start + len(head) : end]
                dotted = target + rest.replace(b" ", b"").replace(b"\t", b"").decode()
            qualified = api.canonical(dotted)
            if qualified is None:
                continue
            paren = _paren_at(root, size - 1 - match.start())
            call = paren.parent.parent if paren is not None and paren.parent is not None else None
            if call is None or call.type != "call":
                continue
            function = call.child_by_field_name("function")
            if function is not None and function.start_byte == chain_start and function.end_byte == end:
                calls_out[qualified] += 1
    return Counter({word.decode(): n for word, n in bare_bytes.items()}), calls_out


def bare_counts_fast(source: bytes, tree, names: frozenset[bytes]) -> Counter[str]:
    """The study's bare-name count on an error-free tree (see ``scan_calls``)."""
    api = ApiIndex(names, {}, {})
    return scan_calls(source, tree, api, find_nodes(source, tree))[0]


def leaves(tree) -> Iterator[tuple[str, int, int]]:
    """(type, start byte, end byte) of every leaf in code_tokenize's order: the reference token stream."""
    cursor = tree.walk()
    while True:
        node = cursor.node
        if node.type != "string" and cursor.goto_first_child():
            continue
        yield node.type, node.start_byte, node.end_byte
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return


def bare_counts_walk(source: bytes, tree, names: frozenset[bytes]) -> Counter[str]:
    """The study's bare-name count over the full leaf stream (used where the tree has errors)."""
    out: Counter[str] = Counter()
    prev_text = b""
    pending: bytes | None = None  # an API identifier waiting for its next leaf
    for kind, start, end in leaves(tree):
        text = source[start:end]
        if pending is not None and text == b"(":
            out[pending.decode()] += 1
        pending = None
        if kind == "identifier" and text in names and prev_text != b"def":
            pending = text
        prev_text = text
    return out


def study_bare_counts(source: bytes, names: Iterable[str], *, faithful_lines: bool = False) -> Counter[str]:
    """The study's count through code_tokenize's own token stream (the reference for tests, benchmarks).

    The tree comes from our parser (``code_tokenize.tokenize`` would download a grammar) and is fed to
    ``code_tokenize.tokenizer.tokenize_tree`` with the tokens' text taken from the source lines.
    code_tokenize slices ``str`` lines with tree-sitter's byte columns, so on a line with non-ASCII
    text before a token its text is wrong; by default the lines are given one character per byte
    (latin-1) to undo that. ``faithful_lines=True`` passes ``str.splitlines()`` as the study did, bug
    included. An empty file has no tokens (code_tokenize itself raises on one).
    """
    from code_tokenize.config import load_from_lang_config
    from code_tokenize.tokenizer import tokenize_tree

    out: Counter[str] = Counter()
    if not source.strip():
        return out
    names = set(names)
    tree = parser().parse(source)
    if faithful_lines:
        lines = source.decode("utf-8").splitlines()
    else:
        lines = [line.decode("latin-1") for line in source.split(b"\n")]
    config = load_from_lang_config("python", syntax_error="ignore")
    tokens = tokenize_tree(config, tree.root_node, lines)
    for i, token in enumerate(tokens):
        if (
            token.type == "identifier"
            and token.text in names
            and i != len(tokens) - 1
            and tokens[i + 1].text == "("
            and (i == 0 or tokens[i - 1].text != "def")
        ):
            out[token.text] += 1
    return out


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
        return  # binds nothing a framework call goes through (what ``_bindings`` keeps)
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
    """The API qualified name a dotted path denotes, with the TF1 and keras fallbacks."""
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


def decode_source(data: bytes | str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes | None, str | None]:
    """The file's UTF-8 bytes, or why it is skipped: binary, huge, encoding, empty is not a skip."""
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates in a decoded string
            return None, "encoding"
    if len(data) > max_bytes:
        return None, "huge"
    if b"\x00" in data:
        return None, "binary"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "encoding"
    return data, None


@dataclass(frozen=True)
class CountConfig:
    """Everything a worker needs, sent once per process."""

    api: ApiIndex
    frameworks: tuple[str, ...]
    max_bytes: int = DEFAULT_MAX_BYTES
    syntax_errors: str = "count"  # count | skip (the study dropped files with syntax errors)


def count_source(source: bytes, api: ApiIndex) -> tuple[Counter[str], Counter[str], tuple[str, ...]]:
    """Bare and resolved counts of one file's bytes, and its flags (syntax_error, python2)."""
    tree = parser().parse(source)
    captures = find_nodes(source, tree)
    flags = []
    broken = tree.root_node.has_error
    bare, calls = scan_calls(source, tree, api, captures, bare=not broken)
    if broken:
        flags.append("syntax_error")
        bare = bare_counts_walk(source, tree, api.names)
    if captures.get("py2"):
        flags.append("python2")
    return bare, calls, tuple(flags)


def count_record(record: Record, config: CountConfig) -> FileResult:
    """Count one corpus record; never raises (a failure is a counted skip reason)."""
    result = FileResult(record.key)
    try:
        if record.text is not None:
            data: bytes | str = record.text
        elif record.path is not None:
            with open(record.path, "rb") as handle:
                data = handle.read(config.max_bytes + 1)
        else:
            result.skipped = "empty_record"
            return result
    except OSError:
        result.skipped = "unreadable"
        return result
    source, reason = decode_source(data, config.max_bytes)
    if source is None:
        result.skipped = reason
        return result
    result.size = len(source)
    text = record.text if record.text is not None else source.decode("utf-8")
    frameworks = record.frameworks
    if frameworks is None:
        frameworks = tuple(fw for fw in config.frameworks if contains_framework(fw, text))
    result.frameworks = frameworks
    if not frameworks:
        result.skipped = "no_framework_import"
        return result
    try:
        bare, calls, flags = count_source(source, config.api)
    except Exception as exc:  # a parser or recursion failure on a pathological file
        log.debug("failed on %s: %r", record.key, exc)
        result.skipped = "parse_failure"
        return result
    result.flags = flags
    if "syntax_error" in flags and config.syntax_errors == "skip":
        result.skipped = "syntax_error"
        return result
    result.bare, result.calls = bare, calls
    return result


# ----------------------------------------------------------------------------------------------------
# A corpus


_WORKER_CONFIG: CountConfig | None = None


def _init_worker(config: CountConfig) -> None:
    global _WORKER_CONFIG
    _WORKER_CONFIG = config
    parser()


def _work(record: Record) -> FileResult:
    assert _WORKER_CONFIG is not None
    return count_record(record, _WORKER_CONFIG)


def _bounded(items: Iterable, slots: threading.Semaphore) -> Iterator:
    for item in items:
        slots.acquire()
        yield item


def _pool(num_proc: int, config: CountConfig):
    import multiprocessing

    # Forking a process that has loaded TensorFlow (or another threaded runtime) can crash the child.
    threaded = any(name in sys.modules for name in ("tensorflow", "torch", "jax"))
    context = multiprocessing.get_context("fork" if os.name == "posix" and not threaded else "spawn")
    return context.Pool(num_proc, initializer=_init_worker, initargs=(config,))


def count_files(
    records: Iterable[Record], config: CountConfig, *, num_proc: int = 1, progress: bool = False
) -> Iterator[FileResult]:
    """Count records one by one in ``num_proc`` processes; a few hundred files at most in flight.

    For per-file results (tests, inspection); a corpus is counted by ``count_corpus``, which sends
    the main process partial sums instead of one result per file.
    """
    from tqdm import tqdm

    bar = tqdm(desc="counting", unit="file", disable=not progress, mininterval=1.0)
    if num_proc <= 1:
        _init_worker(config)
        for record in records:
            result = _work(record)
            bar.update()
            yield result
        bar.close()
        return
    slots = threading.Semaphore(num_proc * 64)
    with _pool(num_proc, config) as pool:
        for result in pool.imap_unordered(_work, _bounded(records, slots), chunksize=8):
            slots.release()
            bar.update()
            yield result
    bar.close()


@dataclass
class CorpusStats:
    """Files counted, skipped (by reason) and flagged; bytes read."""

    files: Counter[str] = field(default_factory=Counter)  # per framework
    skipped: Counter[str] = field(default_factory=Counter)
    flags: Counter[str] = field(default_factory=Counter)
    bytes: int = 0

    def summary(self) -> str:
        return (
            f"files per framework {dict(self.files)}, skipped {dict(self.skipped)},"
            f" flagged {dict(self.flags)}, {self.bytes / 1e6:.1f} MB"
        )

    def merge(self, other: CorpusStats) -> None:
        self.files.update(other.files)
        self.skipped.update(other.skipped)
        self.flags.update(other.flags)
        self.bytes += other.bytes


@dataclass
class CorpusCounts:
    """The sums over some files, per framework: bare-name counts, resolved calls, files per call.

    A worker folds a chunk of files into one of these and the main process merges them: a few
    hundred names per chunk cross the process boundary instead of a result per file, so the main
    process stays nearly idle and the workers have the cores.
    """

    bare: dict[str, Counter[str]] = field(default_factory=dict)
    calls: dict[str, Counter[str]] = field(default_factory=dict)
    files: dict[str, Counter[str]] = field(default_factory=dict)
    stats: CorpusStats = field(default_factory=CorpusStats)
    counted: int = 0  # records seen, skipped ones included

    def add(self, result: FileResult, config: CountConfig) -> None:
        """Fold one file in: its calls count for the counted frameworks it imports, by their owner."""
        self.counted += 1
        self.stats.flags.update(result.flags)
        if result.skipped:
            self.stats.skipped[result.skipped] += 1
            return
        self.stats.bytes += result.size
        qualified = config.api.qualified
        for fw in result.frameworks:
            if fw not in config.frameworks:
                continue
            self.stats.files[fw] += 1
            self.bare.setdefault(fw, Counter()).update(result.bare)
            calls, files = self.calls.setdefault(fw, Counter()), self.files.setdefault(fw, Counter())
            for name, n in result.calls.items():
                if qualified.get(name) == fw:
                    calls[name] += n
                    files[name] += 1

    def merge(self, other: CorpusCounts) -> None:
        self.counted += other.counted
        self.stats.merge(other.stats)
        for mine, theirs in ((self.bare, other.bare), (self.calls, other.calls), (self.files, other.files)):
            for fw, counter in theirs.items():
                mine.setdefault(fw, Counter()).update(counter)


def _chunks(records: Iterable[Record], size: int) -> Iterator[list[Record]]:
    chunk: list[Record] = []
    for record in records:
        chunk.append(record)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _work_chunk(records: list[Record]) -> CorpusCounts:
    assert _WORKER_CONFIG is not None
    counts = CorpusCounts()
    for record in records:
        counts.add(count_record(record, _WORKER_CONFIG), _WORKER_CONFIG)
    return counts


def count_corpus(
    records: Iterable[Record],
    config: CountConfig,
    *,
    num_proc: int = 1,
    progress: bool = False,
    chunk_files: int = 16,
) -> CorpusCounts:
    """Count a corpus streamed from ``records`` in ``num_proc`` processes, memory bounded.

    Records are sent in chunks of ``chunk_files``; at most ``4 * num_proc`` chunks are in flight (read
    from the stream but not yet counted), so the corpus is never held whole, and each worker sends
    back one ``CorpusCounts`` per chunk.
    """
    from tqdm import tqdm

    total = CorpusCounts()
    if num_proc <= 1:
        for result in count_files(records, config, progress=progress):
            total.add(result, config)
        return total
    bar = tqdm(desc="counting", unit="file", disable=not progress, mininterval=1.0)
    slots = threading.Semaphore(num_proc * 4)
    with _pool(num_proc, config) as pool:
        for partial in pool.imap_unordered(_work_chunk, _bounded(_chunks(records, chunk_files), slots)):
            slots.release()
            total.merge(partial)
            bar.update(partial.counted)
    bar.close()
    return total


def count_frequencies(
    source: Iterable[Record],
    frameworks: Sequence[str],
    api_frame: pd.DataFrame,
    *,
    corpus: str = "corpus",
    kinds: Sequence[str] | None = None,
    num_proc: int = 1,
    max_bytes: int = DEFAULT_MAX_BYTES,
    syntax_errors: str = "count",
    progress: bool = False,
    stats: CorpusStats | None = None,
) -> pd.DataFrame:
    """The frequencies table of a corpus: one row per API name with a resolved or bare call.

    A file counts for a framework when it imports it (the study's regex) or when its source selected
    it for that framework. ``bare_calls`` of a qualified name is the study's count of its bare name in
    that framework's files (every path of one name shows the same figure); ``calls`` and ``files`` are
    the resolved calls and the files that make them; ``resolution`` is ``resolved`` where calls > 0,
    else ``bare_only``.
    """
    if syntax_errors not in ("count", "skip"):
        raise ValueError(f"syntax_errors must be count or skip, not {syntax_errors!r}")
    frameworks = tuple(frameworks)
    api_frame = api_frame[api_frame["framework"].isin(frameworks)]
    index = ApiIndex.from_frame(api_frame, kinds)
    config = CountConfig(index, frameworks, max_bytes, syntax_errors)
    counts = count_corpus(source, config, num_proc=num_proc, progress=progress)
    if stats is not None:
        stats.merge(counts.stats)
    stats = counts.stats
    tables = (counts.bare, counts.calls, counts.files)
    bare, calls, files = ({fw: table.get(fw, Counter()) for fw in frameworks} for table in tables)
    log.info("counted %s: %s", corpus, stats.summary())

    rows = []
    for fw in frameworks:
        sub = api_frame[api_frame["framework"] == fw]
        if kinds is not None:
            bare_names = set(sub.loc[sub["kind"].isin(list(kinds)), "name"].to_numpy(dtype=object).tolist())
        else:
            bare_names = set(sub["name"].to_numpy(dtype=object).tolist())
        pairs = zip(
            sub["qualified_name"].to_numpy(dtype=object).tolist(), sub["name"].to_numpy(dtype=object).tolist()
        )
        for qualified, name in pairs:
            b = bare[fw].get(name, 0) if name in bare_names else 0
            c = calls[fw].get(qualified, 0)
            if b or c:
                rows.append(
                    (
                        fw,
                        corpus,
                        qualified,
                        c,
                        b,
                        files[fw].get(qualified, 0),
                        "resolved" if c else "bare_only",
                    )
                )
    frame = pd.DataFrame(rows, columns=FREQUENCY_COLUMNS)
    frame = frame.drop_duplicates(["framework", "qualified_name"])
    frame = frame.sort_values(["framework", "qualified_name"], kind="stable").reset_index(drop=True)
    return frame.astype({"calls": "int64", "bare_calls": "int64", "files": "int64"})


def run_frequencies(params: dict, api_path: Path, out: Path) -> None:
    """Pipeline step `frequencies`: count the corpus that ``params`` selects and write the table.

    Keys read from the ``frequencies`` section of params.yaml (all optional):
    - ``source``: ``installed`` (default; offline), ``codeparrot`` or ``path``;
    - ``packages``: installed packages to read (source installed; default keras, optax, chex, einops,
      torchmetrics, opt_einsum);
    - ``dataset`` (default ``codeparrot/codeparrot-clean``), ``data_files`` (a local Parquet file in its
      place), ``split`` (train), ``seed`` (42), ``files_per_framework`` (3001; null: all),
      ``streaming`` (false: the study's exact selection, which downloads the dataset once; true: a
      shuffle buffer, a different selection), ``cache_dir`` (datasets cache) — source codeparrot;
    - ``path``: a folder of ``.py`` files or a Parquet file (repo_name, path, content) — source path
      (``files_per_framework`` applies to codeparrot only: the other sources are counted whole);
    - ``frameworks``: which frameworks to count (default: every framework in the api table);
    - ``kinds``: API kinds whose bare names are counted (default: all);
    - ``num_proc``: worker processes (default: all cores);
    - ``max_bytes``: larger files are skipped as huge (default 1 MB);
    - ``syntax_errors``: ``count`` (default) or ``skip`` (the study's run dropped such files).
    """
    from portability_data.tables.tableio import read_table, write_table

    api = read_table("api", Path(api_path))
    frameworks = params.get("frameworks") or sorted(api["framework"].unique())
    num_proc = int(params.get("num_proc") or os.cpu_count() or 1)
    stats = CorpusStats()
    frame = count_frequencies(
        records_for(params, frameworks),
        frameworks,
        api,
        corpus=corpus_id(params),
        kinds=params.get("kinds"),
        num_proc=num_proc,
        max_bytes=int(params.get("max_bytes", DEFAULT_MAX_BYTES)),
        syntax_errors=params.get("syntax_errors", "count"),
        progress=True,
        stats=stats,
    )
    out = Path(out)
    if out.suffix != ".parquet":
        out.mkdir(parents=True, exist_ok=True)
        out = out / "frequencies.parquet"
    write_table("frequencies", frame, out)
    log.info("wrote %d frequency rows to %s (%s)", len(frame), out, stats.summary())
