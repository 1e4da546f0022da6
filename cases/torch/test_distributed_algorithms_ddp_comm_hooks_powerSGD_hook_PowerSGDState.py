"""torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook.PowerSGDState: its settings, refusals and
what it drives in powerSGD_hook on a one-rank DDP model, against plain gradients, hand-counted compression
statistics and the low-rank/error-feedback invariants."""

import copy
import itertools
import pickle
from collections.abc import Iterator

import numpy as np
import pytest
import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook import PowerSGDState, powerSGD_hook
from torch.nn.parallel import DistributedDataParallel

TOL = {torch.float32: 1e-4, torch.float64: 1e-10, torch.float16: 2e-2, torch.bfloat16: 1e-1}


def _ids(value) -> str:
    if isinstance(value, torch.dtype):
        return str(value).removeprefix("torch.")
    return "x".join(map(str, value))


@pytest.fixture
def group(tmp_path) -> Iterator[None]:
    # One rank, a FileStore in tmp_path (no port); backend None: gloo for CPU, plus NCCL where there is CUDA.
    store = dist.FileStore(str(tmp_path / "store"), 1)
    dist.init_process_group(backend=None, store=store, rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def _model(sizes: tuple[int, ...], dtype: torch.dtype, device: str) -> torch.nn.Sequential:
    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for n_in, n_out in itertools.pairwise(sizes):
        layers += [torch.nn.Linear(n_in, n_out), torch.nn.Tanh()]
    return torch.nn.Sequential(*layers[:-1]).to(device=device, dtype=dtype)


def _grads(model: torch.nn.Module, x: torch.Tensor, steps: int) -> list[torch.Tensor]:
    for _ in range(steps):
        model.zero_grad()
        model(x).sum().backward()
    return [p.grad.detach().double().cpu() for p in model.parameters()]


def _hooked(
    sizes, dtype, device, state_kwargs, steps
) -> tuple[list[torch.Tensor], list[torch.Tensor], PowerSGDState]:
    """Gradients of the same model plain and under DDP + powerSGD_hook, after `steps` backward passes."""
    model = _model(sizes, dtype, device)
    reference = copy.deepcopy(model)
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((8, sizes[0]))).to(
        device=device, dtype=dtype
    )
    ddp = DistributedDataParallel(model)
    state = PowerSGDState(process_group=None, **state_kwargs)
    ddp.register_comm_hook(state, powerSGD_hook)
    return _grads(reference, x, steps), _grads(ddp, x, steps), state


def test_powersgd_state_settings(timed, group):
    with timed.region() as r:
        r.result = PowerSGDState(process_group=None)
    s = r.result
    # Documented defaults.
    assert (s.matrix_approximation_rank, s.start_powerSGD_iter, s.min_compression_rate) == (1, 1000, 2)
    assert s.use_error_feedback and s.warm_start and s.orthogonalization_epsilon == 0
    assert s.iter == 0 and s.error_dict == {} and s.p_memory_dict == {} and s.q_memory_dict == {}
    custom = PowerSGDState(None, matrix_approximation_rank=4, start_powerSGD_iter=7, random_seed=3)
    assert custom.matrix_approximation_rank == 4 and custom.start_powerSGD_iter == 7
    assert custom.rng.randint(1 << 30) == np.random.RandomState(3).randint(1 << 30)  # seeded NumPy RNG


@pytest.mark.parametrize("use_error_feedback,warm_start", [(True, False), (False, True), (True, True)])
def test_powersgd_state_refuses_early_start(timed, group, use_error_feedback, warm_start):
    with timed.region() as r:
        with pytest.raises(ValueError, match="start_powerSGD_iter"):
            PowerSGDState(
                None, start_powerSGD_iter=1, use_error_feedback=use_error_feedback, warm_start=warm_start
            )
        # Without either, PowerSGD may start at once.
        r.result = PowerSGDState(None, start_powerSGD_iter=1, use_error_feedback=False, warm_start=False)
    assert r.result.start_powerSGD_iter == 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
