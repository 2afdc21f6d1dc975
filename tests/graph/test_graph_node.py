"""Node basics: names, use lists, rewiring, moving and erasing."""
import operator

import pytest

from dynamo_lite.graph import Graph, LintError
from dynamo_lite.graph.namespace import Namespace, sanitize


def chain():
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(operator.neg, (x,))
    b = g.call_function(operator.add, (a, x))
    g.output(b)
    return g, x, a, b


def test_namespace_never_reuses_a_name():
    ns = Namespace()
    assert [ns.create_name("add") for _ in range(3)] == ["add", "add_1", "add_2"]
    assert ns.create_name("add_1") == "add_3"
    assert ns.create_name("mul_7") == "mul_7"
    assert ns.create_name("mul_7") == "mul_1"  # the first free suffix of the base
    assert "mul_7" in ns and "mul_2" not in ns


@pytest.mark.parametrize("candidate, expected", [
    ("layer.0.weight", "layer_0_weight"), ("0x", "_0x"), ("a-b c", "a_b_c"), ("", "_"),
])
def test_sanitize(candidate, expected):
    assert sanitize(candidate) == expected


@pytest.mark.parametrize("wanted", ["lambda", "sum", "float", "forward", "class", "None"])
def test_node_names_avoid_keywords_builtins_and_forward(wanted):
    g = Graph()
    node = g.placeholder(wanted)
    assert node.name != wanted and node.name.startswith(wanted)
    assert node.target == wanted


def test_erased_names_are_not_reused():
    g, x, a, b = chain()
    c = g.call_function(operator.mul, (b, 2))
    g.output_node.args = (c,)
    g.output_node.args = (b,)
    g.erase_node(c)
    again = g.call_function(operator.mul, (b, 2))
    assert again.name == "mul_1"


def test_users_follow_argument_edits():
    g, x, a, b = chain()
    assert list(x.users) == [a, b] and list(a.users) == [b]
    b.args = (x, x)
    assert list(a.users) == [] and list(x.users) == [a, b]
    b.kwargs = {"other": a}
    assert list(a.users) == [b]
    b.update_arg(0, a)
    assert b.all_input_nodes == [a, x]
    b.update_kwarg("other", 3)
    assert b.kwargs == {"other": 3}
    g.lint()


def test_nested_arguments_are_tracked():
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    n = g.call_function(max, ([x, (y, {"k": x})],), {"key": slice(None, y)})
    assert n.all_input_nodes == [x, y]
    assert list(y.users) == [n]
    g.output(n)
    g.lint()


def test_replace_all_uses_with():
    g, x, a, b = chain()
    m = g.call_function(operator.pos, (x,))
    m.prepend(m)  # no-op
    a.append(m)
    changed = a.replace_all_uses_with(m)
    assert changed == [b] and b.args == (m, x) and not a.users
    g.erase_node(a)
    g.lint()
    assert [n.name for n in g.nodes] == ["x", "pos", "add", "output"]


def test_replace_all_uses_with_filter_constant_and_meta():
    g, x, a, b = chain()
    c = g.call_function(operator.mul, (a, 3))
    g.output_node.args = ((b, c),)
    a.meta["val"] = "meta-of-a"
    y = g.placeholder("y")
    assert a.replace_all_uses_with(y, lambda user: user is c, propagate_meta=True) == [c]
    assert c.args == (y, 3) and b.args == (a, x) and y.meta["val"] == "meta-of-a"
    a.replace_all_uses_with(7)
    assert b.args == (7, x)
    g.lint()


def test_arguments_from_another_graph_are_refused():
    g1, x1, _, _ = chain()
    g2, _, a2, _ = chain()
    with pytest.raises(ValueError, match="another graph"):
        g2.call_function(operator.neg, (x1,))
    with pytest.raises(ValueError, match="another graph"):
        a2.replace_all_uses_with(x1)


def test_prepend_append_move_nodes():
    g = Graph()
    x = g.placeholder("x")
    nodes = [g.call_function(operator.neg, (x,)) for _ in range(3)]
    g.output(tuple(nodes))
    n0, n1, n2 = nodes
    n0.prepend(n2)
    assert [n.name for n in g.nodes] == ["x", "neg_2", "neg", "neg_1", "output"]
    n1.append(n2)
    assert [n.name for n in g.nodes] == ["x", "neg", "neg_1", "neg_2", "output"]
    assert n2.prev is n1 and n1.next is n2
    g.lint()
    x.prepend(n0)  # now before its input: lint must say so
    with pytest.raises(LintError, match="before it is defined"):
        g.lint()


def test_erase_node_refuses_nodes_with_users():
    g, x, a, b = chain()
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(a)
    b.args = (x, x)
    g.erase_node(a)
    assert not any(n is a for n in g.nodes) and len(g.nodes) == 3
    assert list(x.users) == [b]
    with pytest.raises(RuntimeError, match="not a live node"):
        g.erase_node(a)
    with pytest.raises(ValueError, match="was erased"):
        b.prepend(a)
    g.lint()


def test_erasing_while_iterating_visits_every_other_node():
    g = Graph()
    x = g.placeholder("x")
    nodes = [g.call_function(operator.neg, (x,)) for _ in range(5)]
    visited = []
    for node in g.nodes:
        visited.append(node.name)
        if node.op == "call_function":
            g.erase_node(node)
    assert visited == ["x"] + [n.name for n in nodes]
    assert [n.name for n in g.nodes] == ["x"]
    assert [n.name for n in reversed(g.nodes)] == ["x"]
    g.lint()


def test_format_node_and_repr():
    g, x, a, b = chain()
    b.kwargs = {"alpha": 2.5}
    assert repr(a) == "neg"
    assert a.format_node() == "%neg : [users=1] = call_function[target=operator.neg](args = (%x,))"
    assert b.format_node() == (
        "%add : [users=1] = call_function[target=operator.add](args = (%neg, %x), kwargs = {alpha: 2.5})"
    )
    assert x.format_node() == "%x : [users=2] = placeholder[target=x]"
    assert g.output_node.format_node() == "return add"


def test_unknown_ir_op_is_refused():
    g = Graph()
    with pytest.raises(ValueError, match="unknown IR op"):
        g.create_node("call_thing", operator.neg)
