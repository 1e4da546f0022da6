"""torch.is_grad_enabled: the thread-local grad mode under each context, against what autograd records."""

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import pytest
import torch

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
SHAPES = [(0,), (7,), (3, 5, 11), (1 << 18,)]  # the last one is 1 MB in float32

# (context factory, the grad mode it must leave on)
CONTEXTS: dict[str, tuple[Callable[[], AbstractContextManager], bool]] = {
    "default": (nullcontext, True),
    "no_grad": (torch.no_grad, False),
    "enable_grad": (torch.enable_grad, True),
    "set_grad_enabled_false": (lambda: torch.set_grad_enabled(False), False),
    "set_grad_enabled_true": (lambda: torch.set_grad_enabled(True), True),
    "inference_mode": (torch.inference_mode, False),
    "inference_mode_off": (lambda: torch.inference_mode(False), True),
}


def _double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@pytest.mark.parametrize("name", list(CONTEXTS))
def test_is_grad_enabled_under_context(device, timed, name):
    context, expected = CONTEXTS[name]
    assert torch.is_grad_enabled()  # pytest runs each test with grad mode on
    with context():
        enabled = timed(torch.is_grad_enabled)
    assert type(enabled) is bool and enabled is expected
    assert torch.is_grad_enabled()  # the context restored the mode on exit


@pytest.mark.parametrize("grad", [True, False], ids=["grad_on", "grad_off"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_is_grad_enabled_matches_autograd_recording(device, timed, grad, dtype, shape):
    x = torch.ones(shape, dtype=dtype, device=device, requires_grad=True)
    with torch.set_grad_enabled(grad):
        enabled = timed(torch.is_grad_enabled)
        y = _double(x)
    assert enabled is grad
    # autograd records the op (y gets a grad_fn) exactly when grad mode is on
    assert y.requires_grad is enabled and (y.grad_fn is not None) is enabled
    assert y.dtype == dtype and y.shape == x.shape
    assert torch.equal(y.detach(), torch.full(shape, 2, dtype=dtype, device=device))


def test_is_grad_enabled_nested_contexts(device, timed):
    seen = []
    with torch.no_grad():
        seen.append(timed(torch.is_grad_enabled))
        with torch.enable_grad():
            seen.append(timed(torch.is_grad_enabled))
            with torch.set_grad_enabled(False):
                seen.append(timed(torch.is_grad_enabled))
            seen.append(timed(torch.is_grad_enabled))
        seen.append(timed(torch.is_grad_enabled))
    seen.append(timed(torch.is_grad_enabled))
    assert seen == [False, True, False, True, False, True]


def test_is_grad_enabled_is_thread_local(device, timed):
    seen: list[bool] = []

    def worker() -> None:
        seen.append(torch.is_grad_enabled())  # a fresh thread starts with grad mode on

    with torch.no_grad():
        enabled = timed(torch.is_grad_enabled)
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert enabled is False and seen == [True]


def test_is_grad_enabled_restored_after_exception(device, timed):
    with pytest.raises(ZeroDivisionError), torch.no_grad():
        _ = 1 / 0
    assert timed(torch.is_grad_enabled) is True
