"""Constant folding: pure subgraphs without placeholder inputs are evaluated once."""
import operator

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import ops
from dynamo_lite.graph import Graph, GraphModule, ShapeProp
from dynamo_lite.graph.passes import fold_constants
from dynamo_lite.tensor.tensor import from_array


def tensor(*shape, seed=0):
    return from_array(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def ops_used(graph):
    return [n.target.name for n in graph.nodes if n.op == "call_function" and hasattr(n.target, "name")]


def test_folds_the_weight_preprocessing_chain():
    w = tensor(3, 2, seed=1)
    g = Graph()
    x = g.placeholder("x")
    wt = g.call_function(ops.transpose, (g.get_attr("w"), 0, 1))
    scaled = g.call_function(ops.mul, (wt, 2))
    shifted = g.call_function(ops.add, (scaled, 1))
    y = g.call_function(ops.mul, (x, shifted))
    g.output((y, scaled))                       # an interior constant is also an output
    gm = GraphModule({"w": w}, g)
    x_val = tensor(2, 3)
    ShapeProp(gm).propagate(x_val)
    before = gm(x_val)
    result = fold_constants(gm)
    g.lint()
    assert result.attributes == ["_folded_mul", "_folded_add"] and result.inlined == 0
    assert result.sources == ["w"] and result.changed
    assert ops_used(g) == ["mul"] and [n.op for n in g.nodes].count("get_attr") == 2
    folded = g.find_nodes(op="get_attr", target="_folded_add")[0]
    # The meta is carried over and describes the stored value exactly (layout included).
    assert folded.meta["val"] == dl.TensorMeta((2, 3), dl.float32, strides=(1, 2))
    assert dl.TensorMeta.of(gm.attributes["_folded_add"]) == folded.meta["val"]
    after = gm(x_val)
    for a, b in zip(after, before):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(gm.attributes["_folded_add"].numpy(), w.numpy().T * 2 + 1)
    assert "w" in gm.attributes  # the source stays; callers may drop it
    assert gm.delete_unused_attributes() == ["w"]


def test_folds_factories_but_never_random_ops(registry_call):
    zeros, _, zeros_kwargs = registry_call(dl.zeros, 2, 3)
    rand, _, rand_kwargs = registry_call(dl.rand, 2, 3)
    g = Graph()
    x = g.placeholder("x")
    z = g.call_function(ops.add, (g.call_function(zeros, (), zeros_kwargs), 5))
    r = g.call_function(ops.mul, (g.call_function(rand, (), rand_kwargs), 0))
    g.output(g.call_function(ops.add, (g.call_function(ops.add, (x, z)), r)))
    gm = GraphModule(None, g)
    result = fold_constants(gm)
    g.lint()
    assert result.attributes == ["_folded_add"] and result.sources == []
    assert ops_used(g) == ["rand", "mul", "add", "add"]
    np.testing.assert_array_equal(gm(tensor(2, 3)).numpy(), tensor(2, 3).numpy() + 5)


def test_python_scalars_become_literals():
    g = Graph()
    x = g.placeholder("x")
    n = g.get_attr("n")
    scale = g.call_function(operator.mul, (n, 2))
    count = g.call_function(len, (g.get_attr("items"),))
    g.output(g.call_function(ops.mul, (x, g.call_function(operator.add, (scale, count)))))
    gm = GraphModule({"n": 3, "items": (1, 2, 3, 4)}, g)
    result = fold_constants(gm)
    g.lint()
    assert result.inlined == 1 and result.attributes == [] and result.sources == ["items", "n"]
    assert "mul_1 = ops_mul(x, 10)" in gm.code
    np.testing.assert_array_equal(gm(tensor(2)).numpy(), tensor(2).numpy() * 10)


def test_attributes_mutated_in_the_graph_are_not_constants():
    w = tensor(3)
    w0 = w.numpy().copy()
    g = Graph()
    x = g.placeholder("x")
    wa = g.get_attr("w")
    view = g.call_function(ops.transpose, (g.call_function(ops.unsqueeze, (wa, 0)), 0, 1))
    g.call_function(ops.add_, (view, 1))      # writes into w through a view, every call
    doubled = g.call_function(ops.mul, (wa, 2))
    other = g.call_function(ops.neg, (g.get_attr("v"),))
    g.output(g.call_function(ops.add, (g.call_function(ops.add, (x, doubled)), other)))
    gm = GraphModule({"w": w, "v": tensor(3, seed=4)}, g)
    result = fold_constants(gm)
    g.lint()
    assert result.attributes == ["_folded_neg"] and result.sources == ["v"]
    assert "mul" in ops_used(g)
    x_val, v_val = tensor(3).numpy(), tensor(3, seed=4).numpy()
    for step in (1, 2):
        np.testing.assert_allclose(gm(tensor(3)).numpy(), x_val + (w0 + step) * 2 - v_val, rtol=1e-6)


def test_a_constant_that_raises_is_left_for_run_time():
    g = Graph()
    x = g.placeholder("x")
    bad = g.call_function(ops.add, (g.get_attr("a"), g.get_attr("b")))
    g.output(g.call_function(ops.mul, (x, bad)))
    gm = GraphModule({"a": tensor(2), "b": tensor(3)}, g)
    result = fold_constants(gm)
    assert not result.changed and len(g.nodes) == 6
    with pytest.raises(RuntimeError, match="must match"):
        gm(tensor(2))


def test_nothing_to_fold():
    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(ops.neg, (x,)))
    gm = GraphModule(None, g)
    code = gm.code
    assert not fold_constants(gm).changed and gm.code == code


def test_a_constant_written_into_is_recomputed_on_every_call():
    w = tensor(3)
    g = Graph()
    x = g.placeholder("x")
    fresh = g.call_function(ops.mul, (g.get_attr("w"), 2))
    g.call_function(ops.add_, (g.call_function(ops.unsqueeze, (fresh, 0)), 1))
    g.output(g.call_function(ops.add, (x, fresh)))
    gm = GraphModule({"w": w}, g)
    result = fold_constants(gm)
    assert not result.changed  # folding would make the buffer grow by 1 on every call
    for _ in range(2):
        np.testing.assert_allclose(gm(tensor(3, seed=1)).numpy(), tensor(3, seed=1).numpy() + w.numpy() * 2 + 1)
    g.lint()
