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

Where the parts live: index.py (the API names and what imports bind), calls.py (one
file's counts from its tree), counting.py (records counted in worker processes); this
module builds and writes the table (the `frequencies` stage).
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from portability_data.pipeline.corpus import DEFAULT_SOURCE, Record, corpus_id, records_for
from portability_data.pipeline.frequencies.counting import (
    DEFAULT_MAX_BYTES,
    CorpusStats,
    CountConfig,
    count_corpus,
)
from portability_data.pipeline.frequencies.index import ApiIndex

log = logging.getLogger(__name__)

ENGINES = ("local", "dask")  # params.yaml frequencies.engine: this process pool, or a Dask cluster
FREQUENCY_COLUMNS = [
    "framework",
    "corpus",
    "qualified_name",
    "calls",
    "bare_calls",
    "files",
    "resolution",
    "canonical_name",
]


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
    engine: str = "local",
    dask: dict | None = None,
) -> pd.DataFrame:
    """The frequencies table of a corpus: one row per API name with a resolved or bare call.

    A file counts for a framework when it imports it (the study's regex) or when its source selected
    it for that framework. ``bare_calls`` of a qualified name is the study's count of its bare name in
    that framework's files (every path of one name shows the same figure); ``calls`` and ``files`` are
    the resolved calls and the files that make them; ``resolution`` is ``resolved`` where calls > 0,
    else ``bare_only``; ``canonical_name`` is the function the name refers to (the api table's, None
    where the api table predates the column): the counts stay per name written, and readers that
    join on the function sum them per canonical name (api_aliases.py).
    """
    if syntax_errors not in ("count", "skip"):
        raise ValueError(f"syntax_errors must be count or skip, not {syntax_errors!r}")
    if engine not in ENGINES:
        raise ValueError(f"frequencies.engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    frameworks = tuple(frameworks)
    api_frame = api_frame[api_frame["framework"].isin(frameworks)]
    index = ApiIndex.from_frame(api_frame, kinds)
    config = CountConfig(index, frameworks, max_bytes, syntax_errors)
    if engine == "dask":  # the same counter (count_chunk) on a Dask cluster: dask_engine.py
        from portability_data.pipeline.frequencies.dask_engine import count_corpus_dask

        counts = count_corpus_dask(source, config, num_proc=num_proc, progress=progress, options=dask)
    else:
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
        canonical = (
            sub["canonical_name"].to_numpy(dtype=object).tolist()
            if "canonical_name" in sub
            else [None] * len(sub)
        )
        pairs = zip(
            sub["qualified_name"].to_numpy(dtype=object).tolist(),
            sub["name"].to_numpy(dtype=object).tolist(),
            canonical,
        )
        for qualified, name, canonical_name in pairs:
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
                        None if pd.isna(canonical_name) else str(canonical_name),
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
    - ``engine``: ``local`` (default: a process pool on this machine) or ``dask`` (a Dask cluster,
      ``dask.scheduler_address`` / ``dask.partition_files``: dask_engine.py);
    - ``max_bytes``: larger files are skipped as huge (default 1 MB);
    - ``syntax_errors``: ``count`` (default) or ``skip`` (the study's run dropped such files);
    - ``compare_with``: other sources counted too, into the same table under their own ``corpus``
      (e.g. ``[installed]``: the former default, so the report shows how the ranking moved); the
      sample reads the rows of ``source`` only.
    Source ``pinned`` (``manifest``, ``cache_dir``, ``offline``): see corpus_pinned.py.
    """
    from portability_data.tables.tableio import read_table, write_table

    engine = params.get("engine") or "local"
    if engine not in ENGINES:  # before any table or corpus is read
        raise ValueError(f"frequencies.engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    api = read_table("api", Path(api_path))
    frameworks = params.get("frameworks") or sorted(api["framework"].unique())
    num_proc = int(params.get("num_proc") or os.cpu_count() or 1)
    frames = []
    sources = [params.get("source", DEFAULT_SOURCE), *(params.get("compare_with") or [])]
    for source in dict.fromkeys(sources):  # in order, once each
        source_params = {**params, "source": source}
        stats = CorpusStats()
        frames.append(
            count_frequencies(
                records_for(source_params, frameworks),
                frameworks,
                api,
                corpus=corpus_id(source_params),
                kinds=params.get("kinds"),
                num_proc=num_proc,
                max_bytes=int(params.get("max_bytes", DEFAULT_MAX_BYTES)),
                syntax_errors=params.get("syntax_errors", "count"),
                progress=True,
                stats=stats,
                engine=engine,
                dask=params.get("dask"),
            )
        )
        log.info("counted corpus %s: %s", corpus_id(source_params), stats.summary())
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    out = Path(out)
    if out.suffix != ".parquet":
        out.mkdir(parents=True, exist_ok=True)
        out = out / "frequencies.parquet"
    write_table("frequencies", frame, out)
    log.info("wrote %d frequency rows to %s", len(frame), out)
