"""nn.Buffer registration and torch's import paths for lazy modules and uninitialized tensors.

Expected behaviour follows torch 2.5's documented semantics (torch.nn.Buffer,
torch.nn.parameter.UninitializedParameter, torch.nn.modules.lazy), written here by hand.
"""
import importlib

import pytest

import dynamo_lite as dl
from dynamo_lite import nn


def test_uninitialized_classes_live_in_nn_parameter():
    parameter = importlib.import_module("dynamo_lite.nn.parameter")
    lazy = importlib.import_module("dynamo_lite.nn.modules.lazy")
    assert parameter.UninitializedParameter is nn.UninitializedParameter is lazy.UninitializedParameter
    assert parameter.UninitializedBuffer is nn.UninitializedBuffer
    assert lazy.LazyLinear is nn.LazyLinear
    p = parameter.UninitializedParameter()
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3)


def test_buffer_assignment_registers_a_buffer():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = nn.Buffer(dl.ones(2))
            self.scratch = nn.Buffer(dl.zeros(1), persistent=False)

    m = M()
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    assert list(m.state_dict()) == ["kept"]
    assert isinstance(m.kept, nn.Buffer) and type(m.kept) is dl.Tensor
    assert not isinstance(dl.ones(1), nn.Buffer)
    assert list(m.parameters()) == []


def test_buffer_detaches_and_rebinds_persistence():
    m = nn.Module()
    w = dl.ones(2, 2, requires_grad=True) * 2
    m.stat = nn.Buffer(w)
    assert m.stat.grad_fn is None and m.stat.requires_grad
    assert "stat" in m.state_dict()
    m.stat = nn.Buffer(dl.zeros(2), persistent=False)
    assert "stat" not in m.state_dict() and "stat" in dict(m.named_buffers())
    m.plain = 3
    m.plain = nn.Buffer(dl.zeros(1))
    assert "plain" in dict(m.named_buffers()) and "plain" not in m.__dict__


def test_buffer_on_a_parameter_name_is_a_type_error():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="as parameter 'bias'"):
        m.bias = nn.Buffer(dl.zeros(2))


def test_buffer_rejects_non_tensors():
    with pytest.raises(TypeError):
        nn.Buffer([1.0])
