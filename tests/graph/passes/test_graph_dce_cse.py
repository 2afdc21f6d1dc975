"""Dead-code and common-subexpression elimination: focused graphs, eager as the oracle."""
import operator

import numpy as np

import dynamo_lite as dl
from dynamo_lite import ops
from dynamo_lite.graph import Graph, GraphModule
from dynamo_lite.graph.passes import eliminate_common_subexpressions, eliminate_dead_code
from dynamo_lite.tensor.tensor import from_array


def tensor(*shape, seed=0):
    return from_array(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def call_names(graph):
    return [n.name for n in graph.nodes if n.op.startswith("call")]


def assert_same_outputs(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same_outputs(x, y)
    else:
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def run_twice(gm, make_inputs):
    """Run on fresh inputs (in-place ops mutate them) and return the results."""
    return gm(*make_inputs())


# -- dead code -----------------------------------------------------------------------------
def test_dce_multiple_outputs_in_place_and_random_nodes_stay(registry_call):
    rand_like, _, rand_kwargs = registry_call(dl.rand_like, tensor(3))
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    dead = g.call_function(ops.mul, (x, 2))
    g.call_function(ops.exp, (dead,))
    g.call_function(ops.add_, (y, 1))              # mutates an input: must stay
    g.call_function(rand_like, (x,), rand_kwargs)  # advances the generator: must stay
    g.call_method("relu", (x,))                    # pure method: goes
    g.call_method("mul_", (x, 3))                  # in-place method: stays
    a = g.call_function(ops.add, (x, y))
    b = g.call_function(ops.neg, (a,))
    g.output((a, b, x))
    gm = GraphModule(None, g)
    make = lambda: (tensor(3), tensor(3, seed=1))  # noqa: E731
    before = run_twice(gm, make)
    assert eliminate_dead_code(gm)
    g.lint()
    assert call_names(g) == ["add_", "rand_like", "mul_", "add", "neg"]
    assert "mul = " not in gm.code and "ops_rand_like(x, " in gm.code  # recompiled
    assert_same_outputs(run_twice(gm, make), before)
    assert not eliminate_dead_code(gm)


def test_dce_can_drop_unused_attributes():
    g = Graph()
    x = g.placeholder("x")
    g.call_function(ops.mul, (x, g.get_attr("w")))
    g.output(x)
    gm = GraphModule({"w": tensor(1), "kept": 1}, g)
    eliminate_dead_code(gm, delete_unused_attributes=True)
    assert dict(gm.attributes) == {} and [n.op for n in g.nodes] == ["placeholder", "output"]
    g.lint()


def test_dce_on_a_bare_graph():
    g = Graph()
    x = g.placeholder("x")
    g.call_function(operator.neg, (x,))
    g.output(x)
    assert eliminate_dead_code(g) and len(g.nodes) == 2


# -- common subexpressions -----------------------------------------------------------------
def test_cse_merges_shared_subexpressions_transitively():
    g = Graph()
    x = g.placeholder("x")
    r1 = g.call_function(ops.relu, (g.call_function(ops.mul, (x, 2)),))
    r2 = g.call_function(ops.relu, (g.call_function(ops.mul, (x, 2)),))
    s = g.call_function(ops.add, (r1, r2), {"alpha": 2})
    s2 = g.call_function(ops.add, (r1, r2), {"alpha": 2})
    m1, m2 = g.call_method("exp", (s,)), g.call_method("exp", (s2,))
    g.output((m1, m2, s2))
    gm = GraphModule(None, g)
    x_val = tensor(4)
    before = gm(x_val)
    assert eliminate_common_subexpressions(gm) == 4
    g.lint()
    assert call_names(g) == ["mul", "relu", "add", "exp"]
    assert g.output_node.args[0] == (m1, m1, s)
    assert_same_outputs(gm(x_val), before)


def test_cse_keeps_constants_of_different_types_apart():
    g = Graph()
    x = g.placeholder("x")
    outs = [g.call_function(ops.mul, (x, c)) for c in (1, 1.0, True, 0.0, -0.0, 1)]
    outs += [g.call_function(ops.add, (x, x), {"alpha": 2}), g.call_function(ops.add, (x, x), {"alpha": 2.0})]
    g.output(tuple(outs))
    assert eliminate_common_subexpressions(g) == 1  # only the second mul(x, 1)
    assert g.output_node.args[0][5] is outs[0]
    g.lint()


def test_cse_kwargs_order_and_get_attr():
    g = Graph()
    w1, w2 = g.get_attr("w"), g.get_attr("w")
    a = g.call_function(ops.add, (w1, w2), {"alpha": 2, "out_dtype": None})
    b = g.call_function(ops.add, (w2, w2), {"out_dtype": None, "alpha": 2})
    g.output((a, b))
    assert eliminate_common_subexpressions(g) == 2
    assert [n.name for n in g.nodes] == ["w", "add", "output"] and g.output_node.args[0] == (a, a)


def test_cse_never_merges_random_or_in_place_ops(registry_call):
    rand_like, _, rand_kwargs = registry_call(dl.rand_like, tensor(3))
    g = Graph()
    x = g.placeholder("x")
    r1, r2 = g.call_function(rand_like, (x,), rand_kwargs), g.call_function(rand_like, (x,), rand_kwargs)
    i1, i2 = g.call_function(ops.add_, (x, 1)), g.call_function(ops.add_, (x, 1))
    g.output((r1, r2, i1, i2))
    assert eliminate_common_subexpressions(g) == 0


def test_cse_does_not_merge_across_a_mutation_even_through_a_view():
    g = Graph()
    x = g.placeholder("x")
    v = g.call_function(ops.transpose, (x, 0, 1))
    before = g.call_function(ops.mul, (v, 2))
    g.call_function(ops.add_, (x, 1))              # changes what v shows
    after = g.call_function(ops.mul, (v, 2))
    v_again = g.call_function(ops.transpose, (x, 0, 1))
    g.output((before, after, v_again))
    gm = GraphModule(None, g)
    make = lambda: (tensor(2, 3),)  # noqa: E731
    expected = run_twice(gm, make)
    assert eliminate_common_subexpressions(gm) == 0
    assert_same_outputs(run_twice(gm, make), expected)
    assert not np.array_equal(expected[0].numpy(), expected[1].numpy())


def test_cse_after_the_mutation_still_merges_later_duplicates():
    g = Graph()
    x = g.placeholder("x")
    g.call_function(ops.add_, (x, 1))
    a, b = g.call_function(ops.neg, (x,)), g.call_function(ops.neg, (x,))
    g.output((a, b))
    assert eliminate_common_subexpressions(g) == 1
    g.lint()
    assert dl.float32 is not None


def test_cse_never_merges_a_value_that_is_written_into_later():
    g = Graph()
    x = g.placeholder("x")
    a, b = g.call_function(ops.neg, (x,)), g.call_function(ops.neg, (x,))
    c, d = g.call_function(ops.exp, (x,)), g.call_function(ops.exp, (x,))
    view = g.call_function(ops.unsqueeze, (d, 0))
    g.call_function(ops.mul_, (a, 0.5))           # a is written into: b must stay its own buffer
    g.call_method("add_", (view, 1))              # d is written into through a view
    g.output((a, b, c, d))
    gm = GraphModule(None, g)
    x_val = tensor(3)
    expected = gm(x_val)
    assert eliminate_common_subexpressions(gm) == 0
    assert_same_outputs(gm(x_val), expected)
    np.testing.assert_array_equal(expected[0].numpy(), expected[1].numpy() * 0.5)
    np.testing.assert_allclose(expected[3].numpy(), expected[2].numpy() + 1)
