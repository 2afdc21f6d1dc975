"""A cached training forward does no Python work per parameter (NOTE: [flat training-call overhead]),
and what it reuses between calls never makes it differ from eager."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.frames.aot import compiled_function
from dynamo_lite.frames.aot.call_state import AttributeState, saved_layout
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


def _compiled_pair(blocks: int = 6):
    """A fresh cache, the model compiled on numpy, its eager twin and an input."""
    dl.reset()
    model, reference = _pair(blocks)
    return model, reference, dl.compile(model, backend="numpy"), dl.randn(3, 6)


def _assert_both_raise_modified_in_place(*results):
    for result in results:
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            result.sum().backward()


def _assert_step_equals_eager(compiled, model, reference, x):
    """One compiled call (a compiled backward node) equal to eager, in its output and gradients."""
    out, expected = compiled(x), reference(x)
    _assert_compiled_node(out)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    expected.sum().backward()
    _assert_same_grads(model, reference)


def _assert_same_grads(model, reference):
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_cached_call_builds_no_edge_per_parameter(monkeypatch):
    model, reference, compiled, x = _compiled_pair()
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
    model, reference, compiled, x = _compiled_pair(2)
    compiled(x).sum().backward()
    out, expected = compiled(x), reference(x)  # a cached call: the saved parameters' versions are read now
    with dl.no_grad():  # block 1's weight carries the gradient back to block 0's output: saved by both
        model.blocks[1].weight.add_(1.0)
        reference.blocks[1].weight.add_(1.0)
    _assert_both_raise_modified_in_place(expected, out)


def test_a_replaced_graph_attribute_is_seen_by_the_next_call():
    model, reference, compiled, x = _compiled_pair(2)
    compiled(x).sum().backward()
    function = _the_compiled_function(model)
    name = next(n for n in function.attribute_names if n.endswith("weight"))
    new = nn.Parameter(dl.randn(6, 6))
    function.graph_module.set_attribute(name, new)
    model.zero_grad()
    function(x)[0].sum().backward()
    assert new.grad is not None and np.abs(new.grad.numpy()).sum() > 0  # the new object's node, not the old one's


def test_a_parameter_that_stops_requiring_grad_is_never_differentiated_by_the_cached_graph():
    model, reference, compiled, x = _compiled_pair(2)
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


def _assert_compiled_node(out):
    assert out.grad_fn is not None and out.grad_fn.name() == "CompiledFunctionBackward"


def test_cached_calls_read_no_requires_grad_flag_until_a_tensor_is_rebound(monkeypatch):
    model, reference, compiled, x = _compiled_pair()
    compiled(x)
    refreshes = []
    original = AttributeState.refresh
    monkeypatch.setattr(AttributeState, "refresh", lambda self: refreshes.append(self) or original(self))
    for _ in range(3):
        compiled(x)
    assert refreshes == []
    for module in (model, reference):  # off and on again: as compiled for, read once more
        module.blocks[2].weight.requires_grad_(False)
        module.blocks[2].weight.requires_grad_(True)
    out = compiled(x)
    assert len(refreshes) == 1
    _assert_compiled_node(out)
    model.zero_grad()
    out.sum().backward()
    reference(x).sum().backward()
    _assert_same_grads(model, reference)


def test_a_parameter_toggled_off_between_calls_gets_no_gradient_as_in_eager():
    model, reference, compiled, x = _compiled_pair(3)
    compiled(x).sum().backward()
    for module in (model, reference):
        module.zero_grad()
        module.blocks[1].weight.requires_grad_(False)
    compiled(x).sum().backward()
    reference(x).sum().backward()
    assert model.blocks[1].weight.grad is None and reference.blocks[1].weight.grad is None
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        if q.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    for module in (model, reference):  # back on: the weight gets its gradient again
        module.zero_grad()
        module.blocks[1].weight.requires_grad_(True)
    out = compiled(x)
    _assert_compiled_node(out)
    out.sum().backward()
    reference(x).sum().backward()
    _assert_same_grads(model, reference)


def test_a_parameter_replaced_by_a_new_one_is_read_and_differentiated():
    model, reference, compiled, x = _compiled_pair(3)
    compiled(x).sum().backward()
    weight = dl.randn(6, 6)
    model.blocks[1].weight = nn.Parameter(weight.clone())
    reference.blocks[1].weight = nn.Parameter(weight.clone())
    model.zero_grad()
    _assert_step_equals_eager(compiled, model, reference, x)


def test_data_swapped_under_no_grad_is_read_and_its_in_place_change_caught():
    model, reference, compiled, x = _compiled_pair(3)
    compiled(x).sum().backward()
    weight = dl.randn(6, 6)
    with dl.no_grad():  # the same Parameter object over a new storage (what set_ does)
        model.blocks[1].weight.data = weight.clone()
        reference.blocks[1].weight.data = weight.clone()
    model.zero_grad()
    _assert_step_equals_eager(compiled, model, reference, x)
    out, expected = compiled(x), reference(x)  # the saved weight's version is the new storage's
    with dl.no_grad():
        model.blocks[1].weight.mul_(2.0)
        reference.blocks[1].weight.mul_(2.0)
    _assert_both_raise_modified_in_place(expected, out)


def test_an_optimizer_step_before_backward_raises_and_a_training_loop_matches_eager():
    dl.reset()
    model, reference = _pair(3)
    compiled = dl.compile(model, backend="numpy")
    optimizers = [dl.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (model, reference)]
    x = dl.randn(3, 6)
    for _ in range(4):
        for module, optimizer in zip((compiled, reference), optimizers):
            optimizer.zero_grad()
            module(x).pow(2).mean().backward()
            optimizer.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6)
    out, expected = compiled(x), reference(x)
    _assert_compiled_node(out)
    for optimizer in optimizers:
        optimizer.step()  # the saved weights change before the backward
    _assert_both_raise_modified_in_place(expected, out)


def test_the_saved_values_are_laid_out_inputs_then_attributes_then_outputs():
    dl.reset()
    model, _ = _pair(3)
    compiled = dl.compile(model, backend="numpy")
    compiled(dl.randn(3, 6, requires_grad=True))
    function = _the_compiled_function(model)
    kinds = [kind for kind, _ in function.saved]
    assert kinds == sorted(kinds, key=["input", "attribute", "output"].index) and len(set(kinds)) == 3
    with pytest.raises(ValueError):
        saved_layout([("output", 0), ("input", 0)])
    with pytest.raises(ValueError):
        saved_layout([("output", 1), ("output", 0)])


class _AddInto(dl.autograd.Function):
    """``target += value`` in place, ``target`` marked dirty: it now carries ``value``'s gradient."""

    @staticmethod
    def forward(ctx, target, value):
        target.add_(value)
        ctx.mark_dirty(target)
        return target

    @staticmethod
    def backward(ctx, grad):
        return grad, grad


