"""torch.moveaxis: move dimensions to new positions, against numpy.moveaxis."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool]


def _tensor(shape, dtype, device):
    data = np.random.default_rng(0).integers(-20, 20, shape)
    return torch.from_numpy(np.asarray(data)).to(device=device, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize(
    "shape,source,destination",
    [
        ((2, 3, 4), 0, -1),
        ((2, 3, 4), -1, 0),
        ((2, 0, 5), 1, 2),
        ((2, 3, 4, 5), (0, 1), (-1, -2)),
        ((3, 5, 7), (0, 1, 2), (2, 0, 1)),
        ((5,), 0, 0),
        ((64, 128, 64), (0, 2), (2, 0)),
    ],
    ids=["first_to_last", "last_to_first", "empty", "tuple_negative", "permutation", "1d_noop", "large"],
)
def test_moveaxis_values(device, timed, dtype, shape, source, destination):
    x = _tensor(shape, dtype, device)
    out = timed(torch.moveaxis, x, source, destination)
    expected = np.moveaxis(_np(x), source, destination)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(_np(out), expected)


def test_moveaxis_matches_movedim_and_is_a_view(device, timed):
    x = _tensor((2, 3, 4), torch.float32, device)
    out = timed(torch.moveaxis, x, [0, 2], [1, 0])
    assert torch.equal(out, torch.movedim(x, [0, 2], [1, 0]))
    eager = torch.moveaxis(x, 0, 2)
    assert eager.data_ptr() == x.data_ptr() and eager.stride() == (4, 1, 12)


def test_moveaxis_scalar(device, timed):
    x = torch.tensor(3.5, device=device)
    out = timed(torch.moveaxis, x, 0, 0)
    assert out.shape == () and out.item() == 3.5


@pytest.mark.parametrize(
    "source,destination",
    [((0, 0), (1, 2)), ((0, 1), (2,)), (3, 0), (0, -4)],
    ids=["repeated", "length_mismatch", "source_out_of_range", "destination_out_of_range"],
)
def test_moveaxis_errors(device, timed, source, destination):
    x = torch.zeros(2, 3, 4, device=device)
    with pytest.raises((RuntimeError, IndexError)):
        timed(torch.moveaxis, x, source, destination)


def test_moveaxis_gradient(device, timed):
    x = _tensor((2, 3, 4), torch.float64, device).requires_grad_()
    assert torch.autograd.gradcheck(lambda t: timed(torch.moveaxis, t, 0, 2), (x,))
