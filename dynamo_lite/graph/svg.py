"""A graph as static SVG markup, by our own layered layout (no Graphviz needed).

Nodes sit in topological rows (a node's row is one below its deepest input), ordered in
each row by the mean position of their inputs so that edges cross less. Each node is one
``<g class="node">`` (a shape and its label lines), each data edge one ``<path class="edge">``,
and each fused group one dashed ``<rect class="fused">`` around its members.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape

from .node import format_target
from .printing import node_value

CHAR_WIDTH = 6.6  # px per character of the 11px monospace label font
LINE_HEIGHT = 14
PADDING = 8
ROW_GAP = 34
COLUMN_GAP = 14
MARGIN = 12

# The shape of each kind of node: placeholders and outputs are pills, operations boxes.
_SHAPE = {
    "placeholder": ("input", 18), "get_attr": ("attr", 4), "call_function": ("op", 2),
    "call_method": ("op", 2), "call_module": ("op", 2), "output": ("output", 18),
}


@dataclass
class Box:
    """Where one node is drawn."""

    x: float
    y: float
    width: float
    height: float
    lines: tuple

    @property
    def center(self) -> float:
        return self.x + self.width / 2


def label_lines(node) -> tuple:
    """What a node's box says: its name, its op and target, its output shape/dtype."""
    if node.op == "output":
        return ("output",)
    target = format_target(node.target)
    target = target.removeprefix("dl.ops.")
    op = "input" if node.op == "placeholder" else target if node.op.startswith("call_") else f"{node.op} {target}"
    return (node.name, op, node_value(node)) if node.name != op else (node.name, node_value(node))


def rows_of(graph) -> list:
    """The nodes in topological rows, each row ordered to keep edges short."""
    depth: dict = {}
    for node in graph.nodes:  # graph order is topological
        depth[node] = 1 + max((depth[i] for i in node.all_input_nodes), default=-1)
    rows: list = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for node in graph.nodes:
        rows[depth[node]].append(node)
    position: dict = {}
    for row in rows:
        def mean_input_position(node, order={n: i for i, n in enumerate(row)}):
            inputs = [position[i] for i in node.all_input_nodes]
            return (sum(inputs) / len(inputs) if inputs else order[node], order[node])
        row.sort(key=mean_input_position)
        position.update((node, i / max(len(row) - 1, 1)) for i, node in enumerate(row))
    return rows


def layout(graph) -> tuple:
    """``(boxes, width, height)``: a Box per node, rows centred on the widest."""
    rows = rows_of(graph)
    boxes: dict = {}
    row_widths = []
    y = MARGIN
    for row in rows:
        x = 0.0
        height = 0
        for node in row:
            lines = label_lines(node)
            width = max(len(line) for line in lines) * CHAR_WIDTH + 2 * PADDING
            box_height = len(lines) * LINE_HEIGHT + PADDING
            boxes[node] = Box(x, y, width, box_height, lines)
            x += width + COLUMN_GAP
            height = max(height, box_height)
        row_widths.append(x - COLUMN_GAP if row else 0)
        y += height + ROW_GAP
    total = max(row_widths, default=0) + 2 * MARGIN
    for row, row_width in zip(rows, row_widths):
        shift = (total - row_width) / 2
        for node in row:
            boxes[node].x += shift
    return boxes, total, y - ROW_GAP + MARGIN


def to_svg(graph, fused_groups=(), title: str = "graph") -> str:
    """Static SVG markup of ``graph``.

    Args:
        graph: the Graph to draw.
        fused_groups: lists of node names a backend evaluated as one fused loop; each
            group of two or more drawn nodes is outlined.
        title: the picture's accessible title.

    Example:
        >>> svg = to_svg(gm.graph, fused_groups=getattr(gm, "fused_groups", ()))
    """
    boxes, width, height = layout(graph)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.0f} {height:.0f}" role="img"><title>{escape(title)}</title>']
    by_name = {node.name: box for node, box in boxes.items()}
    for index, names in enumerate(fused_groups):
        members = [by_name[n] for n in names if n in by_name]
        if len(members) < 2:
            continue
        left = min(b.x for b in members) - 5
        top = min(b.y for b in members) - 5
        right = max(b.x + b.width for b in members) + 5
        bottom = max(b.y + b.height for b in members) + 5
        parts.append(f'<rect class="fused" x="{left:.1f}" y="{top:.1f}" width="{right - left:.1f}" '
                     f'height="{bottom - top:.1f}" rx="6"><title>fused group {index}: {escape(", ".join(names))}'
                     f'</title></rect>')
    for node, box in boxes.items():
        for source in node.all_input_nodes:
            start = boxes[source]
            x0, y0, x1, y1 = start.center, start.y + start.height, box.center, box.y
            bend = (y1 - y0) / 2
            parts.append(f'<path class="edge" data-from="{escape(source.name)}" data-to="{escape(node.name)}" '
                         f'd="M{x0:.1f},{y0:.1f} C{x0:.1f},{y0 + bend:.1f} {x1:.1f},{y1 - bend:.1f} '
                         f'{x1:.1f},{y1:.1f}"/>')
    for node, box in boxes.items():
        kind, radius = _SHAPE[node.op]
        parts.append(f'<g class="node {kind}" data-name="{escape(node.name)}">'
                     f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.width:.1f}" height="{box.height:.1f}" '
                     f'rx="{radius}"/>')
        for i, line in enumerate(box.lines):
            parts.append(f'<text x="{box.center:.1f}" y="{box.y + PADDING / 2 + (i + 0.8) * LINE_HEIGHT:.1f}">'
                         f'{escape(line)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)
