"""torch.randperm: a random permutation of 0..n-1 in the requested dtype on the device, checked as
a permutation, for reproducibility under a seeded generator, and for rough uniformity."""

import numpy as np
import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [
    torch.int64,
    torch.int32,
    torch.int16,
    torch.uint8,
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
]
# largest n each dtype represents exactly (every integer 0..n-1)
LIMIT = {torch.uint8: 256, torch.int16: 1 << 15, torch.float16: 2048, torch.bfloat16: 256}


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("n", [0, 1, 7, 100, 1 << 18], ids=["0", "1", "7", "100", "large"])
def test_randperm_is_permutation(device, timed, dtype, n):
    n = min(n, LIMIT.get(dtype, n))
    torch.manual_seed(0)
    out = timed(torch.randperm, n, dtype=dtype, device=device)
    assert out.dtype == dtype and out.shape == (n,)
    values = np.sort(out.double().cpu().numpy())
    np.testing.assert_array_equal(values, np.arange(n))


@pytest.mark.parametrize("n", [10, 5000])
def test_randperm_seeded_generator_reproducible(device, timed, n):
    g1 = torch.Generator(device=device).manual_seed(42)
    g2 = torch.Generator(device=device).manual_seed(42)
    a = timed.once(torch.randperm, n, generator=g1, device=device)
    b = timed.once(torch.randperm, n, generator=g2, device=device)
    assert torch.equal(a, b)
    c = timed.once(torch.randperm, n, generator=g1, device=device)
    assert not torch.equal(a, c)


def test_randperm_first_position_is_uniform(device, timed):
    torch.manual_seed(1)
    counts = np.zeros(5)
    for _ in range(2000):
        counts[timed.once(torch.randperm, 5, device=device)[0].item()] += 1
    # chi-square with 4 degrees of freedom; 18.5 is the 0.999 quantile
    chi2 = ((counts - 400) ** 2 / 400).sum()
    assert chi2 < 18.5


def test_randperm_out_and_default_dtype(device, timed):
    out = torch.empty(0, dtype=torch.int64, device=device)
    result = timed.once(torch.randperm, 9, out=out)
    assert out.shape == (9,) and sorted(out.tolist()) == list(range(9))
    assert result.data_ptr() == out.data_ptr()
    assert timed.once(torch.randperm, 3, device=device).dtype == torch.int64


@pytest.mark.parametrize(
    "n,dtype", [(-1, torch.int64), (300, torch.uint8)], ids=["negative", "overflow_uint8"]
)
def test_randperm_rejects_bad_n(device, timed, n, dtype):
    with pytest.raises(RuntimeError):
        timed(torch.randperm, n, dtype=dtype, device=device)
