"""torch.nn.utils.rnn.pad_sequence: stacks variable-length sequences padded to the longest, against NumPy."""

import numpy as np
import pytest
import torch
from torch.nn.utils.rnn import pad_sequence

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _sequences(
    lengths: list[int], trailing: tuple[int, ...], dtype: torch.dtype, device: str
) -> list[torch.Tensor]:
    rng = np.random.default_rng(0)
    return [
        torch.from_numpy(rng.standard_normal((n, *trailing)) * 50).to(device=device, dtype=dtype)
        for n in lengths
    ]


def _reference(seqs: list[np.ndarray], batch_first: bool, value: float, side: str = "right") -> np.ndarray:
    """Padding by hand: a (B, T, *) block filled with `value`, each sequence written at its side."""
    longest = max(len(s) for s in seqs)
    out = np.full((len(seqs), longest, *seqs[0].shape[1:]), value, dtype=np.float64)
    for i, s in enumerate(seqs):
        if side == "right":
            out[i, : len(s)] = s
        elif len(s):
            out[i, longest - len(s) :] = s
    return out if batch_first else np.swapaxes(out, 0, 1)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "lengths,trailing",
    [([0, 5, 2], (3,)), ([700, 512, 333], (128,))],
    ids=["odd_with_empty_sequence", "large"],
)
def test_pad_sequence_values(device, timed, dtype, lengths, trailing):
    seqs = _sequences(lengths, trailing, dtype, device)
    out = timed(pad_sequence, seqs, batch_first=True)
    expected = _reference([_np(s) for s in seqs], True, 0.0)
    assert out.dtype == dtype and out.shape == expected.shape
    np.testing.assert_array_equal(_np(out), expected)


@pytest.mark.parametrize(
    "side,value,batch_first",
    [("right", -1.5, False), ("left", float("nan"), True), ("left", float("-inf"), False)],
    ids=["right_neg_time_first", "left_nan", "left_neg_inf_time_first"],
)
def test_pad_sequence_padding_value_and_side(device, timed, side, value, batch_first):
    seqs = _sequences([2, 5, 3], (2,), torch.float32, device)
    out = timed(pad_sequence, seqs, batch_first=batch_first, padding_value=value, padding_side=side)
    expected = _reference([_np(s) for s in seqs], batch_first, value, side)
    np.testing.assert_array_equal(_np(out), expected)


def test_pad_sequence_hand_example(device, timed):
    a, b, c = (torch.tensor(v, device=device) for v in ([1, 2, 3], [4, 5], [6]))
    out = timed(pad_sequence, [b, a, c], batch_first=True, padding_value=9)
    assert out.tolist() == [[4, 5, 9], [1, 2, 3], [6, 9, 9]]
    out = timed(pad_sequence, [b, a, c])  # time first: (T, B)
    assert out.tolist() == [[4, 1, 6], [5, 2, 0], [0, 3, 0]]


def test_pad_sequence_all_empty_and_signed_zero(device, timed):
    empties = [torch.zeros((0, 4), device=device) for _ in range(3)]
    out = timed(pad_sequence, empties, batch_first=True)
    assert out.shape == (3, 0, 4)
    zero = torch.from_numpy(np.array([-0.0, 1.0])).to(device)
    out = timed(pad_sequence, [zero, zero[:1]], batch_first=True, padding_value=0.0)
    assert bool(torch.signbit(out[0, 0])) and bool(torch.signbit(out[1, 0])), "-0.0 is copied, not padded"
    assert not bool(torch.signbit(out[1, 1]))


def test_pad_sequence_gradient(device, timed):
    seqs = [s.requires_grad_() for s in _sequences([4, 2, 3], (2,), torch.float64, device)]
    out = timed(pad_sequence, seqs, batch_first=True)
    weights = torch.arange(24, dtype=torch.float64, device=device).reshape(3, 4, 2)
    grads = torch.autograd.grad((out * weights).sum(), seqs)
    for i, g in enumerate(grads):  # each sequence gets the weights of its own (unpadded) rows
        np.testing.assert_array_equal(_np(g), _np(weights[i, : len(seqs[i])]))


def test_pad_sequence_rejects_bad_input(device, timed):
    with pytest.raises(RuntimeError):
        timed(pad_sequence, [])  # an empty list of sequences
    mismatched = [torch.zeros(2, 3, device=device), torch.zeros(2, 4, device=device)]
    with pytest.raises(RuntimeError):
        timed(pad_sequence, mismatched)  # trailing dims must agree
    with pytest.raises(RuntimeError):  # only "left" and "right" exist
        pad_sequence([torch.zeros(2, device=device)], padding_side="middle")
