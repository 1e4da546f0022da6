"""Usage counts: the study's bare-name rule reproduced exactly, import resolution, bad input, sources."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from portability_data.pipeline import corpus as corpus_mod
from portability_data.pipeline.corpus import Record
from portability_data.pipeline.frequencies import build as freq
from portability_data.pipeline.frequencies.calls import (
    bare_counts_walk,
    count_source,
    parser,
    study_bare_counts,
)
from portability_data.pipeline.frequencies.counting import CorpusStats, CountConfig, count_files
from portability_data.pipeline.frequencies.index import ApiIndex

# Corpus fixtures are stored as .py.txt: some are broken or Python 2 on purpose, and linters read .py.
FIXTURES = Path(__file__).parent / "fixtures" / "corpus"


def fixture(name: str) -> bytes:
    return (FIXTURES / f"{name}.txt").read_bytes()


def fixture_dir(tmp_path: Path) -> Path:
    """The fixture corpus as a folder of .py files, as a user's corpus would be."""
    folder = tmp_path / "corpus"
    folder.mkdir()
    for path in FIXTURES.glob("*.py.txt"):
        (folder / path.name.removesuffix(".txt")).write_bytes(path.read_bytes())
    return folder


# A small api table: enough names to exercise every rule, fast to index.
_API = [
    ("torch", "torch", "zeros", "function"),
    ("torch", "torch", "ones", "function"),
    ("torch", "torch", "randn", "function"),
    ("torch", "torch", "sum", "function"),
    ("torch", "torch.nn", "Linear", "class"),
    ("torch", "torch.nn", "Module", "class"),
    ("torch", "torch.nn", "Conv2d", "class"),
    ("torch", "torch.nn.functional", "relu", "function"),
    ("torch", "torch.nn.functional", "softmax", "function"),
    ("torch", "torch.optim", "SGD", "class"),
    ("torch", "torch.Tensor", "reshape", "method"),
    ("jax", "jax", "jit", "function"),
    ("jax", "jax", "grad", "function"),
    ("jax", "jax.numpy", "sum", "function"),
    ("jax", "jax.numpy", "dot", "function"),
    ("jax", "jax.numpy", "zeros", "function"),
    ("tensorflow", "tensorflow", "constant", "function"),
    ("tensorflow", "tensorflow", "reduce_sum", "function"),
    ("tensorflow", "tensorflow.compat.v1", "Session", "class"),
    ("tensorflow", "tensorflow.compat.v2", "constant", "function"),
    ("tensorflow", "tensorflow.compat.v2", "v2_only_name", "function"),
    ("tensorflow", "tensorflow.compat.v1", "placeholder", "function"),
    ("tensorflow", "tensorflow.keras.layers", "Dense", "class"),
]


@pytest.fixture(scope="module")
def api() -> pd.DataFrame:
    return pd.DataFrame(
        [(fw, "1.0", f"{mod}.{name}", mod, name, kind) for fw, mod, name, kind in _API],
        columns=["framework", "framework_version", "qualified_name", "module", "name", "kind"],
    )


@pytest.fixture(scope="module")
def index(api: pd.DataFrame) -> ApiIndex:
    return ApiIndex.from_frame(api)


def fixture_sources() -> list[Path]:
    return sorted(FIXTURES.glob("*.py.txt"))


def names_of(index: ApiIndex) -> set[str]:
    return {n.decode() for n in index.names}


@pytest.mark.parametrize("path", fixture_sources(), ids=lambda p: p.name)
def test_bare_calls_equal_the_study_token_stream(path: Path, index: ApiIndex) -> None:
    """bare_calls is the study's rule over code_tokenize's tokens (its byte-offset bug undone)."""
    source = path.read_bytes()
    bare, _, _ = count_source(source, index)
    assert bare == study_bare_counts(source, names_of(index))


def test_the_rule_in_detail(index: ApiIndex) -> None:
    bare, calls, flags = count_source(fixture("torch_aliases.py"), index)
    assert flags == ()
    # def zeros( is not a call; zeros(2) and torch.zeros(n) and torch.zeros  (3) are.
    assert bare["zeros"] == 3
    # torch.ones \ (3) has a line-continuation token between: not counted; the comment line neither.
    assert bare["ones"] == 0
    # class Net(nn.Module) does not name an API function; nn.Linear( does; the f-string call does not.
    assert bare["Linear"] == 1 and bare["sum"] == 0
    assert calls["torch.nn.Linear"] == 1
    assert calls["torch.nn.functional.relu"] == 1
    assert calls["torch.nn.functional.softmax"] == 1
    assert calls["torch.optim.SGD"] == 1
    assert calls["torch.zeros"] == 2  # zeros(2) is the local function: bare only
    assert calls["torch.sum"] == 1  # resolved calls count inside f-strings
    assert calls["torch.randn"] == 1


