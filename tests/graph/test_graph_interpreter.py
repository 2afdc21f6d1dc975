"""Interpreter and ShapeProp: node-by-node execution and meta propagation."""
import operator

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import ops
from dynamo_lite.graph import Graph, GraphModule, Interpreter, ShapeProp
from dynamo_lite.ops.core.registry import Op
from dynamo_lite.tensor.meta import TensorMeta
from dynamo_lite.tensor.tensor import from_array


def tensor(*shape, seed=0, dtype=np.float32):
    return from_array(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


# An unregistered op with a tuple result, to exercise getitem on tuple-valued nodes.
halves = Op(
    "halves_for_test",
    meta=lambda x: (TensorMeta(x.shape, x.dtype), TensorMeta(x.shape, x.dtype)),
    kernel=lambda xp, x, *, out: (x / 2, x / 2),
)


def mixed_graph():
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    w = g.get_attr("w")
    a = g.call_function(ops.add, (x, w), {"alpha": 2})
    t = g.call_function(ops.transpose, (a, 0, 1))
    m = g.call_function(ops.mul, (t, y))
    r = g.call_method("relu", (m,))
    pair = g.call_function(halves, (r,))
    first = g.call_function(operator.getitem, (pair, 0))
    second = g.call_function(operator.getitem, (pair, 1))
    e = g.call_function(ops.exp, (second,))
    g.output({"first": first, "e": e, "t": t})
    return g


def eager_mixed(x, y, w):
    t = ops.transpose(ops.add(x, w, alpha=2), 0, 1)
    first, second = halves(ops.mul(t, y).relu())
    return {"first": first, "e": ops.exp(second), "t": t}


class Recorder(Interpreter):
    """Keeps every value so tests can compare it with the node's meta."""

    def run_node(self, node):
        value = super().run_node(node)
        self.values[node] = value
        return value

    def run(self, *args, **kwargs):
        self.values = {}
        return super().run(*args, **kwargs)


def test_interpreter_gm_and_eager_agree():
    w = tensor(2, 3, seed=2)
    gm = GraphModule({"w": w}, mixed_graph())
    x, y = tensor(2, 3), tensor(2, seed=1)
    expected = eager_mixed(x, y, w)
    for got in (gm(x, y), Interpreter(gm).run(x, y), Interpreter(gm, garbage_collect_values=False).run(x, y)):
        assert got.keys() == expected.keys()
        for key in expected:
            np.testing.assert_allclose(got[key].numpy(), expected[key].numpy())
            assert got[key].stride() == expected[key].stride()


def test_shape_prop_matches_what_eager_produces():
    w = tensor(2, 3, seed=2)
    gm = GraphModule({"w": w}, mixed_graph())
    x, y = tensor(2, 3), tensor(2, seed=1)
    out = ShapeProp(gm).propagate(x, TensorMeta.of(y))
    recorder = Recorder(gm)
    recorder.run(x, y)
    for node, value in recorder.values.items():
        if node.op == "output":
            continue
        expected = tuple(map(TensorMeta.of, value)) if isinstance(value, tuple) else TensorMeta.of(value)
        assert node.meta["val"] == expected, node.name
    assert out["t"] == TensorMeta((3, 2), dl.float32, strides=(1, 3))


def test_shape_prop_python_values_and_fallbacks():
    g = Graph()
    x = g.placeholder("x")
    n = g.placeholder("n")
    doubled = g.call_function(operator.mul, (n, 2))        # plain Python: evaluated
    shape = g.call_method("size", (x,))                    # not an op: needs a known meta
    unknown = g.call_function(np.negative, (x,))           # no meta rule: needs a known meta
    g.output((doubled, shape, unknown))
    gm = GraphModule(None, g)
    with pytest.raises(RuntimeError, match="cannot infer the output of call_method size"):
        ShapeProp(gm).propagate(TensorMeta((2,), dl.float32), 3)
    shape.meta["val"] = (2,)
    unknown.meta["val"] = TensorMeta((2,), dl.float32)
    result = ShapeProp(gm).propagate(TensorMeta((2,), dl.float32), 3)
    assert result == (6, (2,), TensorMeta((2,), dl.float32)) and doubled.meta["val"] == 6


def test_shape_prop_call_module_needs_a_known_meta():
    g = Graph()
    g.output(g.call_module("layer", (g.placeholder("x"),)))
    gm = GraphModule({"layer": lambda v: v}, g)
    with pytest.raises(RuntimeError, match="call_module 'layer'"):
        ShapeProp(gm).propagate(tensor(2))


def test_shape_prop_raises_what_the_meta_rule_raises():
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    g.output(g.call_function(ops.add, (x, y)))
    with pytest.raises(RuntimeError, match="must match") as info:
        ShapeProp(GraphModule(None, g)).propagate(TensorMeta((2,), dl.float32), TensorMeta((3,), dl.float32))
    assert any("While executing %add" in note for note in info.value.__notes__)


def test_overriding_one_method_per_op():
    class Negating(Interpreter):
        def call_function(self, target, args, kwargs):
            result = super().call_function(target, args, kwargs)
            return ops.neg(result) if target is ops.add else result

        def placeholder(self, target, args, kwargs):
            self.names.append(target)
            return super().placeholder(target, args, kwargs)

    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(ops.add, (x, 1)))
    interp = Negating(GraphModule(None, g))
    interp.names = []
    np.testing.assert_array_equal(interp.run(tensor(3)).numpy(), -(tensor(3).numpy() + 1))
    assert interp.names == ["x"]


def test_arity_errors_match_the_compiled_function():
    g = Graph()
    for name in ("a", "b", "c"):
        g.placeholder(name)
    g.output(None)
    gm = GraphModule(None, g)
    for args in [(1,), (1, 2), (), (1, 2, 3, 4)]:
        with pytest.raises(TypeError) as compiled:
            gm(*args)
        with pytest.raises(TypeError) as interpreted:
            Interpreter(gm).run(*args)
        assert str(interpreted.value) == str(compiled.value)


def test_initial_env_and_bare_graphs():
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.add, (x, 1))
    g.output(g.call_function(operator.mul, (a, 10)))
    assert Interpreter(g).run(2) == 30
    assert Interpreter(g).run(2, initial_env={a: 5}) == 50  # a is not recomputed
    assert Interpreter(g).run(initial_env={x: 3}) == 40
    g2 = Graph()
    g2.output(g2.get_attr("w"))
    with pytest.raises(AttributeError, match="bare Graph"):
        Interpreter(g2).run()
