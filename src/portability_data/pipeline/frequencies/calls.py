"""One file's counts from one tree-sitter parse (frequencies.py's docstring has the rules): the
study's bare-name rule (`scan_calls` on an error-free tree, `bare_counts_walk` over the leaves where
the tree has errors, `study_bare_counts` through code_tokenize itself as the reference) and calls
resolved through the file's imports, in one pass (`count_source`).

The parser is built once per process (`parser`); the counting driver (counting.py) calls
`count_source` in its worker processes.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Iterator

from portability_data.pipeline.frequencies.index import ApiIndex, file_bindings

_PARSER = None


def parser():
    """The process's tree-sitter Python parser (built once; grammar from the tree-sitter-python wheel)."""
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_python

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    return _PARSER


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


def scan_calls(
    source: bytes,
    tree,
    api: ApiIndex,
    captures: dict,
    *,
    bare: bool = True,
    sites: list[tuple[str, tuple[int, int]]] | None = None,
) -> tuple[Counter[str], Counter[str]]:
    """Bare-name counts (the study's rule; error-free trees only) and resolved calls, in one pass.

    A regular expression proposes every dotted chain followed by optional whitespace and ``(``
    (whitespace is no leaf; a comment or a line continuation in between is one, and fails the rule);
    only chains whose last name is an API name, or whose head an import binds, are looked at further.
    The tree then confirms what the text suggests: the ``(`` is a leaf (not text in a string or a
    comment), the name is the identifier leaf just before it, it is not inside an f-string and not
    after ``def`` (bare rule), and the chain is the function of a call (resolved calls, confirmed only
    for chains that name an API function).

    ``sites``, when given, receives (qualified name, (row, byte column)) of every resolved call's
    function expression: `portability scan` (pipeline/scan/findings.py) reports the calls this counter counts.
    """
    bare_bytes: Counter[bytes] = Counter()
    calls_out: Counter[str] = Counter()
    bindings = file_bindings(source, api, captures)
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
                if sites is not None:
                    sites.append((qualified, function.start_point))
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
