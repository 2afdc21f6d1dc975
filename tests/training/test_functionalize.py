"""An optimizer graph's in-place updates run functionalized: fused, same objects, values and versions.

NOTE: [functionalized updates] in dynamo_lite/frames/aot/functionalize.py.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.frames.aot.functionalize import functionalize
from dynamo_lite.graph import GraphModule
from dynamo_lite.graph.graph import Graph
from dynamo_lite.ops.core.registry import REGISTRY
from dynamo_lite.tensor.meta import TensorMeta
from dynamo_lite.frames.translate import autograd_graphs
from tests.training.train_step_harness import make_train_step, mse

OPTIMIZERS = {
    "adamw": lambda params: dl.optim.AdamW(params, lr=1e-2, weight_decay=0.1),
    "adam_amsgrad": lambda params: dl.optim.Adam(params, lr=1e-2, amsgrad=True),
    "sgd_nesterov": lambda params: dl.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True),
    "rmsprop_centered": lambda params: dl.optim.RMSprop(params, lr=1e-2, centered=True, momentum=0.5),
}


def _versions(model, optimizer) -> list:
    found = [p._version for p in model.parameters()]
    found += [p.grad._version for p in model.parameters() if p.grad is not None]
    for p in model.parameters():
        found += [v._version for v in optimizer.state[p].values() if isinstance(v, dl.Tensor)]
    return found


def _values(model, optimizer) -> list:
    found = [p.detach().numpy().copy() for p in model.parameters()]
    found += [p.grad.numpy().copy() for p in model.parameters() if p.grad is not None]
    for p in model.parameters():
        found += [v.numpy().copy() for v in optimizer.state[p].values() if isinstance(v, dl.Tensor)]
    return found


@pytest.mark.parametrize("set_to_none", [True, False], ids=["grads_to_none", "grads_zeroed"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_graphs_are_functionalized_and_equal_eager(name, set_to_none, backend, monkeypatch):
    """With ``zero_grad(set_to_none=False)`` the graph also zeroes the grads in place, with
    grad mode on: nothing it reads requires grad there, so it is functionalized all the same."""
    made = []
    original = autograd_graphs.functionalize

    def recording(gm, example_inputs):
        result = original(gm, example_inputs)
        made.append(result[0])
        return result

    monkeypatch.setattr(autograd_graphs, "functionalize", recording)
    dl.manual_seed(0)
    eager_model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4))
    model = copy.deepcopy(eager_model)
    eager_opt, opt = OPTIMIZERS[name](eager_model.parameters()), OPTIMIZERS[name](model.parameters())
    state_objects = None
    eager_step = make_train_step(eager_model, eager_opt, mse, set_to_none=set_to_none)
    step = dl.compile(make_train_step(model, opt, mse, set_to_none=set_to_none), backend=backend)
    # native's float32 tanh is within 2 ulp of eager's, not bit-equal (NOTE: [native vmath]); RMSprop
    # divides a gradient by its running RMS, so that rounding reaches a parameter as ~1e-6 absolute
    atol = 1e-5 if backend == "native" else 1e-7
    dl.manual_seed(1)
    for call in range(6):
        x, y = dl.randn(8, 6), dl.randn(8, 4)
        np.testing.assert_allclose(step(x, y).item(), eager_step(x, y).item(), rtol=1e-5)
        for actual, expected in zip(_values(model, opt), _values(eager_model, eager_opt)):
            np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=atol, err_msg=f"call {call}")
        # each update bumps the version as eager's in-place ops do (a deepcopy starts at 0: compare steps)
        versions = (_versions(model, opt), _versions(eager_model, eager_opt))
        if call >= 1:
            assert [a - b for a, b in zip(versions[0], previous[0])] == [
                a - b for a, b in zip(versions[1], previous[1])], f"call {call}"
        previous = versions
        objects = [id(v) for p in model.parameters() for v in opt.state[p].values()]
        if call >= 1:  # the state tensors are updated in place, never replaced
            assert state_objects in (None, objects)
            state_objects = objects
    steady = made[-1].graph  # the graph that runs once the state exists
    targets = [getattr(n.target, "name", None) for n in steady.nodes if n.op == "call_function"]
    inplace = [t for t in targets if t and t.endswith("_")]
    assert inplace and set(inplace) == {"copy_"}, inplace  # every update: one copy back at the end
    zeroed = [n for n in steady.nodes if getattr(n.target, "name", None) == "zeros_like"]
    assert len(zeroed) == (0 if set_to_none else len(list(model.parameters())))
    assert targets.count("copy_") == len(set(n.args[0] for n in steady.nodes if getattr(n.target, "name", "") == "copy_"))


def _graph(build):
    """A GraphModule over attribute tensors ``a``/``b`` built by ``build(graph, a, b) -> outputs``."""
    graph = Graph()
    tensors = {"a": dl.randn(4), "b": dl.randn(4)}
    nodes = {}
    for name, t in tensors.items():
        nodes[name] = graph.get_attr(name)
        nodes[name].meta["val"] = TensorMeta.of(t)
    outputs = build(graph, nodes["a"], nodes["b"])
    graph.output(tuple(outputs))
    return GraphModule(tensors, graph)


def _call(graph, op, *args, **kwargs):
    node = graph.call_function(REGISTRY[op], args, kwargs)
    metas = [a.meta["val"] if hasattr(a, "op") else a for a in args]
    node.meta["val"] = REGISTRY[op].meta(*metas, **kwargs)
    return node


def test_a_chain_of_updates_becomes_one_copy_back_with_eager_versions():
    def build(g, a, b):
        first = _call(g, "mul_", a, 2.0)
        second = _call(g, "add_", first, b)
        return [_call(g, "sqrt", _call(g, "abs", second)), first]

    gm = _graph(build)
    new, extra = functionalize(gm, [])
    assert extra == [("a", 1)]  # two writes: the copy back bumps once, the wrapper once more
    ops = [n.target.name for n in new.graph.nodes if n.op == "call_function"]
    assert ops == ["mul", "add", "abs", "sqrt", "copy_"]
    a, b = gm.get_attribute("a"), gm.get_attribute("b")
    expected = np.sqrt(np.abs(a.numpy() * 2 + b.numpy()))
    root, returned = new.forward()
    assert returned is a and a._version == 1
    np.testing.assert_allclose(root.numpy(), expected, rtol=1e-6)


def _update_with_a_float64_operand(g, a, b):
    # add(float32, float64 tensor) promotes to float64 out of place, but add_ rounds to float32
    return [_call(g, "add_", a, _call(g, "_to_copy", b, dtype=dl.float64, device=dl.device("cpu"), memory_format=dl.preserve_format))]


CASES = {
    "a view of an updated input": lambda g, a, b: [_call(g, "view", _call(g, "mul_", a, 2.0), (2, 2))],
    "a read of the old value after a write": lambda g, a, b: (lambda m: [_call(g, "add", a, 1.0), m])(
        _call(g, "mul_", a, 2.0)),
    "an update whose out-of-place op has another dtype": _update_with_a_float64_operand,
}


@pytest.mark.parametrize("case", list(CASES))
def test_graphs_where_it_would_not_be_exact_stay_as_they_are(case):
    gm = _graph(CASES[case])
    assert functionalize(gm, []) == (gm, None)


def test_inputs_sharing_a_storage_stay_as_they_are():
    def build(g, a, b):
        return [_call(g, "mul_", a, 2.0), _call(g, "add", b, 1.0)]

    gm = _graph(build)
    base = dl.randn(8)
    gm._attributes["a"], gm._attributes["b"] = base[:4], base[4:]
    assert functionalize(gm, []) == (gm, None)


def test_zeroing_and_copying_inputs_have_out_of_place_forms():
    def build(g, a, b):
        zeroed = _call(g, "zero_", a)
        copied = _call(g, "copy_", b, _call(g, "add", zeroed, 1.0))
        return [copied]

    gm = _graph(build)
    new, extra = functionalize(gm, [])
    assert extra == []
    ops = [n.target.name for n in new.graph.nodes if n.op == "call_function"]
    assert ops == ["zeros_like", "add", "clone", "copy_", "copy_"]
    a, b = gm.get_attribute("a"), gm.get_attribute("b")
    (returned,) = new.forward()
    assert returned is b
    np.testing.assert_array_equal(a.numpy(), np.zeros(4))
    np.testing.assert_array_equal(b.numpy(), np.ones(4))
