"""torch.no_grad: results computed inside carry no graph, values vs NumPy; nesting, decorator, restore."""

import threading

import numpy as np
import pytest
import torch

TOLS = {torch.float32: 1e-6, torch.float64: 1e-12, torch.float16: 2e-3, torch.bfloat16: 2e-2}


def _ids(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float64).numpy()


def _under_no_grad(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return torch.tanh(x * w) + w


@torch.no_grad()
def _decorated(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x * w) + w


def _leaf(shape: tuple[int, ...], dtype: torch.dtype, device: str, seed: int) -> torch.Tensor:
    data = np.random.default_rng(seed).standard_normal(shape)
    return torch.from_numpy(data).to(device=device, dtype=dtype).requires_grad_()


@pytest.mark.parametrize("dtype", list(TOLS), ids=_ids)
@pytest.mark.parametrize("shape", [(0,), (5, 7), (512, 512)], ids=["empty", "odd", "large"])
def test_no_grad_context_in_a_timed_function(device, timed, dtype, shape):
    x, w = _leaf(shape, dtype, device, 0), _leaf(shape, dtype, device, 1)
    out = timed(_under_no_grad, x, w)
    assert not out.requires_grad and out.grad_fn is None and out.is_leaf
    assert out.dtype == dtype and out.shape == x.shape
    tol = TOLS[dtype]
    np.testing.assert_allclose(_np(out), np.tanh(_np(x) * _np(w)) + _np(w), rtol=tol, atol=tol)
    assert torch.is_grad_enabled(), "grad mode is restored after the call"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
def test_no_grad_as_decorator(device, timed, dtype):
    x, w = _leaf((6, 3), dtype, device, 2), _leaf((6, 3), dtype, device, 3)
    out = timed(_decorated, x, w)
    assert not out.requires_grad and out.grad_fn is None
    np.testing.assert_allclose(_np(out), np.tanh(_np(x) * _np(w)) + _np(w), rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError):
        out.sum().backward()  # nothing to differentiate
    assert torch.is_grad_enabled()


def test_no_grad_region_nesting_and_restore(device, timed):
    x = _leaf((4,), torch.float64, device, 4)
    with timed.region() as r:
        with torch.no_grad():
            inside = x * 2
            assert not torch.is_grad_enabled()
            with torch.enable_grad():  # an inner enable_grad wins inside no_grad
                tracked = x * 3
            with torch.no_grad():  # nesting no_grad keeps it off, and leaves it off on exit
                nested = x * 4
            assert not torch.is_grad_enabled()
            after_nested = x * 5
        r.result = (inside, tracked, nested, after_nested)
    assert torch.is_grad_enabled()
    assert not inside.requires_grad and not nested.requires_grad and not after_nested.requires_grad
    assert tracked.requires_grad and tracked.grad_fn is not None
    (grad,) = torch.autograd.grad(tracked.sum(), x)
    np.testing.assert_array_equal(_np(grad), np.full(4, 3.0))
    np.testing.assert_array_equal(_np(inside), _np(x) * 2)


def test_no_grad_restores_state_after_an_exception(device, timed):
    x = _leaf((3,), torch.float32, device, 5)
    with timed.region() as r:
        with pytest.raises(ZeroDivisionError), torch.no_grad():
            _ = x * 2
            raise ZeroDivisionError
        r.result = x * 2
    assert torch.is_grad_enabled() and r.result.requires_grad
    # Entered while grad is already off, it leaves it off.
    torch.set_grad_enabled(False)
    try:
        with torch.no_grad():
            pass
        assert not torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)


def test_no_grad_in_place_update_of_a_leaf(device, timed):
    # The classic use: update a leaf that requires grad in place, without autograd refusing it.
    w = _leaf((5,), torch.float64, device, 6)
    before = _np(w).copy()
    with timed.region() as r:
        with torch.no_grad():
            w.sub_(0.5)
        r.result = w
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    np.testing.assert_allclose(_np(w), before - 0.5, rtol=0, atol=1e-15)
    with pytest.raises(RuntimeError):
        w.sub_(0.5)  # outside no_grad, autograd refuses in-place changes to a leaf that needs grad


def test_no_grad_is_thread_local(device):
    seen: list[bool] = []

    def worker() -> None:
        seen.append(torch.is_grad_enabled())

    with torch.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert seen == [True], "a new thread starts with grad enabled"
