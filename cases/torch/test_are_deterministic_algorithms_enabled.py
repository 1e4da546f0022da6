"""torch.are_deterministic_algorithms_enabled: the flag set by use_deterministic_algorithms, and the
documented effect of the mode (uninitialized memory filled with NaN / the integer maximum)."""

from collections.abc import Iterator

import numpy as np
import pytest
import torch
import torch.utils.deterministic


@pytest.fixture(autouse=True)
def _restore_mode() -> Iterator[None]:
    # the mode is process-global: leave it as found, whatever the test did
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    fill = torch.utils.deterministic.fill_uninitialized_memory
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)
        torch.utils.deterministic.fill_uninitialized_memory = fill


@pytest.mark.parametrize(
    "mode,warn_only",
    [(True, False), (True, True), (False, False), (False, True)],
    ids=["on", "on_warn_only", "off", "off_warn_only"],
)
def test_flag_follows_use_deterministic_algorithms(device, timed, mode, warn_only):
    torch.use_deterministic_algorithms(mode, warn_only=warn_only)
    enabled = timed(torch.are_deterministic_algorithms_enabled)
    assert type(enabled) is bool and enabled is mode
    assert torch.is_deterministic_algorithms_warn_only_enabled() is warn_only


def test_flag_toggles_back_and_forth(device, timed):
    seen = []
    for mode in [True, False, True, False]:
        torch.use_deterministic_algorithms(mode)
        seen.append(timed(torch.are_deterministic_algorithms_enabled))
    assert seen == [True, False, True, False]


@pytest.mark.parametrize("bad", ["yes", None, 1.0], ids=["str", "none", "float"])
def test_bad_mode_is_refused_and_flag_kept(device, timed, bad):
    torch.use_deterministic_algorithms(True)
    # the docs say only "mode (bool)": the argument parser refuses other types (TypeError here,
    # RuntimeError in older releases)
    with pytest.raises((TypeError, RuntimeError), match="bool"):
        torch.use_deterministic_algorithms(bad)
    assert timed(torch.are_deterministic_algorithms_enabled) is True


def _empty(shape: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device=device)


FILL_DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int32,
    torch.int64,
    torch.uint8,
]


@pytest.mark.parametrize("dtype", FILL_DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 5, 11), (1 << 18,)], ids=lambda s: "x".join(map(str, s)))
def test_enabled_mode_fills_uninitialized_memory(device, timed, dtype, shape):
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    assert timed(torch.are_deterministic_algorithms_enabled) is True
    out = _empty(shape, dtype, device)
    assert out.shape == shape and out.dtype == dtype
    values = out.cpu().float().numpy() if dtype == torch.bfloat16 else out.cpu().numpy()
    if dtype.is_floating_point:
        # documented: floating point uninitialized memory is set to NaN
        assert np.isnan(values).all()
    else:
        # documented: integer uninitialized memory is set to the maximum value
        assert (values == torch.iinfo(dtype).max).all()
