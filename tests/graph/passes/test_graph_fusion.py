"""Pointwise-fusion partitioning: group shapes, boundaries, cycles, barriers, schedules."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dynamo_lite as dl
from dynamo_lite import ops
from dynamo_lite.graph import Graph, GraphModule, ShapeProp
from dynamo_lite.graph.node import map_arg
from dynamo_lite.graph.passes import FusionGroup, fusion_schedule, partition_pointwise
from dynamo_lite.graph.passes.fusion import is_fusible
from dynamo_lite.tensor.tensor import from_array


def tensor(*shape, seed=0):
    return from_array(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def partition(g, *inputs, **kwargs):
    gm = GraphModule(None, g)
    ShapeProp(gm).propagate(*inputs)
    groups = partition_pointwise(g, **kwargs)
    check_partition(g, groups)
    return gm, groups


def names(group):
    return [n.name for n in group.nodes]


def check_partition(graph, groups):
    """Every invariant the backends rely on, checked by brute force."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    barriers = [order[n] for n in graph.nodes if n.op not in ("placeholder", "output") and n.is_impure()]
    owner = {}
    for group in groups:
        members = set(group.nodes)
        assert group.nodes == sorted(group.nodes, key=order.__getitem__)
        for node in group.nodes:
            assert node not in owner and is_fusible(node)
            owner[node] = group
            assert tuple(node.meta["val"].shape) == group.shape
        for node in group.inputs:  # external inputs broadcast to the group's shape
            assert node not in members
            shape = node.meta["val"].shape if hasattr(node.meta.get("val"), "shape") else ()
            assert np.broadcast_shapes(tuple(shape), group.shape) == group.shape
        expected_inputs = {a for n in group.nodes for a in n.all_input_nodes if a not in members}
        assert set(group.inputs) == expected_inputs
        assert group.outputs == [n for n in group.nodes if any(u not in members for u in n.users)]
        # Acyclic: leaving the group never leads back into it.
        for node in group.nodes:
            for user in node.users:
                assert user in members or not _path_back(user, members)
        # No impure node lies strictly between two members.
        first, last = order[group.nodes[0]], order[group.nodes[-1]]
        assert not any(first < b < last for b in barriers)
    schedule = fusion_schedule(graph, groups)
    covered = [n for item in schedule for n in (item.nodes if isinstance(item, FusionGroup) else [item])]
    assert sorted(covered, key=order.__getitem__) == list(graph.nodes)


def _path_back(start, members):
    stack, seen = [start], set()
    while stack:
        node = stack.pop()
        if node in members:
            return True
        if node in seen:
            continue
        seen.add(node)
        stack.extend(node.users)
    return False


def run_schedule(gm, schedule, *inputs):
    """Evaluate the graph in schedule order; fails if an item reads something not yet computed."""
    env, args = {}, iter(inputs)
    for item in schedule:
        for node in item.nodes if isinstance(item, FusionGroup) else [item]:
            a, k = map_arg(node.args, env.__getitem__), map_arg(node.kwargs, env.__getitem__)
            if node.op == "placeholder":
                env[node] = next(args)
            elif node.op == "output":
                return a[0]
            elif node.op == "call_function":
                env[node] = node.target(*a, **k)
            else:
                raise AssertionError(node.op)
    raise AssertionError("no output")


# -- focused cases -------------------------------------------------------------------------
def test_a_chain_is_one_group():
    g = Graph()
    x = g.placeholder("x")
    e = g.call_function(ops.exp, (g.call_function(ops.relu, (g.call_function(ops.add, (g.call_function(ops.mul, (x, 2)), 1)),)),))
    g.output(e)
    _, groups = partition(g, tensor(2, 3))
    assert len(groups) == 1 and names(groups[0]) == ["mul", "add", "relu", "exp"]
    assert groups[0].inputs == [x] and groups[0].outputs == [e] and groups[0].shape == (2, 3)
    assert groups[0].device == dl.device("cpu")


