"""torch.set_rng_state: a saved CPU generator state replays the same draws, a state taken from a
seeded Generator starts MT19937's stream (NumPy's bit generator as the reference), bad states refused."""

import numpy as np
import pytest
import torch

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
SHAPES = [(0,), (7,), (3, 5, 11), (1 << 18,)]  # the last one is 1 MB in float32
STATE_BYTES = torch.get_rng_state().numel()  # the CPU generator's state size (5056 bytes today)


def _set(timed, state: torch.Tensor) -> None:
    with timed.region() as r:
        r.result = torch.set_rng_state(state)
    assert r.result is None


# set_rng_state is for the CPU generator only (documented), so every draw here is on the host.
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_saved_state_replays_draws(device, timed, dtype, shape):
    torch.manual_seed(0)
    torch.randn(3, device="cpu")  # leave a cached normal sample in the state too
    state = torch.get_rng_state()
    before = (torch.rand(shape, dtype=dtype, device="cpu"), torch.randn(shape, dtype=dtype, device="cpu"))
    _set(timed, state)
    after = (torch.rand(shape, dtype=dtype, device="cpu"), torch.randn(shape, dtype=dtype, device="cpu"))
    for a, b in zip(before, after):
        assert a.shape == shape and a.dtype == dtype
        assert torch.equal(a, b)


@pytest.mark.parametrize("seed", [0, 99, 2**32 - 1])
def test_state_from_seeded_generator_starts_mt19937(device, timed, seed):
    state = torch.Generator(device="cpu").manual_seed(seed).get_state()
    torch.manual_seed(12345)  # something else first: set_rng_state must replace it
    _set(timed, state)
    out = torch.rand(4097, dtype=torch.float32, device="cpu")
    bits = np.random.MT19937()
    bits._legacy_seeding(seed)  # MT19937 init_genrand, as torch's CPU generator seeds it
    expected = (bits.random_raw(4097) & (2**24 - 1)).astype(np.float64) / 2.0**24  # 24 bits per float32
    np.testing.assert_array_equal(out.numpy(), expected.astype(np.float32))


def test_state_is_copied_and_read_back(device, timed):
    torch.manual_seed(5)
    state = torch.get_rng_state()
    expected = state.clone()
    _set(timed, state)
    state.zero_()  # mutating the caller's tensor afterwards must not reach the generator
    assert torch.equal(torch.get_rng_state(), expected)
    torch.manual_seed(5)
    reference = torch.rand(100, device="cpu")
    _set(timed, expected)
    assert torch.equal(torch.rand(100, device="cpu"), reference)


@pytest.mark.parametrize(
    "bad",
    [
        torch.zeros(3, dtype=torch.uint8),
        torch.zeros(STATE_BYTES - 1, dtype=torch.uint8),
        torch.zeros(STATE_BYTES + 1, dtype=torch.uint8),
    ],
    ids=["tiny", "one_short", "one_long"],
)
def test_wrong_size_refused(device, timed, bad):
    torch.manual_seed(3)
    kept = torch.get_rng_state()
    with pytest.raises(RuntimeError, match="size"):
        _set(timed, bad)
    assert torch.equal(torch.get_rng_state(), kept)  # a refused state changes nothing


@pytest.mark.parametrize("kind", ["float32", "int64", "list"])
def test_non_byte_tensor_refused(device, timed, kind):
    state = torch.get_rng_state()
    bad = {"float32": state.float(), "int64": state.long(), "list": state.tolist()}[kind]
    # documented argument type: torch.ByteTensor
    with pytest.raises(TypeError, match="ByteTensor"):
        _set(timed, bad)
