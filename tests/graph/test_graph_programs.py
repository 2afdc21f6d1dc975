"""Random programs: GraphModule, Interpreter and every pass agree with eager execution."""
import numpy as np
from hypothesis import given, settings, strategies as st

from dynamo_lite import ops
from dynamo_lite.graph import Graph, GraphModule, Interpreter, ShapeProp
from dynamo_lite.graph.passes import eliminate_common_subexpressions, eliminate_dead_code, fold_constants
from dynamo_lite.tensor.tensor import from_array

UNARY = [ops.neg, ops.relu, ops.exp, ops.sigmoid, ops.abs]
BINARY = [ops.add, ops.mul, ops.sub, ops.maximum]
INPUT_SHAPES = [(2, 3), (3,)]
ATTRIBUTE_SHAPES = {"w": (2, 3), "b": (3,)}


def make(shape, seed):
    return from_array(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def fresh_inputs():
    return [make(s, n) for n, s in enumerate(INPUT_SHAPES)]


def fresh_attributes():
    return {name: make(s, 10 + n) for n, (name, s) in enumerate(ATTRIBUTE_SHAPES.items())}


step = st.tuples(st.sampled_from(["unary", "binary", "inplace", "scalar", "view"]),
                 st.integers(0, 99), st.integers(0, 99), st.integers(0, 9))


def build(steps):
    """The graph of ``steps`` and the same program as an eager function."""
    g = Graph()
    values = [g.placeholder(f"x{i}") for i in range(len(INPUT_SHAPES))]
    values += [g.get_attr(name) for name in ATTRIBUTE_SHAPES]
    program = []
    for kind, i, j, k in steps:
        a, b = i % len(values), j % len(values)
        if kind == "unary":
            fn, args = UNARY[k % len(UNARY)], (a,)
        elif kind == "binary":
            fn, args = BINARY[k % len(BINARY)], (a, b)
        elif kind == "inplace":
            fn, args = ops.mul_, (a, 0.5)
        elif kind == "scalar":
            fn, args = ops.add, (a, float(k))
        else:
            fn, args = ops.unsqueeze, (a, 0)
        node_args = _node_args(fn, args, values)
        values.append(g.call_function(fn, node_args))
        program.append((fn, args))
    g.output(tuple(values[len(INPUT_SHAPES) + len(ATTRIBUTE_SHAPES):]))

    def eager(inputs, attributes):
        env = list(inputs) + [attributes[name] for name in ATTRIBUTE_SHAPES]
        for fn, args in program:
            env.append(fn(*_eager_args(fn, args, env)))
        return tuple(env[len(INPUT_SHAPES) + len(ATTRIBUTE_SHAPES):])

    return g, eager


def _node_args(fn, args, values):
    if fn in (ops.mul_, ops.add, ops.unsqueeze):
        return (values[args[0]], args[1])
    return tuple(values[a] for a in args)


def _eager_args(fn, args, env):
    if fn in (ops.mul_, ops.add, ops.unsqueeze):
        return (env[args[0]], args[1])
    return tuple(env[a] for a in args)


def assert_same_values(got, expected):
    assert len(got) == len(expected)
    for g_, e in zip(got, expected):
        np.testing.assert_allclose(g_.numpy(), e.numpy(), rtol=1e-6, atol=1e-6)
        assert g_.shape == e.shape and g_.dtype == e.dtype and g_.stride() == e.stride()


@settings(max_examples=40, deadline=None)
@given(st.lists(step, min_size=1, max_size=12))
def test_graph_module_interpreter_and_passes_agree_with_eager(steps):
    g, eager = build(steps)
    try:
        expected = eager(fresh_inputs(), fresh_attributes())
    except RuntimeError:  # shapes that do not broadcast, an in-place op that would resize
        return
    g.lint()
    gm = GraphModule(fresh_attributes(), g)
    assert_same_values(gm(*fresh_inputs()), expected)
    assert_same_values(Interpreter(GraphModule(fresh_attributes(), g)).run(*fresh_inputs()), expected)
    ShapeProp(GraphModule(fresh_attributes(), g)).propagate(*fresh_inputs())
    for run_pass in (eliminate_common_subexpressions, eliminate_dead_code, fold_constants):
        gm = GraphModule(fresh_attributes(), g)
        run_pass(gm)
        g.lint()
        assert_same_values(gm(*fresh_inputs()), expected)
        for name, value in fresh_attributes().items():  # undo in-place ops on attributes
            gm.set_attribute(name, value)
        assert_same_values(Interpreter(gm).run(*fresh_inputs()), expected)