class _Offset(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.register_buffer("offset", dl.zeros(4))

    def forward(self, x):
        return self.linear(x) * self.offset


def test_a_buffer_that_a_custom_function_makes_require_grad_carries_its_gradient():
    """The buffer was compiled as a constant; eager then sends a gradient through it."""
    dl.reset()
    dl.manual_seed(0)
    model, reference = _Offset(), _Offset()
    reference.load_state_dict(model.state_dict())
    compiled = dl.compile(model, backend="numpy")
    x = dl.randn(2, 4)
    values = [dl.ones(4, requires_grad=True) for _ in range(2)]  # made first: making one counts as a rebind
    results = []
    for module, target, value in ((reference, reference, values[0]), (compiled, model, values[1])):
        module(x)
        _AddInto.apply(target.offset, value)  # no other rebind between the two calls
        out = module(x)
        out.sum().backward()
        results.append((out.detach().numpy(), value.grad))
    (expected, expected_grad), (actual, actual_grad) = results
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
    assert actual_grad is not None
    np.testing.assert_allclose(actual_grad.numpy(), expected_grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_new_tensor_that_requires_grad_is_no_rebind(monkeypatch):
    """A factory's ``requires_grad=True`` flags a tensor no guard has seen: the cached call stays flat."""
    dl.reset()
    model, reference = _pair()
    compiled = dl.compile(model, backend="numpy")
    compiled(dl.randn(3, 6, requires_grad=True))
    refreshes = []
    original = AttributeState.refresh
    monkeypatch.setattr(AttributeState, "refresh", lambda self: refreshes.append(self) or original(self))
    for _ in range(3):
        x = dl.randn(3, 6, requires_grad=True)
        xr = dl.tensor(x.detach().numpy(), requires_grad=True)
        out = compiled(x)
        _assert_compiled_node(out)
        out.sum().backward()
        reference(xr).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), xr.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert refreshes == []
    with pytest.raises(RuntimeError, match="floating point and complex dtype"):
        dl.zeros(3, dtype=dl.int64, requires_grad=True)