def test_powersgd_plain_allreduce_before_start(device, timed, group, dtype):
    with timed.region() as r:
        ref, got, state = _hooked((7, 5, 3), dtype, device, {"start_powerSGD_iter": 10}, steps=2)
        r.result = got
    assert state.iter == 2 and state.total_numel_before_compression == 0
    for a, b in zip(ref, got):
        np.testing.assert_array_equal(b.numpy(), a.numpy())  # one rank: allreduce leaves gradients exact


# float32/float64 only: at a rank this high the half types orthogonalise P by Gram-Schmidt (QR has no half
# kernel), which loses orthogonality on such ill-conditioned P; the half types are checked at rank 1 below.
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=_ids)
@pytest.mark.parametrize("sizes", [(6, 4, 3), (7, 5), (512, 512)], ids=_ids)
def test_powersgd_full_rank_is_exact(device, timed, group, dtype, sizes):
    # Each weight gradient sums 8 outer products (a batch of 8), so its rank is min(8, n, m); a rank-8
    # approximation (clamped to min(n, m)) with a low min_compression_rate compresses it, yet is exact.
    # (A larger rank would make P rank-deficient, and the half types' Gram-Schmidt divide by zero norms.)
    kwargs = {"matrix_approximation_rank": 8, "start_powerSGD_iter": 2, "min_compression_rate": 1e-3}
    with timed.region() as r:
        ref, got, state = _hooked(sizes, dtype, device, kwargs, steps=3)
        r.result = got
    assert state.iter == 3 and state.total_numel_before_compression > 0
    for a, b in zip(ref, got):
        scale = max(1.0, float(a.abs().max()))
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=TOL[dtype], atol=TOL[dtype] * scale)


def test_powersgd_compression_stats(device, timed, group):
    # Default min_compression_rate 2: an n x m matrix is compressed when 2 * (n + m) * rank < n * m and then
    # counts (n + m) * rank; biases are n x 1 matrices, stay uncompressed and count n before and after.
    with timed.region() as r:
        _, _, state = _hooked((16, 32, 4), torch.float32, device, {"start_powerSGD_iter": 2}, steps=3)
        r.result = state.total_numel_before_compression
    assert state.total_numel_before_compression == 32 * 16 + 32 + 4 * 32 + 4
    assert state.total_numel_after_compression == (32 + 16) + 32 + (4 + 32) + 4


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16], ids=_ids)
def test_powersgd_rank1_error_feedback(device, timed, group, dtype):
    kwargs = {"matrix_approximation_rank": 1, "start_powerSGD_iter": 2}
    with timed.region() as r:
        ref, got, state = _hooked((16, 32, 4), dtype, device, kwargs, steps=3)
        r.result = got
    # Compressed weights are rank 1; biases (not compressed) are exact.
    for idx in (0, 2):
        sv = torch.linalg.svdvals(got[idx])
        assert sv[0] > 0 and float(sv[1] / sv[0]) < TOL[dtype] / 10
    for idx in (1, 3):
        np.testing.assert_allclose(got[idx].numpy(), ref[idx].numpy(), rtol=TOL[dtype], atol=TOL[dtype])
    # P Q^T is an orthogonal projection of M: |M|^2 = |P Q^T|^2 + |M - P Q^T|^2, the error kept for feedback.
    (error,) = state.error_dict.values()
    true_sq = sum(float(g.square().sum()) for g in ref)
    got_sq = sum(float(g.square().sum()) for g in got)
    np.testing.assert_allclose(
        got_sq + float(error.double().square().sum()), true_sq, rtol=max(TOL[dtype], 1e-6)
    )


def test_powersgd_state_pickles_without_group(device, timed, group):
    _, _, state = _hooked((6, 4), torch.float32, device, {"start_powerSGD_iter": 2}, steps=3)
    with timed.region() as r:
        r.result = pickle.loads(pickle.dumps(state))
    restored = r.result
    # The process group is dropped on save and replaced by the default group on load.
    assert restored.process_group is not None and restored.iter == state.iter == 3
    assert restored.matrix_approximation_rank == 1
    assert restored.total_numel_before_compression == state.total_numel_before_compression
