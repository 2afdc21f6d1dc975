"""Graph building, insertion points, lint, copying, printing and dead-code elimination."""
import copy
import operator

import numpy as np
import pytest

from dynamo_lite.graph import Graph, GraphModule, LintError


def names(graph):
    return [n.name for n in graph.nodes]


def small_graph():
    g = Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    s = g.call_function(operator.add, (x, y))
    p = g.call_method("sum", (s,), {"axis": 0})
    g.output((s, p))
    return g


def test_default_insertion_goes_before_the_output_and_placeholders_stay_first():
    g = small_graph()
    late = g.call_function(operator.neg, (g.output_node.args[0][0],))
    z = g.placeholder("z")
    assert names(g) == ["x", "y", "z", "add", "sum_1", "neg", "output"]
    assert late.next is g.output_node and z.prev.name == "y"
    g.lint()


def test_inserting_before_and_after_keep_creation_order():
    g = small_graph()
    add = g.find_nodes(op="call_function", target=operator.add)[0]
    with g.inserting_after(add):
        a1 = g.call_function(operator.neg, (add,))
        a2 = g.call_function(operator.pos, (a1,))
    with g.inserting_before(add):
        b1 = g.call_function(operator.mul, (2, 3))
        b2 = g.call_function(operator.mul, (b1, 4))
        with g.inserting_after(None):  # nesting restores the outer point afterwards
            g.call_function(operator.truediv, (1, 2))
        b3 = g.call_function(operator.sub, (b2, 1))
    with g.inserting_before(None):  # the start of the body, after the placeholders
        first = g.get_attr("w")
    assert names(g) == ["x", "y", "w", "mul", "mul_1", "sub", "add", "neg", "pos", "sum_1", "output", "truediv"]
    assert (a2.prev, b3.next, first.next.name) == (a1, add, "mul")
    with pytest.raises(LintError, match="after the output"):
        g.lint()


def test_inserting_after_an_erased_cursor_continues_from_its_neighbour():
    g = small_graph()
    add = g.find_nodes(op="call_function", target=operator.add)[0]
    with g.inserting_after(add):
        tmp = g.call_function(operator.neg, (add,))
        g.erase_node(tmp)
        g.call_function(operator.pos, (add,))
    assert names(g) == ["x", "y", "add", "pos", "sum_1", "output"]


def test_one_output_only():
    g = small_graph()
    with pytest.raises(ValueError, match="already has an output"):
        g.output(None)


def test_str_golden():
    g = small_graph()
    g.get_attr("layer.weight")
    assert str(g) == (
        "graph():\n"
        "    %x : [users=1] = placeholder[target=x]\n"
        "    %y : [users=1] = placeholder[target=y]\n"
        "    %add : [users=2] = call_function[target=operator.add](args = (%x, %y))\n"
        "    %sum_1 : [users=1] = call_method[target=sum](args = (%add,), kwargs = {axis: 0})\n"
        "    %layer_weight : [users=0] = get_attr[target=layer.weight]\n"
        "    return (add, sum_1)"
    )


def test_deepcopy_is_independent_and_keeps_names():
    g = small_graph()
    g.find_nodes(op="call_function")[0].meta["val"] = "v"
    c = copy.deepcopy(g)
    c.lint()
    assert str(c) == str(g) and c.nodes is not g.nodes
    assert all(a is not b and a.graph is c for a, b in zip(c.nodes, g.nodes))
    assert c.find_nodes(op="call_function")[0].meta == {"val": "v"}
    c.find_nodes(op="call_function")[0].meta["val"] = "changed"
    assert g.find_nodes(op="call_function")[0].meta["val"] == "v"
    # The copy's namespace remembers every name ever handed out.
    erased = small_graph()
    n = erased.call_function(operator.neg, (erased.find_nodes(op="placeholder")[0],))
    erased.erase_node(n)
    assert erased.copy().call_function(operator.neg, (1,)).name == "neg_1"


