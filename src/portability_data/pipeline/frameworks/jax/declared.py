"""What the installed JAX wheel itself declares about devices and dtypes, as rows of the
`declared` table beside PyTorch's (issue 20).

JAX's primitive harnesses (jax._src.internal_test_util.test_harnesses, what jax2tf and the
primitive tests run) carry `jax_unimplemented`: Limitation records naming the devices (cpu, gpu,
tpu: JAX's own device names, kept as the device types) and dtypes where a harness is declared
not to work, each with a description and whether it applies in this installation (`enabled`,
kept as `active`) and whether the test is not even run (`skip_run`). Per harness group (the
census entry) x device x dtype:
- `unsupported_dtype` when every harness of that dtype is declared unimplemented there, and
  `supported_dtype` when none is (the group runs that dtype: JAX's tests hold it to work);
- when only some are, `supported_dtype` and, per limitation, an `expected_failure` row (a
  `skip` row for skip_run limitations) whose reason is JAX's description, how many of the
  dtype's harnesses it names and for how many it is enabled (its source names the limitation): a
  partial declaration, counted by the support matrix as a declared failure of the pair.
Disabled limitations are kept as rows with active false (they say what JAX would declare under
other flags). Groups with no public function keep `function` null with the reason, as in the
census manifest (census.group_function).
"""

from __future__ import annotations

import collections
from typing import Any

import pandas as pd

from portability_data.pipeline.frameworks.jax.census import DEVICES, group_function, public_jax_names

FRAMEWORK = "jax"
ORIGIN = "harnesses"
SOURCE = "jax._src.internal_test_util.test_harnesses"


def _dtype_name(dtype: Any) -> str:
    import numpy as np

    return np.dtype(dtype).name


def _applies(limitation: Any, device: str, dtype: Any) -> bool:
    """Limitation.filter without its `enabled` test: a disabled limitation is kept, inactive."""
    return device in limitation.devices and (not limitation.dtypes or dtype in limitation.dtypes)


def jax_declared_rows(api: pd.DataFrame) -> pd.DataFrame:
    """The declared rows of the installed jax's harnesses (columns of the declared table, plain types)."""
    import jax
    from jax._src.internal_test_util.test_harnesses import all_harnesses

    version = str(jax.__version__)
    public = public_jax_names(api, version)
    groups: dict[str, list[Any]] = collections.defaultdict(list)
    for harness in all_harnesses:
        groups[harness.group_name].append(harness)
    rows: list[dict[str, Any]] = []
    for group, harnesses in groups.items():
        function, reason = group_function(group, public)
        by_dtype: dict[str, list[Any]] = collections.defaultdict(list)
        for harness in harnesses:
            by_dtype[_dtype_name(harness.dtype)].append(harness)

        entry = {
            "framework": FRAMEWORK,
            "framework_version": version,
            "function": function,
            "unmapped_reason": reason,
            "origin": ORIGIN,
            "entry": group,
            "variant": None,
            "aspect": "forward",
            "test_class": None,
            "test_name": None,
            "source": f"{SOURCE}: group {group}, jax_unimplemented",
        }

        def row(device: str, dtype: str, declared: str, entry: dict = entry, **rest: Any) -> dict[str, Any]:
            return {
                **entry,
                "device_type": device,
                "dtype": dtype,
                "declared": declared,
                "active": rest.get("active", True),
                "reason": rest.get("why"),
                "source": rest.get("source", entry["source"]),
            }

        for dtype, of_dtype in sorted(by_dtype.items()):
            for device in DEVICES:
                # (description, skip_run) -> [harnesses it names, of which it is enabled for]
                limited: dict[tuple[str, bool], list[int]] = collections.defaultdict(lambda: [0, 0])
                unimplemented = 0
                for harness in of_dtype:
                    hits = [lim for lim in harness.jax_unimplemented if _applies(lim, device, harness.dtype)]
                    unimplemented += any(lim.enabled for lim in hits)
                    for lim in hits:
                        counts = limited[(lim.description, bool(lim.skip_run))]
                        counts[0] += 1
                        counts[1] += bool(lim.enabled)
                if unimplemented == len(of_dtype):
                    rows.append(row(device, dtype, "unsupported_dtype", why=_reasons(limited, len(of_dtype))))
                    continue
                rows.append(row(device, dtype, "supported_dtype"))
                for (description, skip_run), (named, enabled) in sorted(limited.items()):
                    rows.append(
                        row(
                            device,
                            dtype,
                            "skip" if skip_run else "expected_failure",
                            active=enabled > 0,
                            why=f"{description} ({named} of {len(of_dtype)} harnesses, {enabled} enabled)",
                            source=f"{entry['source']}: {description}",
                        )
                    )
    return pd.DataFrame(rows)


def _reasons(limited: dict[tuple[str, bool], list[int]], harnesses: int) -> str:
    """JAX's descriptions of the active limitations behind an unsupported dtype."""
    active = sorted({description for (description, _), (_, enabled) in limited.items() if enabled})
    return f"{'; '.join(active)} (all {harnesses} harnesses)"
