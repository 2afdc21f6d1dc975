"""GraphModule: generated code (golden), running against eager, attributes, tracebacks."""
import collections
import linecache
import math
import operator
import traceback
import weakref

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import ops
from dynamo_lite.graph import Graph, GraphModule, Interpreter, ShapeProp
from dynamo_lite.tensor.tensor import from_array


def tensor(*shape, seed=0, dtype=np.float32):
    return from_array(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def small_graph():
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    add = g.call_function(ops.add, (x, y))
    mul = g.call_function(ops.mul, (add, 2))
    relu = g.call_function(ops.relu, (mul,))
    g.output((relu, add))
    return g


def eager_small(x, y):
    add = ops.add(x, y)
    return ops.relu(ops.mul(add, 2)), add


def test_code_golden():
    gm = GraphModule(None, small_graph())
    assert gm.code == (
        "def forward(x, y):\n"
        "    add = ops_add(x, y);  del x, y\n"
        "    mul = ops_mul(add, 2)\n"
        "    relu = ops_relu(mul);  del mul\n"
        "    return (relu, add)\n"
    )
    assert gm.code_globals == {"ops_add": ops.add, "ops_mul": ops.mul, "ops_relu": ops.relu}


def test_runs_like_eager_and_like_the_interpreter():
    gm = GraphModule(None, small_graph())
    x, y = tensor(2, 3), tensor(3, seed=1)
    expected = eager_small(x, y)
    for got in (gm(x, y), Interpreter(gm).run(x, y), gm.forward(x=x, y=y)):
        for g_, e in zip(got, expected):
            np.testing.assert_array_equal(g_.numpy(), e.numpy())
            assert g_.stride() == e.stride() and g_.dtype == e.dtype


def test_print_readable_shows_shapes_and_dtypes(capsys):
    gm = GraphModule(None, small_graph())
    ShapeProp(gm).propagate(tensor(2, 3), dl.TensorMeta((3,), dl.float32))
    text = gm.print_readable()
    assert capsys.readouterr().out.strip() == text.strip()
    assert text == (
        "# GraphModule\n"
        "def forward(x, y):\n"
        "    # x: f32[2, 3]\n"
        "    # y: f32[3]\n"
        "    add = ops_add(x, y);  del x, y  # f32[2, 3]\n"
        "    mul = ops_mul(add, 2)  # f32[2, 3]\n"
        "    relu = ops_relu(mul);  del mul  # f32[2, 3]\n"
        "    return (relu, add)\n"
    )


def test_print_readable_marks_strided_values_and_unknown_ones():
    g = Graph()
    x = g.placeholder("x")
    t = g.call_function(ops.transpose, (x, 0, 1))
    g.output(g.call_method("tolist", (t,)))
    gm = GraphModule(None, g)
    t.meta["val"] = dl.TensorMeta((3, 2), dl.int64, strides=(1, 3))
    text = gm.print_readable(print_output=False)
    assert "transpose = ops_transpose(x, 0, 1);  del x  # i64[3, 2](strides=[1, 3])" in text
    assert "tolist = transpose.tolist();  del transpose  # ?" in text


def test_traceback_shows_the_generated_line():
    gm = GraphModule(None, small_graph())
    with pytest.raises(RuntimeError) as info:
        gm(tensor(2, 3), tensor(4))  # shapes do not broadcast: the add raises
    text = "".join(traceback.format_exception(info.value))
    assert "add = ops_add(x, y);  del x, y" in text
    assert "GraphModule_" in text and ", in forward" in text
    linecache.clearcache()  # the loader in the code's globals still finds the source
    text = "".join(traceback.format_exception(info.value))
    assert "add = ops_add(x, y);  del x, y" in text


def test_traceback_from_a_python_callable_names_the_line():
    def explode(value):
        raise ValueError("boom")

    g = Graph()
    x = g.placeholder("x")
    ok = g.call_function(operator.neg, (x,))
    bad = g.call_function(explode, (ok,))
    g.output(bad)
    gm = GraphModule(None, g, class_name="Exploding")
    with pytest.raises(ValueError, match="boom") as info:
        gm(1)
    frames = traceback.extract_tb(info.value.__traceback__)
    generated = [f for f in frames if f.name == "forward"]
    assert generated and generated[0].line == "explode = explode_1(neg);  del neg"
    assert generated[0].filename.startswith("<Exploding_") and generated[0].lineno == 3


def test_recompile_after_graph_edits():
    g = small_graph()
    gm = GraphModule(None, g)
    mul = g.find_nodes(op="call_function", target=ops.mul)[0]
    with g.inserting_after(mul):
        neg = g.call_function(ops.neg, (mul,))
    relu = g.find_nodes(op="call_function", target=ops.relu)[0]
    relu.replace_input_with(mul, neg)
    g.lint()
    assert "neg" not in gm.code
    gm.recompile()
    assert "    neg = ops_neg(mul);  del mul\n" in gm.code
    x, y = tensor(2, 3), tensor(3, seed=1)
    out, _ = gm(x, y)
    np.testing.assert_array_equal(out.numpy(), np.maximum(-2 * (x.numpy() + y.numpy()), 0))


class Scale:
    def __init__(self, factor):
        self.factor = factor
        self.weight = from_array(np.full(3, factor, dtype=np.float32))

    def __call__(self, value):
        return ops.mul(value, self.factor)


def attribute_graph():
    g = Graph()
    x = g.placeholder("x")
    w = g.get_attr("layer.weight")
    s = g.call_module("layer", (x,))
    g.output(g.call_function(ops.add, (s, w)))
    return g


def test_get_attr_and_call_module_from_an_object_root():
    class Root:
        layer = Scale(3.0)

    gm = GraphModule(Root(), attribute_graph())
    assert gm.code == (
        "def forward(x):\n"
        "    # layer_weight: attribute 'layer.weight'\n"
        "    layer = module_layer(x);  del x\n"
        "    add = ops_add(layer, layer_weight);  del layer\n"
        "    return add\n"
    )
    assert set(gm.attributes) == {"layer.weight", "layer"}
    gm.graph.lint()
    np.testing.assert_array_equal(gm(tensor(3)).numpy(), tensor(3).numpy() * 3 + 3)


def test_set_attribute_rebinds_compiled_code_and_prefix_lookup():
    gm = GraphModule({"layer": Scale(2.0)}, attribute_graph())
    x = tensor(3)
    np.testing.assert_array_equal(gm(x).numpy(), x.numpy() * 2 + 2)
    assert gm.get_attribute("layer.weight") is gm.attributes["layer"].weight
    gm.set_attribute("layer", Scale(5.0))  # both the module and layer.weight follow
    np.testing.assert_array_equal(gm(x).numpy(), x.numpy() * 5 + 5)
    np.testing.assert_array_equal(Interpreter(gm).run(x).numpy(), x.numpy() * 5 + 5)
    with pytest.raises(AttributeError, match="no attribute 'other'"):
        gm.get_attribute("other")
    with pytest.raises(AttributeError, match="no 'bias'"):
        gm.get_attribute("layer.bias")
    with pytest.raises(TypeError):
        gm.attributes["x"] = 1  # read-only view
    with pytest.raises(RuntimeError, match="still used"):
        gm.delete_attribute("layer")
    gm.set_attribute("spare", 1)
    assert gm.delete_unused_attributes() == ["spare"]


def test_missing_attribute_fails_at_compile_time():
    with pytest.raises(AttributeError, match="layer"):
        GraphModule({}, attribute_graph())


Pair = collections.namedtuple("Pair", "first second")


def test_constants_are_written_as_source_or_bound_as_globals():
    captured = []

    def record(*args, **kwargs):
        captured.append((args, kwargs))
        return len(captured)

    marker = object()
    g = Graph()
    x = g.placeholder("x")
    g.call_function(record, (math.inf, -math.inf, math.nan, -0.0, 1.5, True, None, "s", b"b", 2j, ...),
                    {"dtype": dl.float32, "obj": marker})
    g.call_function(record, ((1,), [x, (2, 3)], {"k": slice(1, None, 2)}, Pair(x, 4)), {"lambda": 1})
    out = g.call_function(operator.getitem, (x, (slice(None), None, ..., 0, slice(None, None, -1))))
    g.output(out)
    gm = GraphModule(None, g)
    assert "record(inf" not in gm.code and "float('inf'), float('-inf'), float('nan'), -0.0" in gm.code
    assert "dtype=float32, obj=object_1)" in gm.code  # "object" is a builtin's name
    assert "**{'lambda': 1}" in gm.code
    assert "getitem = x[:, None, ..., 0, ::-1]" in gm.code
    value = np.arange(24).reshape(2, 3, 4)
    np.testing.assert_array_equal(gm(value), value[:, None, ..., 0, ::-1])
    (args0, kw0), (args1, kw1) = captured
    assert math.isinf(args0[0]) and args0[1] == -math.inf and math.isnan(args0[2])
    assert math.copysign(1, args0[3]) == -1 and args0[4:] == (1.5, True, None, "s", b"b", 2j, ...)
    assert type(args0[5]) is bool and kw0 == {"dtype": dl.float32, "obj": marker}
    assert args1[:3] == ((1,), [value, (2, 3)], {"k": slice(1, None, 2)}) and args1[1][0] is value
    assert args1[3] == Pair(value, 4) and type(args1[3]) is Pair and kw1 == {"lambda": 1}


def test_infix_operators_and_methods():
    g = Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    a = g.call_function(operator.sub, (x, -1))
    b = g.call_function(operator.pow, (-2, a))
    c = g.call_function(operator.neg, (b,))
    d = g.call_method("__getitem__", (c, 0))
    e = g.call_method("sum", (y,))
    f = g.call_function(operator.truediv, (d, e))
    g.output(f)
    gm = GraphModule(None, g)
    assert "sub = x - (-1)" in gm.code and "pow_1 = (-2) ** sub" in gm.code and "neg = -pow_1" in gm.code
    assert "__getitem__ = neg.__getitem__(0)" in gm.code
    xs, ys = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    assert gm(xs, ys) == -((-2.0) ** (xs + 1))[0] / 7.0 == Interpreter(gm).run(xs, ys)


def test_generated_names_never_clash_with_node_names():
    g = Graph()
    x = g.placeholder("ops_add")
    a = g.call_function(ops.add, (x, 1), name="ops_add")
    b = g.call_function(abs, (a,), name="len")
    c = g.call_function(len, (b,))
    g.output(c)
    gm = GraphModule(None, g)
    assert [n.name for n in g.nodes] == ["ops_add", "ops_add_1", "len_1", "len_2", "output"]
    assert "ops_add_1 = ops_add_2(ops_add, 1)" in gm.code and "len_2 = len(len_1)" in gm.code
    assert gm(from_array(np.zeros(5, np.float32))) == 5


def test_values_are_freed_after_their_last_use():
    class Box:
        pass

    seen = {}

    def make():
        box = Box()
        seen["ref"] = weakref.ref(box)
        return box

    def check(value):
        return seen["ref"]() is None  # the box must be gone by now

    g = Graph()
    box = g.call_function(make)
    first = g.call_function(id, (box,))
    g.output(g.call_function(check, (first,)))
    assert GraphModule(None, g)() is True
    assert Interpreter(GraphModule(None, g)).run() is True


def test_empty_graph_and_graph_without_output():
    g = Graph()
    g.placeholder("x")
    gm = GraphModule(None, g)
    assert gm.code == "def forward(x):\n    return None\n" and gm(1) is None


def test_deepcopy_and_repr():
    import copy

    gm = GraphModule({"layer": Scale(2.0)}, attribute_graph())
    clone = copy.deepcopy(gm)
    assert clone.code == gm.code and clone.graph is not gm.graph
    assert clone.attributes["layer"] is not gm.attributes["layer"]
    np.testing.assert_array_equal(clone(tensor(3)).numpy(), gm(tensor(3)).numpy())
    assert repr(gm) == "<GraphModule: 5 nodes, 1 attributes>"


def test_calling_the_module_calls_the_compiled_function_directly():
    gm1, gm2 = GraphModule(None, small_graph()), GraphModule(None, small_graph())
    assert type(gm1).__call__ is gm1.forward and type(gm2).__call__ is gm2.forward
    assert type(gm1) is not type(gm2) and isinstance(gm1, GraphModule)
    before = gm1.forward
    gm1(tensor(3), tensor(3))
    assert gm1.forward is before  # compiled once, not per call
    gm1.recompile()
    assert gm1.forward is not before and type(gm1).__call__ is gm1.forward


def test_print_readable_annotates_attributes():
    gm = GraphModule({"layer": Scale(2.0)}, attribute_graph())
    gm.graph.find_nodes(op="call_module")[0].meta["val"] = dl.TensorMeta((3,), dl.float32)
    ShapeProp(gm).propagate(tensor(3))
    text = gm.print_readable(print_output=False)
    assert "    # layer_weight: attribute 'layer.weight', f32[3]\n" in text
    assert "    add = ops_add(layer, layer_weight);  del layer  # f32[3]\n" in text


def test_tensor_constants_are_bound_by_identity():
    big = tensor(3)
    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(ops.add, (g.call_function(ops.add, (x, big)), big)))
    gm = GraphModule(None, g)
    assert "add = ops_add(x, tensor_constant);  del x" in gm.code
    assert "add_1 = ops_add(add, tensor_constant);  del add" in gm.code
    assert gm.code_globals["tensor_constant"] is big
    np.testing.assert_allclose(gm(tensor(3, seed=1)).numpy(), tensor(3, seed=1).numpy() + big.numpy() + big.numpy())
