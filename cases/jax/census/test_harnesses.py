"""The JAX census of primitives: JAX's own harnesses (what jax2tf and the primitive tests run),
one subtest per harness group x dtype, through the same harness as the curated cases (`device`,
`timed`).

What runs comes from `harnesses.yaml` beside this file (harvested from the wheel: the groups, the
public function each exercises, the harnesses per dtype, the limitations JAX declares per device
and dtype, the per-dtype tolerance policy of params.yaml). Every dtype runs on every device,
declared unimplemented there or not: "declared unimplemented but works" and "declared working but
fails" are findings.

Per harness (args from `dyn_args_maker` on a RandomState seeded 0, as JAX's tests): the harness's
function is called through `timed` (warm-up, then the timed call, routed through the mode). The
oracle:
- eager (jit disabled): none, the sample passes if it runs (the harnesses carry no reference);
- compiled (the harness jits): the same function on the same args under jax.disable_jit, as
  jax2tf's primitive tests hold a conversion to JAX itself.
A sample fails when the function raises, or when its values leave the tolerance of the output's
dtype (NaN matching NaN). The subtest reports its oracle, samples, samples failed and the largest
deviations (`record_property`), and re-raises the first error as itself.
"""

from __future__ import annotations

import collections
from functools import cache
from typing import Any

import jax
import numpy as np

# At import, outside the pinned device: the module registers jax's config with absl, which
# refuses a config holding a Device (jax.default_device, as the `device` fixture sets it).
from jax._src.internal_test_util.test_harnesses import all_harnesses

from portability_data.runner.census_rows import CensusModule
from portability_data.runner.oracle import NO_ORACLE, Judgement

CENSUS = CensusModule(__file__)
pytest_generate_tests = CENSUS.generate_tests


@cache
def harnesses_by_pair() -> dict[tuple[str, str], list[Any]]:
    """(group, dtype name) -> its harnesses, in JAX's order."""
    found: dict[tuple[str, str], list[Any]] = collections.defaultdict(list)
    for harness in all_harnesses:
        found[(harness.group_name, np.dtype(harness.dtype).name)].append(harness)
    return found


def test_entry(census_pair: tuple[str, str], device: Any, timed: Any, record_property: Any) -> None:
    compiled = timed.mode == "compiled"

    def run_one(harness: Any) -> tuple[Any, Any]:
        args = harness.dyn_args_maker(np.random.RandomState(0))
        actual = timed(harness.dyn_fun, *args)
        return actual, _eager(harness, args) if compiled else NO_ORACLE

    judgement = Judgement(CENSUS.tolerances)
    judgement.run(
        CENSUS.samples(harnesses_by_pair()[census_pair], timed.mode),
        run_one,
        label=lambda harness: f"harness {harness.fullname}",
    )
    judgement.record(record_property, "eager" if compiled else "none")


def _eager(harness: Any, args: list[Any]) -> Any:
    """The harness's result with jit disabled, on the same args; NO_ORACLE if eager raises (the
    compiled call is then judged by its running alone)."""
    try:
        with jax.disable_jit():
            result = harness.dyn_fun(*args)
            jax.block_until_ready(result)
            return result
    except Exception:
        return NO_ORACLE
