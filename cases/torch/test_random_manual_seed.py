"""torch.random.manual_seed: the CPU stream it starts is MT19937's (NumPy's bit generator as the
reference), streams repeat per seed on the device, and out-of-range seeds are refused."""

import numpy as np
import pytest
import torch

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
SHAPES = [(0,), (7,), (3, 5, 11), (1 << 18,)]  # the last one is 1 MB in float32
SEEDS = [0, 1234, 2**31 - 1, 2**32 - 1]


def _seed(timed, seed: int) -> torch.Generator:
    with timed.region() as r:
        r.result = torch.random.manual_seed(seed)
    return r.result


def _mt19937_uniform(seed: int, n: int, dtype: torch.dtype) -> np.ndarray:
    """torch.rand on the CPU generator, built from MT19937 raw 32-bit outputs: float64 draws
    take two outputs (high word first) and keep 53 bits; the other dtypes keep 24 bits of one
    output, computed in float32 and rounded to the dtype."""
    bits = np.random.MT19937()
    bits._legacy_seeding(seed)  # MT19937 init_genrand(seed), as torch's CPU generator seeds it
    if dtype == torch.float64:
        raw = bits.random_raw(2 * n).astype(np.uint64)
        words = (raw[0::2] << np.uint64(32)) | raw[1::2]
        return (words & np.uint64(2**53 - 1)).astype(np.float64) / 2.0**53
    raw = bits.random_raw(n).astype(np.uint64)
    return ((raw & np.uint64(2**24 - 1)).astype(np.float64) / 2.0**24).astype(np.float32)


def _round_to(values: np.ndarray, dtype: torch.dtype) -> np.ndarray:
    """float32 draws rounded to nearest-even in the dtype, as float32; a draw that rounds up to
    1.0 becomes 0.0 (torch keeps rand in [0, 1))."""
    if dtype == torch.float16:
        out = values.astype(np.float16).astype(np.float32)
    elif dtype == torch.bfloat16:
        bits = values.view(np.uint32).astype(np.uint64)
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
        out = bits.astype(np.uint32).view(np.float32)
    else:
        return values
    return np.where(out == 1.0, np.float32(0.0), out)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def test_manual_seed_starts_mt19937_stream(device, timed, seed, dtype):
    generator = _seed(timed, seed)
    assert generator is torch.default_generator and torch.initial_seed() == seed
    # deliberately on the host: the CPU generator is MT19937 on every machine
    out = torch.rand(1 << 16, dtype=dtype, device="cpu")
    expected = _mt19937_uniform(seed, 1 << 16, dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.double().numpy(), _round_to(expected, dtype).astype(np.float64))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_manual_seed_repeats_stream_on_device(device, timed, dtype, shape):
    _seed(timed, 42)
    first = (torch.rand(shape, dtype=dtype, device=device), torch.randn(shape, dtype=dtype, device=device))
    _seed(timed, 42)
    again = (torch.rand(shape, dtype=dtype, device=device), torch.randn(shape, dtype=dtype, device=device))
    _seed(timed, 43)
    other = torch.rand(shape, dtype=dtype, device=device)
    for a, b in zip(first, again):
        assert a.shape == shape and a.dtype == dtype
        assert torch.equal(a, b)
    u = first[0].float()
    assert bool(((u >= 0) & (u < 1)).all())
    if first[0].numel() > 100:  # a different seed gives a different stream
        assert not torch.equal(first[0], other)


def test_manual_seed_integer_draws_repeat(device, timed):
    _seed(timed, 7)
    a = torch.randint(-5, 17, (4097,), device=device)
    _seed(timed, 7)
    b = torch.randint(-5, 17, (4097,), device=device)
    assert torch.equal(a, b) and int(a.min()) >= -5 and int(a.max()) < 17
    assert set(a.unique().tolist()) == set(range(-5, 17))  # 4097 draws cover all 22 values


@pytest.mark.parametrize("seed", [-1, -(2**63)], ids=["minus_one", "int64_min"])
def test_manual_seed_negative_is_twos_complement(device, timed, seed):
    _seed(timed, seed)
    # the docstring's formula (0xffff_ffff_ffff_ffff + seed) is off by one: -1 maps to 2**64 - 1
    assert torch.initial_seed() == seed + 2**64
    a = torch.rand(1000, device="cpu")
    _seed(timed, seed + 2**64)
    assert torch.equal(a, torch.rand(1000, device="cpu"))


@pytest.mark.parametrize("seed", [2**64, -(2**63) - 1, 2**100], ids=["2**64", "int64_min-1", "2**100"])
def test_manual_seed_out_of_range_refused(device, timed, seed):
    _seed(timed, 5)
    # documented: a seed outside [-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff] raises RuntimeError
    with pytest.raises(RuntimeError):
        _seed(timed, seed)
    assert torch.initial_seed() == 5
