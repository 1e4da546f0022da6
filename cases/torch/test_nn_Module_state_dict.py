"""torch.nn.Module.state_dict: the ordered parameters and persistent buffers, detached and shared."""

import numpy as np
import pytest
import torch


def _np(t):
    """A tensor as a NumPy array on the host (bfloat16 has no NumPy dtype: widened to float32)."""
    return (t.float() if t.dtype == torch.bfloat16 else t).detach().cpu().numpy()


def _ids(dtype):
    return str(dtype).removeprefix("torch.")


FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


class _Net(torch.nn.Module):
    def __init__(self, device, dtype, width=4):
        super().__init__()
        self.fc = torch.nn.Linear(3, width, device=device, dtype=dtype)
        self.norm = torch.nn.BatchNorm1d(width, device=device, dtype=dtype)
        self.head = torch.nn.Sequential(
            torch.nn.ReLU(), torch.nn.Linear(width, 2, bias=False, device=device, dtype=dtype)
        )
        self.register_buffer("scale", torch.full((2,), 3.0, device=device, dtype=dtype))
        self.register_buffer("scratch", torch.zeros(2, device=device), persistent=False)

    def forward(self, x):
        return self.head(self.norm(self.fc(x))) * self.scale


EXPECTED_KEYS = [
    "scale",
    "fc.weight",
    "fc.bias",
    "norm.weight",
    "norm.bias",
    "norm.running_mean",
    "norm.running_var",
    "norm.num_batches_tracked",
    "head.1.weight",
]


def _call_state_dict(module, **kwargs):
    return module.state_dict(**kwargs)


def _state_dict(timed, module, **kwargs):
    return timed(_call_state_dict, module, **kwargs)


@pytest.mark.parametrize("dtype", FLOATS, ids=_ids)
@pytest.mark.parametrize("width", [0, 4, 700], ids=["empty", "small", "large"])
def test_state_dict_contents(device, timed, dtype, width):
    net = _Net(device, dtype, width)
    sd = _state_dict(timed, net)
    assert list(sd) == EXPECTED_KEYS
    named = dict(net.named_parameters()) | dict(net.named_buffers())
    for key, value in sd.items():
        assert not value.requires_grad and value.device.type == torch.device(device).type
        assert value.dtype == named[key].dtype and value.shape == named[key].shape
        np.testing.assert_array_equal(_np(value), _np(named[key]))
    assert sd["norm.num_batches_tracked"].dtype == torch.int64 and sd["fc.weight"].dtype == dtype


def test_state_dict_shares_storage(device, timed):
    net = _Net(device, torch.float32)
    sd = _state_dict(timed, net)
    assert sd["fc.weight"].data_ptr() == net.fc.weight.data_ptr()
    with torch.no_grad():
        net.fc.weight.add_(1.0)
    assert torch.equal(sd["fc.weight"], net.fc.weight.detach())


def test_state_dict_keep_vars_and_prefix(device, timed):
    net = _Net(device, torch.float32)
    sd = _state_dict(timed, net, keep_vars=True)
    assert sd["fc.weight"] is net.fc.weight and sd["fc.weight"].requires_grad
    prefixed = _state_dict(timed, net, prefix="model.")
    assert list(prefixed) == ["model." + k for k in EXPECTED_KEYS]


def test_state_dict_round_trip(device, timed):
    source, target = _Net(device, torch.float64), _Net(device, torch.float64)
    source.train()(torch.ones(5, 3, device=device, dtype=torch.float64))  # updates running stats
    sd = _state_dict(timed, source)
    result = target.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for key, value in target.state_dict().items():
        np.testing.assert_array_equal(_np(value), _np(sd[key]))
    assert int(target.norm.num_batches_tracked) == 1


def test_state_dict_of_parameterless_module(device, timed):
    assert _state_dict(timed, torch.nn.ReLU()) == {}
