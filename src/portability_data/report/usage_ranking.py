"""How the usage ranking moved between corpora: the 20 most called functions per framework in the
corpus the sample is drawn from, with each one's rank in the other corpora counted beside it
(params.yaml `frequencies.compare_with`). The ranking decides the top 20 and the deciles the sample
draws from, so a change of corpus is a change of what "used" means: the report shows it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from portability_data.readings.frames import plain_frame
from portability_data.report.inputs import FRAMEWORK_ORDER
from portability_data.report.render import Section
from portability_data.tables.tableio import read_table

TOP = 20
# Which corpus leads when several were counted: the sampled default first (pinned since
# 2026-11-24), the study's own source next, the former installed-packages default last.
SOURCE_ORDER = ["pinned", "codeparrot", "path", "installed"]


def corpus_order(corpora: list[str]) -> list[str]:
    """Corpus ids (`source:detail`) in SOURCE_ORDER, unknown sources last, then by name."""

    def key(corpus: str) -> tuple[int, str]:
        source = corpus.split(":", 1)[0]
        return (SOURCE_ORDER.index(source) if source in SOURCE_ORDER else len(SOURCE_ORDER), corpus)

    return sorted(corpora, key=key)


def ranks(frequencies: pd.DataFrame, column: str = "calls") -> pd.DataFrame:
    """Per framework and corpus: every function with a call, ranked (1 = most called; ties by name)."""
    used = frequencies[frequencies[column] > 0]
    order = ["framework", "corpus", column, "qualified_name"]
    used = used.sort_values(order, ascending=[True, True, False, True])
    return used.assign(rank=used.groupby(["framework", "corpus"]).cumcount() + 1)


def ranking_moves(frequencies: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """framework -> its top 20 in the leading corpus, with calls, files and the rank in each other
    corpus (empty where the function has no call there)."""
    ranked = ranks(frequencies)
    corpora = corpus_order(sorted(set(frequencies["corpus"])))
    if not corpora:
        return {}
    lead, others = corpora[0], corpora[1:]
    tables = {}
    frameworks = [f for f in FRAMEWORK_ORDER if f in set(ranked["framework"])]
    for framework in frameworks:
        mine = ranked[ranked["framework"] == framework]
        top = mine[(mine["corpus"] == lead) & (mine["rank"] <= TOP)]
        table = top[["rank", "qualified_name", "calls", "files"]].reset_index(drop=True)
        for other in others:
            rank_there = mine[mine["corpus"] == other].set_index("qualified_name")["rank"]
            found = [int(rank_there[n]) if n in rank_there.index else None for n in table["qualified_name"]]
            table[f"rank in {other.split(':', 1)[0]}"] = pd.array(found, dtype="Int64")
        tables[framework] = table
    return tables


def ranking_section(data_dir: Path) -> Section | None:
    """The section (None without a frequencies table, or with a single corpus: nothing moved)."""
    folder = Path(data_dir) / "frequencies"
    if not folder.exists():
        return None
    frequencies = plain_frame(read_table("frequencies", folder / "frequencies.parquet"))
    corpora = corpus_order(sorted(set(frequencies["corpus"])))
    if len(corpora) < 2:
        return None
    tables = ranking_moves(frequencies)
    text = (
        f"The {TOP} most called functions per framework (resolved calls) in the corpus the sample is "
        f"drawn from, `{corpora[0]}`, with each one's rank in "
        + ", ".join(f"`{c}`" for c in corpora[1:])
        + " (counted beside it for comparison; empty: no resolved call there). The ranking decides the "
        "top 20 and the frequency deciles the sample draws from (DATASET_CARD.md, changelog)."
    )
    return Section(
        "How the usage ranking moved between corpora",
        text,
        [(f"{framework}: top {TOP}", table) for framework, table in tables.items()],
        [],
    )
