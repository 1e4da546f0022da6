"""torch.Tensor.data_ptr: the address of a tensor's first element, checked against its storage
pointer, storage offset and element size, for views, clones, in-place ops and empty tensors."""

import pytest
import torch


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int8,
    torch.int64,
    torch.bool,
    torch.complex64,
]


@pytest.mark.parametrize("dtype", DTYPES, ids=_ids)
@pytest.mark.parametrize("shape", [(7,), (5, 33), (1 << 18,)], ids=["odd", "2d", "large"])
def test_data_ptr_matches_storage(device, timed, dtype, shape):
    a = torch.zeros(shape, dtype=dtype, device=device)
    ptr = timed(torch.Tensor.data_ptr, a)
    assert isinstance(ptr, int) and ptr != 0
    assert ptr == a.untyped_storage().data_ptr()
    view = a.view(-1)[3:]
    assert timed(torch.Tensor.data_ptr, view) == ptr + 3 * a.element_size()
    assert view.storage_offset() == 3


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
def test_data_ptr_views_share_and_copies_differ(device, timed, dtype):
    a = torch.arange(24, device=device).to(dtype).reshape(4, 6)
    base = timed(torch.Tensor.data_ptr, a)
    assert timed(torch.Tensor.data_ptr, a.t()) == base
    assert timed(torch.Tensor.data_ptr, a[1]) == base + 6 * a.element_size()
    assert timed(torch.Tensor.data_ptr, a[:, 2]) == base + 2 * a.element_size()
    assert timed(torch.Tensor.data_ptr, a.clone()) != base
    a.add_(1)
    assert timed(torch.Tensor.data_ptr, a) == base


def test_data_ptr_empty_tensor(device, timed):
    assert timed(torch.Tensor.data_ptr, torch.empty(0, device=device)) == 0
    assert timed(torch.Tensor.data_ptr, torch.empty(3, 0, device=device)) == 0


def test_data_ptr_scalar_and_reinterpret(device, timed):
    s = torch.tensor(3.5, device=device)
    assert timed(torch.Tensor.data_ptr, s) == s.untyped_storage().data_ptr()
    x = torch.zeros(8, dtype=torch.float32, device=device)
    assert timed(torch.Tensor.data_ptr, x.view(torch.int32)) == x.data_ptr()
    assert timed(torch.Tensor.data_ptr, x.view(torch.uint8)[4:]) == x.data_ptr() + 4


def test_data_ptr_follows_set_and_resize(device, timed):
    a = torch.zeros(4, device=device)
    b = torch.ones(10, device=device)
    a.set_(b.untyped_storage(), 2, (3,))
    assert timed(torch.Tensor.data_ptr, a) == b.data_ptr() + 2 * 4
    assert a.tolist() == [1.0, 1.0, 1.0]
