"""Printing for people: text table, DOT text and SVG rendering."""
import os
import shutil
import sys
import types

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import ops
from dynamo_lite.graph import Graph, GraphModule, ShapeProp
from dynamo_lite.graph.passes import partition_pointwise
from dynamo_lite.tensor.tensor import from_array


def shaped_graph():
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(ops.add, (x, 1), {"alpha": 2})
    t = g.call_function(ops.transpose, (a, 0, 1))
    g.output(g.call_function(ops.relu, (t,)))
    ShapeProp(GraphModule(None, g)).propagate(from_array(np.zeros((2, 3), np.float32)))
    return g


def test_print_tabular_golden(capsys):
    text = shaped_graph().print_tabular()
    assert capsys.readouterr().out == text + "\n"
    assert text == (
        "opcode         name       target            args           kwargs      value\n"
        "-------------  ---------  ----------------  -------------  ----------  -------------------------\n"
        "placeholder    x          x                 ()             {}          f32[2, 3]\n"
        "call_function  add        dl.ops.add        (%x, 1)        {alpha: 2}  f32[2, 3]\n"
        "call_function  transpose  dl.ops.transpose  (%add, 0, 1)   {}          f32[3, 2](strides=[1, 3])\n"
        "call_function  relu       dl.ops.relu       (%transpose,)  {}          f32[3, 2](strides=[1, 3])\n"
        "output         output     output            (%relu,)       {}"
    )


def test_to_dot_has_every_node_edge_and_group():
    g = shaped_graph()
    dot = g.to_dot(groups=partition_pointwise(g))
    assert dot.startswith("digraph graph_ir {") and dot.rstrip().endswith("}")
    for name in ("x", "add", "transpose", "relu", "output"):
        assert f'    "{name}" [label=' in dot
    for edge in ('"x" -> "add"', '"add" -> "transpose"', '"transpose" -> "relu"', '"relu" -> "output"'):
        assert edge in dot
    assert 'label="add\\ncall_function: dl.ops.add\\nf32[2, 3]"' in dot
    assert dot.count("subgraph cluster_") == 2 and 'label="fusion group 1"' in dot


def test_dot_labels_are_escaped():
    g = Graph()
    g.output(g.placeholder("x"))
    g.find_nodes(op="placeholder")[0].meta["val"] = 'a "quoted" \\ value'
    assert """'a \\"quoted\\" \\\\\\\\ value'""" in g.to_dot()  # repr, then DOT escaping


@pytest.mark.skipif(sys.platform == "win32", reason="uses a shell script as a fake dot program")
def test_to_svg_uses_the_dot_program(tmp_path, monkeypatch):
    fake = tmp_path / "dot"
    fake.write_text('#!/bin/sh\n[ "$1" = "-Tsvg" ] || exit 3\necho "<svg>$(wc -l)</svg>"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    g = shaped_graph()
    lines = len(g.to_dot().splitlines())
    assert g.to_svg().strip() == f"<svg>{lines}</svg>"


def test_to_svg_falls_back_to_the_graphviz_package(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    seen = []

    class Source:
        def __init__(self, text):
            seen.append(text)

        def pipe(self, format):
            return f"<svg format={format}/>".encode()

    monkeypatch.setitem(sys.modules, "graphviz", types.SimpleNamespace(Source=Source))
    g = shaped_graph()
    assert g.to_svg() == "<svg format=svg/>" and seen == [g.to_dot()]


def test_to_svg_without_any_renderer_says_what_to_install(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import fails
    with pytest.raises(RuntimeError, match="Graphviz 'dot' program"):
        shaped_graph().to_svg()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_real_dot_renders_svg():
    assert "<svg" in shaped_graph().to_svg()
    assert dl.float32 is not None
