"""How the usage ranking moved between corpora, on counts made here with known ranks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from portability_data.report.usage_ranking import corpus_order, ranking_moves, ranking_section
from portability_data.tables.tableio import write_table

PINNED = "pinned:packages.yaml@abc"
INSTALLED = "installed:keras,optax"


def counts(corpus: str, calls: dict[str, int], framework: str = "torch") -> list[dict]:
    return [
        {"framework": framework, "corpus": corpus, "qualified_name": name, "calls": n, "bare_calls": n,
         "files": max(n // 2, 1 if n else 0), "resolution": "resolved"}
        for name, n in calls.items()
    ]  # fmt: skip


def example() -> pd.DataFrame:
    rows = counts(PINNED, {"torch.cat": 50, "torch.nn.Linear": 40, "torch.zeros": 40, "torch.sum": 0})
    rows += counts(INSTALLED, {"torch.zeros": 9, "torch.cat": 3, "torch.sum": 7})
    rows += counts(PINNED, {"jax.numpy.array": 5}, framework="jax")
    return pd.DataFrame.from_records(rows)


def test_the_sampled_corpus_leads_and_unknown_sources_come_last() -> None:
    assert corpus_order([INSTALLED, "mine:x", PINNED, "codeparrot:c"]) == [
        PINNED, "codeparrot:c", INSTALLED, "mine:x"
    ]  # fmt: skip


def test_the_top_of_the_leading_corpus_carries_its_rank_in_the_other() -> None:
    tables = ranking_moves(example())
    torch = tables["torch"]
    # ties (40 calls) break by name; a function with no call is not ranked
    assert torch["qualified_name"].tolist() == ["torch.cat", "torch.nn.Linear", "torch.zeros"]
    assert torch["rank"].tolist() == [1, 2, 3]
    assert torch["rank in installed"].tolist() == [3, pd.NA, 1]
    assert tables["jax"]["rank in installed"].isna().all()  # jax was not counted in installed


def test_the_section_needs_two_corpora(tmp_path: Path) -> None:
    assert ranking_section(tmp_path) is None
    frame, path = example(), tmp_path / "frequencies" / "frequencies.parquet"
    write_table("frequencies", frame[frame["corpus"] == PINNED], path)
    assert ranking_section(tmp_path) is None  # one corpus: nothing moved
    write_table("frequencies", frame, path)
    section = ranking_section(tmp_path)
    assert [title for title, _ in section.tables] == ["torch: top 20", "jax: top 20"]
    assert PINNED in section.text and INSTALLED in section.text