def test_class_definitions_count_as_the_study_counted_them(index: ApiIndex) -> None:
    source = b"import torch\nclass Linear(torch.nn.Module):\n    pass\n"
    bare, calls, _ = count_source(source, index)
    assert bare["Linear"] == 1  # 'class Linear(' is an identifier followed by '(' for the study
    assert calls == Counter()
    assert bare == study_bare_counts(source, names_of(index))


def test_resolution_through_imports(index: ApiIndex) -> None:
    bare, calls, _ = count_source(fixture("jax_tf_mixed.py"), index)
    assert calls["jax.numpy.sum"] == 1 and calls["jax.numpy.dot"] == 1
    assert calls["jax.jit"] == 1 and calls["jax.grad"] == 1
    assert calls["tensorflow.keras.layers.Dense"] == 1
    assert calls["tensorflow.constant"] == 1
    assert calls["tensorflow.compat.v1.Session"] == 1  # TF1 name found in compat.v1
    assert calls["torch.nn.Conv2d"] == 1  # from torch.nn import *
    assert calls["jax.numpy.zeros"] == 1  # jax.numpy.zeros((2,)) resolves; .reshape on its result does not
    assert "torch.Tensor.reshape" not in calls
    assert bare["reshape"] == 1


def test_tf2_compat_v2_names_fold_onto_the_top_level_api(index: ApiIndex) -> None:
    """`import tensorflow.compat.v2 as tf` (tensorflow-probability's style) calls TF2's own API:
    one function counted once, under its top-level name, unless only compat.v2 has it."""
    source = b"import tensorflow.compat.v2 as tf\nx = tf.constant(1)\ny = tf.v2_only_name(x)\n"
    _, calls, _ = count_source(source, index)
    assert calls == Counter({"tensorflow.constant": 1, "tensorflow.compat.v2.v2_only_name": 1})


def test_resolution_of_spaced_chains_call_results_and_strings(index: ApiIndex) -> None:
    source = (
        b"import torch\nimport torch.nn as nn\n"
        b"m = nn . Linear (3)\n"  # spaces around the dots and before the paren
        b"y = torch.zeros(2).sum()\n"  # .sum continues a call's result: no torch.sum
        b"z = (torch).ones(1)\n"  # not a dotted chain from the import
        b"s = 'torch.randn(1)'  # torch.randn(2)\n"  # text in a string and a comment
        b"w = torch.\\\n    randn(3)\n"  # a chain across lines: not resolved (a known gap)
    )
    bare, calls, _ = count_source(source, index)
    assert calls == Counter({"torch.nn.Linear": 1, "torch.zeros": 1})
    assert bare == study_bare_counts(source, names_of(index))
    assert bare["sum"] == 1 and bare["randn"] == 1 and bare["ones"] == 1


def test_python2_and_broken_files_are_counted_and_flagged(index: ApiIndex) -> None:
    bare, calls, flags = count_source(fixture("python2_file.py"), index)
    assert "python2" in flags
    assert bare["placeholder"] == 1 and calls["tensorflow.compat.v1.placeholder"] == 1
    bare, calls, flags = count_source(fixture("broken_file.py"), index)
    assert "syntax_error" in flags
    assert bare["zeros"] + bare["ones"] >= 1


def test_non_ascii_lines_show_the_study_offset_bug(index: ApiIndex) -> None:
    source = fixture("non_ascii.py")
    ours, _, _ = count_source(source, index)
    assert ours["zeros"] == 1 and ours["ones"] == 1
    buggy = study_bare_counts(source, names_of(index), faithful_lines=True)
    assert buggy["zeros"] == 0  # the token text is sliced at byte columns from a str line
    assert study_bare_counts(source, names_of(index)) == ours


def test_empty_file(index: ApiIndex) -> None:
    assert count_source(b"", index) == (Counter(), Counter(), ())
    assert study_bare_counts(b"", names_of(index)) == Counter()