def test_graph_copy_inlines_with_a_value_map():
    src = small_graph()
    dst = Graph()
    a, b = dst.placeholder("a"), dst.placeholder("b")
    x, y = src.find_nodes(op="placeholder")
    out = dst.graph_copy(src, {x: a, y: b})
    dst.output(out)
    dst.lint()
    gm = GraphModule(None, dst)
    s, p = gm(np.ones(3), np.arange(3.0))
    np.testing.assert_array_equal(s, [1, 2, 3])
    assert p == 6


def test_eliminate_dead_code_keeps_impure_nodes_and_outputs():
    g = Graph()
    x = g.placeholder("x")
    dead = g.call_function(operator.neg, (x,))
    g.call_function(operator.pos, (dead,))       # dead chain: both go
    g.call_method("fill_", (x, 0))               # in-place: stays
    g.call_function(print, (x,))                 # unknown callable: stays
    live = g.call_function(operator.abs, (x,))
    g.get_attr("unused")                         # pure: goes
    g.output((live, x))
    assert g.eliminate_dead_code()
    assert names(g) == ["x", "fill_", "print_1", "abs_1", "output"]
    assert not g.eliminate_dead_code()
    g.lint()


def test_find_nodes():
    g = small_graph()
    assert names_of(g.find_nodes(op="placeholder")) == ["x", "y"]
    assert names_of(g.find_nodes(op="call_method", target="sum")) == ["sum_1"]
    assert g.find_nodes(op="call_function", target=operator.mul) == []


def names_of(nodes):
    return [n.name for n in nodes]


# -- lint: every rule fails on a graph that breaks it ------------------------------------
def break_users(g):
    g.find_nodes(op="placeholder")[0].users.clear()


def break_extra_user(g):
    x, y = g.find_nodes(op="placeholder")
    y.users[g.find_nodes(op="call_method")[0]] = None


def break_name(g):
    g.find_nodes(op="call_method")[0].name = "add"


def break_identifier(g):
    g.find_nodes(op="call_method")[0].name = "not-valid"


def break_op(g):
    g.find_nodes(op="call_method")[0].op = "call_thing"


def break_target(g):
    g.find_nodes(op="call_function")[0].target = "not callable"


def break_method_target(g):
    g.find_nodes(op="call_method")[0].target = len


def break_links(g):
    g.find_nodes(op="call_method")[0]._prev = g.output_node


def break_length(g):
    g._len += 1


def break_order(g):
    add = g.find_nodes(op="call_function")[0]
    g.find_nodes(op="placeholder")[0].prepend(add)


def break_placeholder_position(g):
    z = g.placeholder("z")
    g.output_node.prepend(z)


def break_ownership(g):
    other = Graph()
    stranger = other.placeholder("s")
    add = g.find_nodes(op="call_function")[0]
    add._args = (stranger, stranger)
    add._input_nodes = {stranger: None}


def break_input_record(g):
    g.find_nodes(op="call_function")[0]._input_nodes = {}


def break_output_args(g):
    g.output_node._args = ()


@pytest.mark.parametrize("breaker, message", [
    (break_users, "missing from its users"),
    (break_extra_user, "does not read it"),
    (break_name, "used twice"),
    (break_identifier, "not a usable Python identifier"),
    (break_op, "illegal op"),
    (break_target, "non-callable target"),
    (break_method_target, "needs a method name"),
    (break_links, "not properly linked"),
    (break_length, "does not match"),
    (break_order, "before it is defined"),
    (break_placeholder_position, "placeholder z comes after"),
    (break_ownership, "another graph"),
    (break_input_record, "recorded inputs"),
    (break_output_args, "exactly one argument"),
])
def test_lint_rejects(breaker, message):
    g = small_graph()
    g.lint()
    breaker(g)
    with pytest.raises(LintError, match=message):
        g.lint()


def test_lint_checks_attributes_of_the_owning_module():
    g = small_graph()
    w = g.get_attr("w")
    g.output_node.args = ((w,),)
    gm = GraphModule({"w": 1.0}, g)
    g.lint()
    w.target = "missing"
    with pytest.raises(LintError, match="does not hold"):
        g.lint()
    assert gm.graph is g
