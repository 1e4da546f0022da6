"""torch.nn.utils.rnn.unpad_sequence: a padded batch back to sequences cut to their lengths, against NumPy."""

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import unpad_sequence

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32]


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _padded(
    lengths: list[int], trailing: tuple[int, ...], seed: int = 0
) -> tuple[np.ndarray, list[np.ndarray]]:
    """A batch-first padded block built by hand (padding = 7777, never a real value) and its rows."""
    rng = np.random.default_rng(seed)
    seqs = [rng.integers(-1000, 1000, (n, *trailing)).astype(np.float64) / 8 for n in lengths]
    block = np.full((len(lengths), max(lengths, default=0), *trailing), 7777.0)
    for i, s in enumerate(seqs):
        block[i, : len(s)] = s
    return block, seqs


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "lengths,trailing",
    [([0, 5, 2, 5], (3,)), ([700, 512, 333], (128,))],
    ids=["odd_with_empty_sequence", "large"],
)
def test_unpad_sequence_batch_first(device, timed, dtype, lengths, trailing):
    block, seqs = _padded(lengths, trailing)
    padded = torch.from_numpy(block).to(device=device, dtype=dtype)
    out = timed(unpad_sequence, padded, torch.tensor(lengths, device=device), batch_first=True)
    assert isinstance(out, list) and len(out) == len(lengths)
    rows = _np(padded)  # the block as stored in this dtype (bfloat16 and int32 round the eighths)
    for i, (got, want) in enumerate(zip(out, seqs)):
        assert got.dtype == dtype and tuple(got.shape) == want.shape
        np.testing.assert_array_equal(_np(got), rows[i, : len(want)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_unpad_sequence_time_first(device, timed, dtype):
    lengths = [2, 6, 4]
    block, seqs = _padded(lengths, (2,))
    padded = torch.from_numpy(np.swapaxes(block, 0, 1).copy()).to(device=device, dtype=dtype)  # (T, B, *)
    # once: with batch_first=False the function transposes its input in place.
    out = timed.once(unpad_sequence, padded, torch.tensor(lengths, device=device), batch_first=False)
    for got, want in zip(out, seqs):
        np.testing.assert_array_equal(_np(got), want)


def test_unpad_sequence_1d_hand_example(device, timed):
    padded = torch.tensor([[1, 2, 3], [4, 5, 0], [6, 0, 0]], device=device)
    out = timed(unpad_sequence, padded, torch.tensor([3, 2, 1], device=device), batch_first=True)
    assert [o.tolist() for o in out] == [[1, 2, 3], [4, 5], [6]]


def test_unpad_sequence_special_values(device, timed):
    block = np.array([[[-0.0], [np.nan], [np.inf]], [[-np.inf], [5.0], [5.0]]])
    padded = torch.from_numpy(block).to(device)
    out = timed(unpad_sequence, padded, torch.tensor([3, 1], device=device), batch_first=True)
    first, second = _np(out[0]).ravel(), _np(out[1]).ravel()
    assert np.signbit(first[0]) and first[0] == 0.0 and np.isnan(first[1]) and first[2] == np.inf
    np.testing.assert_array_equal(second, [-np.inf])


def test_unpad_sequence_round_trip(device, timed):
    rng = np.random.default_rng(3)
    seqs = [torch.from_numpy(rng.standard_normal((n, 4))).to(device) for n in (5, 9, 1, 9)]
    padded = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    lengths = torch.tensor([len(s) for s in seqs], device=device)
    out = timed(unpad_sequence, padded, lengths, batch_first=True)
    for got, want in zip(out, seqs):
        assert torch.equal(got, want)


def test_unpad_sequence_gradient(device, timed):
    block, _ = _padded([3, 1, 2], (2,))
    padded = torch.from_numpy(block).to(device).requires_grad_()
    out = timed(unpad_sequence, padded, torch.tensor([3, 1, 2], device=device), batch_first=True)
    (grad,) = torch.autograd.grad(sum(o.sum() for o in out), padded)
    # Only the kept (unpadded) positions get gradient.
    expected = np.zeros_like(block)
    for i, n in enumerate([3, 1, 2]):
        expected[i, :n] = 1.0
    np.testing.assert_array_equal(_np(grad), expected)