_atoms = st.sampled_from(
    [
        "zeros",
        "ones",
        "sum",
        "torch",
        "nn",
        "x",
        "def",
        "class",
        "(",
        ")",
        ".",
        ",",
        ":",
        " ",
        "  ",
        "\n",
        "\n    ",
        "# c\n",
        "\\\n",
        '"s"',
        'f"{zeros(1)}"',
        "'é'",
        "=",
        "import torch\n",
        "from torch import nn as zeros\n",
        "print ",
        "[",
        "]",
        "lambda ",
        "@",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_atoms, max_size=40))
def test_bare_calls_equal_the_study_on_random_token_soup(atoms: list[str]) -> None:
    """Valid or not, any text gets the study's count: fast path, leaf walk and code_tokenize agree."""
    index = ApiIndex(frozenset({b"zeros", b"ones", b"sum", b"nn"}), {}, {})
    source = "".join(atoms).encode()
    bare, _, _ = count_source(source, index)
    assert bare == study_bare_counts(source, {"zeros", "ones", "sum", "nn"})
    tree = parser().parse(source)
    assert bare_counts_walk(source, tree, index.names) == bare


def test_bad_input_is_skipped_with_a_reason(tmp_path: Path, index: ApiIndex) -> None:
    (tmp_path / "binary.py").write_bytes(b"import torch\x00\x01\x02")
    (tmp_path / "latin1.py").write_bytes("import torch  # caf\xe9\n".encode("latin-1"))
    (tmp_path / "huge.py").write_bytes(b"import torch\n" + b"x = 1\n" * 400)
    records = [Record(p.name, path=str(p)) for p in sorted(tmp_path.iterdir())]
    records.append(Record("missing.py", path=str(tmp_path / "missing.py")))
    records.append(Record("ok.py", text="import torch\ntorch.zeros(1)\n"))
    config = CountConfig(index, ("torch",), max_bytes=1000)
    results = {r.key: r for r in count_files(records, config)}
    assert results["binary.py"].skipped == "binary"
    assert results["latin1.py"].skipped == "encoding"
    assert results["huge.py"].skipped == "huge"
    assert results["missing.py"].skipped == "unreadable"
    assert results["ok.py"].skipped is None and results["ok.py"].bare["zeros"] == 1


def test_count_frequencies_table_serial_equals_parallel(api: pd.DataFrame, tmp_path: Path) -> None:
    from portability_data.tables.tableio import write_table

    records = list(corpus_mod.path_records(fixture_dir(tmp_path)))
    stats = CorpusStats()
    frameworks = ["torch", "jax", "tensorflow"]
    serial = freq.count_frequencies(records, frameworks, api, corpus="fixtures", stats=stats)
    parallel = freq.count_frequencies(
        iter(records), ["torch", "jax", "tensorflow"], api, corpus="fixtures", num_proc=2
    )
    pd.testing.assert_frame_equal(serial, parallel)
    write_table("frequencies", serial, tmp_path / "frequencies.parquet")  # the contract holds
    row = serial.set_index(["framework", "qualified_name"])
    assert row.loc[("torch", "torch.zeros"), "bare_calls"] >= 3
    assert row.loc[("torch", "torch.nn.Linear"), "resolution"] == "resolved"
    # bare 'sum' in a torch file: counted for torch.sum; jax.numpy.sum counts only jax files.
    assert row.loc[("jax", "jax.numpy.sum"), "calls"] == 1
    assert stats.skipped["no_framework_import"] == 2  # no_framework.py and empty.py
    assert stats.flags["syntax_error"] >= 1 and stats.flags["python2"] >= 1


def test_syntax_errors_skip_mode_drops_broken_files(api: pd.DataFrame) -> None:
    records = [Record("b.py", path=str(FIXTURES / "broken_file.py.txt"))]
    counted = freq.count_frequencies(records, ["torch"], api)
    skipped = freq.count_frequencies(records, ["torch"], api, syntax_errors="skip")
    assert len(counted) > 0 and len(skipped) == 0


