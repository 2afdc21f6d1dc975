"""A cached training forward does no Python work per parameter (NOTE: [flat training-call overhead]),
and what it reuses between calls never makes it differ from eager."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.frames.aot import compiled_function
from dynamo_lite.frames.aot.compiled_function import CompiledFunction


class Stack(nn.Module):
    def __init__(self, blocks: int):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(6, 6) for _ in range(blocks)])

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x).tanh()
        return x


def _pair(blocks: int = 6):
    dl.manual_seed(0)
    model = Stack(blocks)
    reference = Stack(blocks)
    reference.load_state_dict(model.state_dict())
    return model, reference


def _the_compiled_function(model) -> CompiledFunction:
    """The one CompiledFunction whose graph reads ``model``'s parameters (earlier tests leave others)."""
    params = {id(p) for p in model.parameters()}
    functions = [o for o in gc.get_objects() if isinstance(o, CompiledFunction)
                 and any(id(a) in params for a in o._attributes())]
    assert len(functions) == 1
    return functions[0]


def _assert_same_grads(model, reference):
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_cached_call_builds_no_edge_per_parameter(monkeypatch):
    dl.reset()
    model, reference = _pair()
    compiled = dl.compile(model, backend="numpy")
    x = dl.randn(3, 6)
    compiled(x).sum().backward()
    made = []
    original = compiled_function.gradient_edge
    monkeypatch.setattr(compiled_function, "gradient_edge", lambda t: made.append(t) or original(t))
    for _ in range(3):  # the input needs no gradient: every edge comes from the parameters, made once
        out = compiled(x)
    assert made == [] and out.grad_fn.name() == "CompiledFunctionBackward"
    model.zero_grad()
    out.sum().backward()
    reference(x).sum().backward()
    _assert_same_grads(model, reference)


def test_gradients_accumulate_over_calls_and_an_input_that_requires_grad_gets_its_own():
    dl.reset()
    model, reference = _pair()
    compiled = dl.compile(model, backend="numpy")
    for step in range(3):
        x = dl.randn(3, 6, requires_grad=True)
        xr = x.detach().clone().requires_grad_()
        compiled(x).pow(2).sum().backward()
        reference(xr).pow(2).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xr.grad.numpy(), rtol=1e-5, atol=1e-6)
    _assert_same_grads(model, reference)  # three calls' gradients summed into each .grad


def test_an_optimizer_step_between_forward_and_backward_is_caught_as_in_eager():
    dl.reset()
    model, reference = _pair(2)
    compiled = dl.compile(model, backend="numpy")
    x = dl.randn(3, 6)
    compiled(x).sum().backward()
    out, expected = compiled(x), reference(x)  # a cached call: the saved parameters' versions are read now
    with dl.no_grad():  # block 1's weight carries the gradient back to block 0's output: saved by both
        model.blocks[1].weight.add_(1.0)
        reference.blocks[1].weight.add_(1.0)
    for result in (expected, out):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            result.sum().backward()


def test_a_replaced_graph_attribute_is_seen_by_the_next_call():
    dl.reset()
    model, reference = _pair(2)
    compiled = dl.compile(model, backend="numpy")
    x = dl.randn(3, 6)
    compiled(x).sum().backward()
    function = _the_compiled_function(model)
    name = next(n for n in function.attribute_names if n.endswith("weight"))
    new = nn.Parameter(dl.randn(6, 6))
    function.graph_module.set_attribute(name, new)
    model.zero_grad()
    function(x)[0].sum().backward()
    assert new.grad is not None and np.abs(new.grad.numpy()).sum() > 0  # the new object's node, not the old one's


def test_a_parameter_that_stops_requiring_grad_is_never_differentiated_by_the_cached_graph():
    dl.reset()
    model, reference = _pair(2)
    compiled = dl.compile(model, backend="numpy")
    x = dl.randn(3, 6)
    compiled(x).sum().backward()
    function = _the_compiled_function(model)
    model.blocks[0].weight.requires_grad_(False)
    reference.blocks[0].weight.requires_grad_(False)
    model.zero_grad()
    out = function(x)[0]  # called directly, past the guards: it must run op by op
    out.sum().backward()
    reference(x).sum().backward()
    assert model.blocks[0].weight.grad is None
    np.testing.assert_allclose(model.blocks[0].bias.grad.numpy(), reference.blocks[0].bias.grad.numpy(), rtol=1e-5)
