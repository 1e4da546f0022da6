"""The `sample` step: the study's stratified sample (docs/METHOD.md section 3) as a pure function of the
frequencies and the parameters, with seeded replacements; and the study's own sample as data.

The procedure, per framework, over the functions with a frequency above zero:
1. the top N (20) by frequency; ties at the cut are broken by name, so the draw is reproducible;
2. decile cut points are the 10th, 20th, ... 100th percentiles of the frequencies (NumPy's
   linear interpolation, as the study's code used); bucket d holds the functions with
   cut(d-1) < frequency <= cut(d). A bucket whose cut equals the previous one has no functions of
   its own and shares the previous bucket's (the study's tie rule: with many frequency-1
   functions, buckets 10 and 20 both draw from frequency 1);
3. from each bucket in order, `per_bucket` functions are drawn at random (seeded) from those not
   drawn yet; a drawn function that is also in the top N is tested once and recorded as `overlap`
   (the study lost 4/0/4 functions this way and did not redraw);
4. a kept function whose case is marked unsuitable in cases/ (status unsuitable, with a reason:
   no_test, error_handling_only, legacy_version) is `replaced` by a function drawn from the same
   bucket with a generator seeded by (seed, bucket, function), so one replacement never changes
   another's draw.
Every draw, overlap and replacement is a row of `samples`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from portability_data.readings.samples import decile_buckets
from portability_data.runner.case_rows import load_rows
from portability_data.tables.contracts import FRAMEWORKS, canonical_name
from portability_data.tables.tableio import empty_frame, read_table, write_table

TOP = "top20"


def _rng(*parts: object) -> np.random.Generator:
    digest = hashlib.sha256("\0".join(map(str, parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def stratified_sample(
    counts: pd.DataFrame,
    *,
    sample_id: str,
    seed: int,
    top_n: int = 20,
    per_bucket: int = 5,
    buckets: int = 10,
    unsuitable: dict[str, str] | None = None,
) -> pd.DataFrame:
    """The sample of one or more frameworks. `counts` has framework, function, frequency;
    `unsuitable` maps a function to its replacement reason."""
    unsuitable = unsuitable or {}
    rows: list[dict[str, Any]] = []
    for framework in sorted(counts["framework"].unique()):
        frame = counts[(counts["framework"] == framework) & (counts["frequency"] > 0)]
        frame = frame.sort_values(["frequency", "function"], ascending=[False, True]).reset_index(drop=True)
        if frame.empty:
            continue
        freq = dict(zip(frame["function"], frame["frequency"].astype(int)))
        top = list(frame["function"][:top_n])
        order = 0

        def add(
            function: str,
            bucket: str,
            status: str,
            framework: str = framework,
            freq: dict[str, int] = freq,
            **extra: Any,
        ) -> None:
            nonlocal order
            rows.append(
                {
                    "sample_id": sample_id,
                    "framework": framework,
                    "function": function,
                    "study_name": None,
                    "bucket": bucket,
                    "frequency": freq[function],
                    "draw_order": order,
                    "status": status,
                    "replaced_by": extra.get("replaced_by"),
                    "reason": extra.get("reason"),
                    "seed": seed,
                }
            )
            order += 1

        drawn: set[str] = set()
        for function in top:
            drawn.add(function)
        bucket_draws: list[tuple[str, str]] = []
        taken: set[str] = set()
        values = frame["frequency"].to_numpy(dtype=float)
        rng = np.random.default_rng(seed + FRAMEWORKS.index(framework) if framework in FRAMEWORKS else seed)
        for label, lower, upper in decile_buckets(values, buckets):
            population = sorted(f for f, v in freq.items() if lower < v <= upper and f not in taken)
            chosen = (
                rng.choice(len(population), size=min(per_bucket, len(population)), replace=False)
                if population
                else []
            )
            for index in sorted(int(i) for i in chosen):
                taken.add(population[index])
                bucket_draws.append((population[index], label))
        used = set(top) | taken
        for function in top:
            _keep_or_replace(function, TOP, add, unsuitable, freq, used, seed, top_n=top)
        for function, label in bucket_draws:
            if function in top:
                add(function, label, "overlap")
                continue
            _keep_or_replace(
                function, label, add, unsuitable, freq, used, seed, bounds=decile_buckets(values, buckets)
            )
    if not rows:
        return empty_frame("samples")
    return pd.DataFrame(rows)


def _keep_or_replace(
    function: str,
    bucket: str,
    add: Any,
    unsuitable: dict[str, str],
    freq: dict[str, int],
    used: set[str],
    seed: int,
    top_n: list[str] | None = None,
    bounds: list[tuple[str, float, float]] | None = None,
) -> None:
    """Keep the function, or record its replacement (and the replacement's own row)."""
    current = function
    while current in unsuitable:
        if bucket == TOP:
            candidates = sorted(f for f in freq if f not in used)
            candidates = sorted(candidates, key=lambda f: (-freq[f], f))[:1]
        else:
            _, lower, upper = next(b for b in bounds or [] if b[0] == bucket)
            candidates = sorted(f for f, v in freq.items() if lower < v <= upper and f not in used)
        if not candidates:
            add(current, bucket, "replaced", reason=unsuitable[current], replaced_by=None)
            return
        replacement = candidates[int(_rng(seed, bucket, current).integers(len(candidates)))]
        used.add(replacement)
        add(current, bucket, "replaced", reason=unsuitable[current], replaced_by=replacement)
        current = replacement
        if current not in unsuitable:
            add(current, bucket, "replacement")
            return
    add(current, bucket, "kept")


def unsuitable_functions(cases_dir: Path, sample_id: str) -> dict[str, str]:
    """Functions whose case rows say they are unsuitable for this sample, with the reason. The rows
    are read and checked as `portability case check` reads them (case_rows.load_rows): a malformed
    row stops the stage with its file, field and fix (CaseRowError), never a parser's traceback."""
    cases_dir = Path(cases_dir)
    found: dict[str, str] = {}
    for row in load_rows(cases_dir, cases_dir.resolve().parent):
        if row["status"] == "unsuitable" and sample_id in row["samples"]:
            found[row["function"]] = str(row.get("reason") or "no_test")
    return found


def run_sample(
    params: dict[str, Any],
    frequencies_path: Path,
    reference_samples: Path,
    cases_dir: Path,
    out: Path,
    corpus: str | None = None,
) -> pd.DataFrame:
    """The `sample` stage: the fresh sample of the current versions from the frequencies table,
    from the rows of one `corpus` (the table may hold other corpora counted for comparison). The
    case rows are checked first, before any table is read or written."""
    unsuitable = unsuitable_functions(cases_dir, params["sample_id"])
    frequencies = read_table("frequencies", frequencies_path)
    if corpus is not None:
        found = sorted(set(frequencies["corpus"]))
        frequencies = frequencies[frequencies["corpus"] == corpus]
        if frequencies.empty:
            raise ValueError(
                f"{frequencies_path}: no rows of corpus {corpus!r} (it holds {found}); "
                "run `portability frequencies` (dvc repro -s frequencies) with the params you sample with"
            )
    column = params.get("count", "calls")
    counts = frequencies.groupby(["framework", "qualified_name"], as_index=False)[column].sum()
    counts = counts.rename(columns={"qualified_name": "function", column: "frequency"})
    sample = stratified_sample(
        counts,
        sample_id=params["sample_id"],
        seed=int(params["seed"]),
        top_n=int(params["top_n"]),
        per_bucket=int(params["per_bucket"]),
        buckets=int(params["buckets"]),
        unsuitable=unsuitable,
    )
    write_table("samples", sample, out)
    return sample


# --------------------------------------------------------------------------- the study's own sample

STUDY_FREQUENCY_FILES = {
    "torch": "torch_frequencies.json",
    "tensorflow": "tensorflow_frequencies.json",
    "jax": "jax_frequencies.json",
}


def study_sample(reference_dir: Path) -> pd.DataFrame:
    """sample_id mince2023: the study's functions with real qualified names, from its curated test
    file map, with the study's bucket and bare-name frequency where its files record them (JAX:
    jax_sampled_datapoints.csv; PyTorch and TensorFlow: recomputed from the frequency files with
    the study's decile rule). The study's own spelling is kept in study_name."""
    reference_dir = Path(reference_dir)
    entries = json.loads((reference_dir / "study_function_map.json").read_text())
    jax_buckets: dict[str, str] = {}
    datapoints = reference_dir / "frequencies" / "jax_sampled_datapoints.csv"
    if datapoints.exists():
        for record in pd.read_csv(datapoints).to_dict("records"):
            bucket = "top20" if str(record["bucket"]).strip() == "top 20" else str(int(record["bucket"]))
            jax_buckets.setdefault(str(record["function"]), bucket)
    rows = []
    for framework in FRAMEWORKS:
        frequency_file = reference_dir / "frequencies" / STUDY_FREQUENCY_FILES[framework]
        freq: dict[str, int] = json.loads(frequency_file.read_text()) if frequency_file.exists() else {}
        positive = np.array(sorted(v for v in freq.values() if v > 0), dtype=float)
        top = set(sorted(freq, key=lambda k: (-freq[k], k))[:20])
        bounds = decile_buckets(positive, 10) if len(positive) else []
        seen: set[str] = set()
        order = 0
        for entry in entries:
            if entry["framework"] != framework or entry.get("in_sample") is not True:
                continue
            function = canonical_name(entry["qualified_name"])
            if function in seen:
                continue
            seen.add(function)
            bare = function.rsplit(".", 1)[-1]
            count = freq.get(bare)
            if framework == "jax" and bare in jax_buckets:
                bucket = jax_buckets[bare]
            elif bare in top:
                bucket = TOP
            elif count:
                bucket = next(label for label, lower, upper in bounds if lower < count <= upper)
            else:
                bucket = "10"
            study_name = entry.get("paper_name")
            rows.append(
                {
                    "sample_id": "mince2023",
                    "framework": framework,
                    "function": function,
                    "study_name": study_name
                    if study_name and canonical_name(study_name) != function
                    else None,
                    "bucket": bucket,
                    "frequency": count,
                    "draw_order": order,
                    "status": "kept",
                    "replaced_by": None,
                    "reason": None,
                    "seed": 42 if framework == "jax" else None,
                }
            )
            order += 1
    return pd.DataFrame(rows)
