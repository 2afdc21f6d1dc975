"""Graph printing for people: value summaries, text tables, Graphviz DOT and SVG."""
from __future__ import annotations

import shutil
import subprocess

from ..tensor.layout import contiguous_strides
from ..tensor.meta import TensorMeta
from .node import format_arg, format_target

# Short dtype spellings, as in ``f32[2, 3]``.
SHORT_DTYPE = {
    "float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
    "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "b8",
}


def format_value(value) -> str:
    """A short summary of a ``meta["val"]``: ``f32[2, 3]``, strides when not contiguous."""
    if isinstance(value, TensorMeta):
        # repr, not str: a symbolic size prints as its expression (s0), str() would specialize it.
        text = f"{SHORT_DTYPE.get(value.dtype.name, value.dtype.name)}[{', '.join(map(repr, value.shape))}]"
        if list(map(repr, value.stride())) != list(map(repr, contiguous_strides(value.shape))):
            text += f"(strides={list(value.stride())})"
        if value.device.type != "cpu":
            text += f"@{value.device}"
        return text
    if isinstance(value, (tuple, list)):
        inner = ", ".join(format_value(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) and len(value) == 1 else f"({inner})"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def node_value(node) -> str:
    """``format_value`` of the node's ``meta["val"]``, or ``?`` if shapes were not propagated."""
    return format_value(node.meta["val"]) if "val" in node.meta else "?"


def format_tabular(graph) -> str:
    """A fixed-width table with one row per node."""
    header = ("opcode", "name", "target", "args", "kwargs", "value")
    rows = [
        (n.op, n.name, format_target(n.target), format_arg(n.args), format_arg(n.kwargs),
         "" if n.op == "output" else node_value(n))
        for n in graph.nodes
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells):
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()

    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


_NODE_STYLE = {
    "placeholder": 'shape=ellipse, style=filled, fillcolor="#dbe9f6"',
    "get_attr": 'shape=box, style="rounded,filled", fillcolor="#e8e8e8"',
    "call_function": "shape=box",
    "call_method": "shape=box",
    "call_module": "shape=box3d",
    "output": 'shape=ellipse, style=filled, fillcolor="#dff0d8"',
}


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph, groups=None) -> str:
    """Graphviz DOT text: one box per node (name, target, value), data edges between them.

    Args:
        graph: the Graph to draw.
        groups: optional fusion groups (objects with ``.nodes``), each drawn as a cluster.
    """
    lines = ["digraph graph_ir {", "    rankdir=TB;", '    node [fontname="monospace", fontsize=10];']
    in_group = {}
    for index, group in enumerate(groups or ()):
        lines.append(f"    subgraph cluster_{index} {{")
        lines.append(f'        label="fusion group {index}"; style=dashed; color="#d9534f";')
        for node in group.nodes:
            in_group[node] = index
            lines.append(f"        {_quote(node.name)};")
        lines.append("    }")
    for node in graph.nodes:
        if node.op == "output":
            label = "output"
        else:
            label = f"{node.name}\n{node.op}: {format_target(node.target)}"
            if "val" in node.meta:
                label += "\n" + node_value(node)
        lines.append(f"    {_quote(node.name)} [label={_quote(label)}, {_NODE_STYLE[node.op]}];")
    for node in graph.nodes:
        for arg in node.all_input_nodes:
            lines.append(f"    {_quote(arg.name)} -> {_quote(node.name)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_svg(dot_text: str) -> str:
    """Render DOT text to SVG with the ``dot`` program, else the ``graphviz`` package.

    Raises:
        RuntimeError: neither is available (install Graphviz, or ``pip install graphviz``
            together with the Graphviz binaries).
    """
    dot = shutil.which("dot")
    if dot is not None:
        done = subprocess.run([dot, "-Tsvg"], input=dot_text.encode(), capture_output=True, check=True)
        return done.stdout.decode()
    try:
        import graphviz
    except ImportError:
        raise RuntimeError(
            "rendering SVG needs the Graphviz 'dot' program on PATH or the 'graphviz' Python "
            "package; to_dot() gives the DOT text without either"
        ) from None
    return graphviz.Source(dot_text).pipe(format="svg").decode()