def test_a_diamond_with_multiple_outputs_is_one_group():
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(ops.add, (x, 1))
    b = g.call_function(ops.mul, (x, 2))
    c = g.call_function(ops.mul, (a, b))
    d = g.call_function(ops.relu, (c,))
    g.output((d, a))
    gm, groups = partition(g, tensor(4))
    assert [names(gr) for gr in groups] == [["add", "mul", "mul_1", "relu"]]
    assert groups[0].outputs == [a, d]
    out = run_schedule(gm, fusion_schedule(g, groups), tensor(4))
    np.testing.assert_array_equal(out[0].numpy(), gm(tensor(4))[0].numpy())


def test_broadcast_inputs_join_only_when_the_output_shape_matches():
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    small = g.call_function(ops.mul, (y, 2))          # (3,)
    big = g.call_function(ops.add, (x, y))            # (2, 3)
    both = g.call_function(ops.mul, (big, small))     # (2, 3): small is a broadcast input
    g.output(both)
    _, groups = partition(g, tensor(2, 3), tensor(3))
    assert [(names(gr), gr.shape) for gr in groups] == [(["mul"], (3,)), (["add", "mul_1"], (2, 3))]
    assert groups[1].inputs == [x, y, small]
    assert [names(gr) for gr in partition_pointwise(g, include_singletons=False)] == [["add", "mul_1"]]


def test_reductions_and_order_changing_views_are_boundaries(registry_call):
    sum_op, _, sum_kwargs = registry_call(dl.sum, tensor(2, 3), 1, keepdim=True)
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(ops.mul, (x, 2))
    s = g.call_function(sum_op, (a,), sum_kwargs)
    centered = g.call_function(ops.sub, (a, s))       # a -> sum -> sub: a cycle if merged
    t = g.call_function(ops.transpose, (centered, 0, 1))
    b = g.call_function(ops.exp, (t,))
    c = g.call_function(ops.add, (b, 1))
    g.output(c)
    gm, groups = partition(g, tensor(2, 3))
    assert [names(gr) for gr in groups] == [["mul"], ["sub"], ["exp", "add"]]
    assert [gr.shape for gr in groups] == [(2, 3), (2, 3), (3, 2)]
    assert [names(gr) for gr in partition_pointwise(g, include_singletons=False)] == [["exp", "add"]]
    np.testing.assert_allclose(run_schedule(gm, fusion_schedule(g, groups), tensor(2, 3)).numpy(),
                               gm(tensor(2, 3)).numpy())


def test_matmul_is_a_boundary():
    matmul = ops.matmul
    g = Graph()
    x, w = g.placeholder("x"), g.placeholder("w")
    a = g.call_function(ops.relu, (x,))
    m = g.call_function(matmul, (a, w))
    g.output(g.call_function(ops.add, (m, a)))
    _, groups = partition(g, tensor(3, 3), tensor(3, 3, seed=1))
    assert [names(gr) for gr in groups] == [["relu"], ["add"]]


def test_merging_two_producer_groups_must_not_create_a_cycle(registry_call):
    sum_op, _, sum_kwargs = registry_call(dl.sum, tensor(2, 3), 1, keepdim=True)
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    a = g.call_function(ops.add, (x, 1))               # group A
    b = g.call_function(ops.add, (y, 1))               # group B
    o = g.call_function(sum_op, (a,), sum_kwargs)      # outside, depends on A
    c = g.call_function(ops.mul, (b, o))               # joins B
    d = g.call_function(ops.add, (a, c))               # A and B together would be a cycle
    g.output(d)
    gm, groups = partition(g, tensor(2, 3), tensor(2, 3, seed=1))
    assert [names(gr) for gr in groups] == [["add"], ["add_1", "mul", "add_2"]]
    inputs = (tensor(2, 3), tensor(2, 3, seed=1))
    np.testing.assert_allclose(run_schedule(gm, fusion_schedule(g, groups), *inputs).numpy(), gm(*inputs).numpy())


