"""The stratified sample: the study's rules, checked by hand and by properties (hypothesis)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from portability_data.pipeline.sample import stratified_sample, study_sample
from portability_data.readings.samples import decile_buckets
from tests.conftest import REFERENCE_DIR


def counts_frame(frequencies: dict[str, int], framework: str = "jax") -> pd.DataFrame:
    return pd.DataFrame(
        {"framework": framework, "function": list(frequencies), "frequency": list(frequencies.values())}
    )


def test_tied_cut_points_share_the_previous_bucket() -> None:
    values = np.array([1] * 50 + [2] * 10 + list(range(3, 43)), dtype=float)
    bounds = decile_buckets(values, 10)
    cuts = np.percentile(values, [10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
    assert cuts[0] == cuts[1] == 1.0  # frequency-1 functions fill two deciles
    assert bounds[0] == ("10", 0.0, 1.0)
    assert bounds[1] == ("20", 0.0, 1.0)  # shares bucket 10's population
    assert bounds[-1][0] == "100" and bounds[-1][2] == 42.0


def test_hand_made_sample() -> None:
    freq = {f"f{i:02d}": i for i in range(1, 41)}  # 40 functions, frequencies 1..40
    sample = stratified_sample(counts_frame(freq), sample_id="s", seed=0, top_n=3, per_bucket=2, buckets=4)
    top = sample[sample["bucket"] == "top20"]
    assert top["function"].tolist() == ["f40", "f39", "f38"]
    for label, low, high in [("25", 0, 10.75), ("50", 10.75, 20.5), ("75", 20.5, 30.25), ("100", 30.25, 40)]:
        drawn = sample[sample["bucket"] == label]
        assert len(drawn) == 2
        assert all(low < freq[f] <= high for f in drawn["function"])
    assert sample["draw_order"].tolist() == list(range(len(sample)))


def test_overlap_with_top_is_recorded_not_redrawn() -> None:
    freq = {"a": 100, "b": 90, "c": 1, "d": 1}
    sample = stratified_sample(counts_frame(freq), sample_id="s", seed=1, top_n=2, per_bucket=2, buckets=2)
    overlaps = sample[sample["status"] == "overlap"]
    assert set(overlaps["function"]) == {"a", "b"}  # bucket 100 holds exactly the top functions
    assert set(sample[sample["status"] == "kept"]["function"]) == {"a", "b", "c", "d"}


def test_unsuitable_function_is_replaced_from_the_same_bucket_with_a_reason() -> None:
    freq = {f"f{i:02d}": i for i in range(1, 41)}
    first = stratified_sample(counts_frame(freq), sample_id="s", seed=3, top_n=0, per_bucket=2, buckets=4)
    victim = first.iloc[0]
    second = stratified_sample(
        counts_frame(freq),
        sample_id="s",
        seed=3,
        top_n=0,
        per_bucket=2,
        buckets=4,
        unsuitable={victim["function"]: "no_test"},
    )
    replaced = second[second["status"] == "replaced"].iloc[0]
    assert replaced["function"] == victim["function"] and replaced["reason"] == "no_test"
    replacement = second[second["function"] == replaced["replaced_by"]].iloc[0]
    assert replacement["status"] == "replacement" and replacement["bucket"] == victim["bucket"]
    others = first.iloc[1:][["function", "bucket"]].values.tolist()
    assert (
        others
        == second[~second["status"].isin(["replaced", "replacement"])][["function", "bucket"]].values.tolist()
    )


frequency_maps = st.dictionaries(
    st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.integers(0, 500), min_size=1, max_size=150
)


@settings(max_examples=60, deadline=None)
@given(frequency_maps, st.integers(0, 2**31), st.integers(0, 25), st.integers(1, 6), st.integers(1, 10))
def test_sample_properties(
    freq: dict[str, int], seed: int, top_n: int, per_bucket: int, buckets: int
) -> None:
    frame = counts_frame(freq)
    sample = stratified_sample(
        frame, sample_id="p", seed=seed, top_n=top_n, per_bucket=per_bucket, buckets=buckets
    )
    again = stratified_sample(
        frame, sample_id="p", seed=seed, top_n=top_n, per_bucket=per_bucket, buckets=buckets
    )
    pd.testing.assert_frame_equal(sample, again)  # a pure function of inputs and seed
    positive = {k: v for k, v in freq.items() if v > 0}
    if not positive:
        assert sample.empty
        return
    top = sample[sample["bucket"] == "top20"]
    assert len(top) == min(top_n, len(positive))
    deciles = sample[sample["bucket"] != "top20"]
    assert not deciles["function"].duplicated().any()  # no function drawn twice across buckets
    assert (deciles.groupby("bucket").size() <= per_bucket).all()
    assert set(sample["function"]) <= set(positive)  # never a function that was not used
    bounds = {
        label: (low, high)
        for label, low, high in decile_buckets(np.array(list(positive.values()), float), buckets)
    }
    for row in deciles.itertuples():
        low, high = bounds[row.bucket]
        assert low < positive[row.function] <= high
    kept = sample[sample["status"].isin(["kept", "replacement"])]
    assert not kept["function"].duplicated().any()  # tested once, overlaps included


@pytest.mark.skipif(not REFERENCE_DIR.exists(), reason="the study's raw data (../shared/reference) is absent")
def test_study_sample_from_the_reference_data() -> None:
    sample = study_sample(REFERENCE_DIR)
    assert sample.groupby("framework").size().to_dict() == {"jax": 63, "tensorflow": 63, "torch": 63}
    spelled = dict(zip(sample["function"], sample["study_name"]))
    assert spelled["torch.fliplr"] == "torch.flipr"  # the study's typo, kept beside the real name
    jax = sample[sample["framework"] == "jax"].set_index("function")
    assert jax.loc["jax.numpy.tril_indices_from", "bucket"] == "10"
    assert jax.loc["jax.numpy.tril_indices_from", "frequency"] == 1
    assert jax.loc["jax.tree_util.tree_map", "bucket"] == "top20"


def test_committed_study_sample_matches_the_importer(repo_root: Path) -> None:
    from portability_data.tables.tableio import read_table

    committed = read_table("samples", repo_root / "data" / "samples" / "mince2023.parquet")
    assert set(committed["sample_id"]) == {"mince2023"}
    if REFERENCE_DIR.exists():
        fresh = study_sample(REFERENCE_DIR)
        assert committed["function"].tolist() == fresh["function"].tolist()