def test_study_filter() -> None:
    assert corpus_mod.contains_framework("torch", "from torch import nn")
    assert corpus_mod.contains_framework("jax", "import jax.numpy as jnp")
    assert not corpus_mod.contains_framework("torch", "x = 'torch'")
    tf_own = "# Copyright 2019 The TensorFlow Authors. All Rights Reserved.\nimport tensorflow as tf\n"
    assert not corpus_mod.contains_framework("tensorflow", tf_own)
    assert corpus_mod.contains_framework("torch", "# Copyright 2019 The TensorFlow Authors.\nimport torch\n")


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["from", "import", "torch", "jax", "tor", "ch", "fro", "m", " ", ".", "\n", "\r"]),
        max_size=14,
    ).map("".join),
    st.sampled_from(["torch", "jax"]),
)
def test_import_filter_matches_the_study_regex(text: str, framework: str) -> None:
    """The fast filter answers exactly what the study's regex answers, on any text."""
    expected = corpus_mod.import_regex(framework).search(text) is not None
    assert corpus_mod.imports_framework(framework, text) == expected


def _write_parquet(path: Path, n: int) -> None:
    contents = []
    for i in range(n):
        if i % 3 == 0:
            contents.append(f"import torch\nx{i} = torch.zeros({i})\n")
        elif i % 3 == 1:
            contents.append(f"import jax.numpy as jnp\ny{i} = jnp.zeros({i})\n")
        else:
            contents.append(f"import os\nz{i} = os.getcwd()\n")
    table = pa.table(
        {
            "repo_name": [f"repo{i}" for i in range(n)],
            "path": [f"f{i}.py" for i in range(n)],
            "content": contents,
        }
    )
    pq.write_table(table, path)


def test_codeparrot_selection_on_a_local_parquet(tmp_path: Path) -> None:
    """The study's selection (filter, shuffle(seed=42), first N) through datasets, offline."""
    data = tmp_path / "codeparrot.parquet"
    _write_parquet(data, 60)
    records = list(
        corpus_mod.codeparrot_records(
            ["torch", "jax"],
            data_files=str(data),
            seed=42,
            files_per_framework=5,
            cache_dir=str(tmp_path / "cache"),
        )
    )
    torch_keys = [r.key for r in records if r.frameworks == ("torch",)]
    jax_keys = [r.key for r in records if r.frameworks == ("jax",)]
    assert len(torch_keys) == 5 and len(jax_keys) == 5
    # The same order as the study's: datasets' shuffle(seed=42) of the filtered rows.
    import numpy as np

    filtered = [f"repo{i}/f{i}.py" for i in range(60) if i % 3 == 0]
    order = np.random.default_rng(42).permutation(len(filtered))
    assert torch_keys == [filtered[j] for j in order[:5]]
    again = corpus_mod.codeparrot_records(
        ["torch"], data_files=str(data), files_per_framework=5, cache_dir=str(tmp_path / "cache")
    )
    assert [r.key for r in again] == torch_keys


def test_run_frequencies_on_a_user_parquet(api: pd.DataFrame, tmp_path: Path) -> None:
    from portability_data.tables.tableio import read_table, write_table

    data = tmp_path / "mine.parquet"
    _write_parquet(data, 30)
    api_path = tmp_path / "api.parquet"
    write_table("api", api, api_path)
    out = tmp_path / "frequencies"
    freq.run_frequencies({"source": "path", "path": str(data), "num_proc": 1}, api_path, out)
    table = read_table("frequencies", out / "frequencies.parquet")
    row = table.set_index(["framework", "qualified_name"])
    assert row.loc[("torch", "torch.zeros"), "calls"] == 10
    assert row.loc[("jax", "jax.numpy.zeros"), "calls"] == 10
    assert set(table["corpus"]) == {"path:mine.parquet"}


def test_installed_corpus_leaves_out_frameworks_and_tests() -> None:
    records = list(corpus_mod.installed_records(["einops", "torch", "not_a_package_xyz"]))
    assert records, "einops is installed in the project environment"
    assert all(r.key.startswith("einops/") for r in records)
    assert not any("/tests/" in r.key or r.key.endswith("_test.py") for r in records)


def test_corpus_ids() -> None:
    assert corpus_mod.corpus_id({}) == "installed:" + ",".join(corpus_mod.DEFAULT_PACKAGES)
    expected = "codeparrot:codeparrot/codeparrot-clean:seed=42:n=3001"
    assert corpus_mod.corpus_id({"source": "codeparrot"}) == expected
    with pytest.raises(ValueError):
        corpus_mod.corpus_id({"source": "ftp"})