def test_impure_nodes_split_groups_and_keep_their_place(registry_call):
    rand_like, _, rand_kwargs = registry_call(dl.rand_like, tensor(3))
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(ops.add, (x, 1))
    g.call_function(ops.add_, (x, 1))
    b = g.call_function(ops.mul, (a, x))               # reads x after the mutation
    r = g.call_function(rand_like, (x,), rand_kwargs)
    c = g.call_function(ops.add, (b, r))
    g.output(c)
    gm, groups = partition(g, tensor(3))
    assert [names(gr) for gr in groups] == [["add"], ["mul"], ["add_1"]]
    schedule = fusion_schedule(g, groups)
    assert [getattr(i, "name", None) or names(i) for i in schedule] == [
        "x", ["add"], "add_", ["mul"], "rand_like", ["add_1"], "output"]


def test_nodes_without_meta_or_in_place_or_non_op_targets_are_not_fused():
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(ops.neg, (x,))
    b = g.call_function(np.negative, (a,))
    c = g.call_method("relu", (b,))
    g.output(c)
    assert partition_pointwise(g) == []                # no meta["val"] yet
    a.meta["val"] = dl.TensorMeta((3,), dl.float32)
    assert [names(gr) for gr in partition_pointwise(g)] == [["neg"]]


def test_schedule_rejects_groups_that_form_a_cycle(registry_call):
    sum_op, _, sum_kwargs = registry_call(dl.sum, tensor(2, 3), 1, keepdim=True)
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(ops.mul, (x, 2))
    s = g.call_function(sum_op, (a,), sum_kwargs)
    b = g.call_function(ops.sub, (a, s))
    g.output(b)
    with pytest.raises(ValueError, match="cycle"):
        fusion_schedule(g, [FusionGroup([a, b], [x, s], [b], (2, 3))])


# -- random programs -----------------------------------------------------------------------
UNARY = [ops.neg, ops.relu, ops.exp, ops.sigmoid]
BINARY = [ops.add, ops.mul, ops.sub, ops.maximum]
SHAPES = [(2, 3), (3,), (1, 3), (2, 1)]


@st.composite
def programs(draw):
    steps = draw(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 99), st.integers(0, 99), st.integers(0, 3)),
                          min_size=1, max_size=14))
    return steps


@settings(max_examples=40, deadline=None)
@given(programs())
def test_random_programs_partition_validly_and_schedules_compute_the_same(registry_call, steps):
    sum_op, _, sum_kwargs = registry_call(dl.sum, tensor(2, 3), 0, keepdim=True)  # valid for any ndim
    g = Graph()
    values = [g.placeholder(f"x{i}") for i in range(len(SHAPES))]
    for kind, i, j, k in steps:
        a, b = values[i % len(values)], values[j % len(values)]
        if kind <= 1:
            node = g.call_function(UNARY[k], (a,))
        elif kind <= 3:
            node = g.call_function(BINARY[k], (a, b))
        elif kind == 4:
            node = g.call_function(sum_op, (a,), sum_kwargs) if k % 2 else g.call_function(ops.transpose, (a, 0, -1))
        else:
            node = g.call_function(ops.add_, (a, 0.5)) if k == 0 else g.call_function(ops.mul, (a, 0.5))
        values.append(node)
    g.output(tuple(values[len(SHAPES):]))
    inputs = [tensor(*s, seed=n) for n, s in enumerate(SHAPES)]
    try:
        gm, groups = partition(g, *inputs)
    except (RuntimeError, IndexError):  # shapes that do not broadcast, bad dims: not a program
        return
    fresh = lambda: [tensor(*s, seed=n) for n, s in enumerate(SHAPES)]  # noqa: E731
    expected = gm(*fresh())
    got = run_schedule(gm, fusion_schedule(g, groups), *fresh())
    for e, o in zip(expected, got):
        np.testing.assert_allclose(o.numpy(), e.numpy(), rtol=1e-6)
