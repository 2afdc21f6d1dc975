"""The HTML compile report: one self-contained page (inline CSS and SVG, no script, no external resource)."""
from __future__ import annotations

import linecache
import shutil
from collections import Counter
from html import escape

from ..graph.node import format_target
from ..graph.printing import format_tabular, render_svg, to_dot
from ..graph.svg import to_svg
from .bytecode.columns import aligned_rows

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 2px solid #ccd; margin-top: 2em; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
pre, code, table.code td, svg text { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
pre { background: #f6f8fa; padding: .6em; overflow: auto; }
table { border-collapse: collapse; } td, th { padding: 1px 8px; text-align: left; vertical-align: top; }
table.nodes td, table.nodes th, table.summary td, table.summary th { border: 1px solid #dde; }
table.code td { white-space: pre; }
tr.break { background: #fde2e1; }
td.reason { color: #a4282b; white-space: normal; overflow-wrap: anywhere; min-width: 22em; max-width: 42em;
            font-family: system-ui, sans-serif; }
details > summary { cursor: pointer; color: #36c; margin: .4em 0; }
table.histogram td.count { text-align: right; }
td.lineno { color: #889; text-align: right; }
tr.insert td.rewritten, tr.replace td.rewritten { background: #e6ffed; }
tr.delete td.original, tr.replace td.original { background: #ffeef0; }
.scroll { overflow: auto; max-height: 40em; border: 1px solid #eee; }
svg.graph { background: #fcfcff; }
svg .edge { fill: none; stroke: #7a8599; stroke-width: 1.2; }
svg .node rect { fill: #fff; stroke: #36c; stroke-width: 1.2; }
svg .node.input rect { fill: #dbe9f6; } svg .node.output rect { fill: #dff0d8; } svg .node.attr rect { fill: #eee; }
svg .fused { fill: #fff4e5; stroke: #d9822b; stroke-dasharray: 5 3; }
svg text { text-anchor: middle; fill: #222; font-size: 11px; }
.note { color: #666; }
"""


def write_report(explained, path, *, graphviz: bool = False) -> str:
    """Write the report of an ``ExplainOutput`` to ``path`` (see ``ExplainOutput.to_html``)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_page(explained, graphviz=graphviz))
    return str(path)


def render_page(explained, *, graphviz: bool = False) -> str:
    """The whole page: a summary, then one section per translated frame in execution order."""
    frames = explained.frames
    body = ["<h1>dynamo_lite compile report</h1>",
            f"<p>{len(frames)} frame translation(s), {explained.graph_count} graph(s), "
            f"{explained.graph_break_count} graph break(s).</p>", _summary(frames, explained.break_reasons)]
    for index, frame in enumerate(frames):
        body.append(_frame_section(index, frame, graphviz))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>dynamo_lite compile report</title>"
            f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def _summary(frames, counted_breaks) -> str:
    counted = {id(r) for r in counted_breaks}  # each break once (NOTE: [breaks counted once])
    rows = "".join(
        f"<tr><td><a href=\"#frame-{i}\">{i}</a></td><td>{escape(f.name)}</td><td>{f.entry_index}</td>"
        f"<td>{len(f.report.graphs)}</td><td>{sum(id(r) in counted for r in f.report.break_reasons)}</td>"
        f"<td>{f.trace_time_s * 1000:.1f}</td><td>{f.backend_time_s * 1000:.1f}</td>"
        f"<td>{escape(f.guard_failure or ('first entry' if f.entry_index == 0 else ''))}</td></tr>"
        for i, f in enumerate(frames))
    return ("<table class=\"summary\"><tr><th>#</th><th>frame</th><th>cache entry</th><th>graphs</th>"
            "<th>breaks</th><th>trace ms</th><th>backend ms</th><th>why compiled (guard failure)</th></tr>"
            f"{rows}</table>")


def _frame_section(index, frame, graphviz: bool) -> str:
    report = frame.report
    code = report.original_code
    where = f"{code.co_filename}:{code.co_firstlineno}" if code is not None else "<unknown>"
    parts = [f"<h2 id=\"frame-{index}\">Frame {index}: {escape(frame.name)} <small>({escape(where)})</small></h2>",
             f"<p>Cache entry {frame.entry_index} of this code; "
             f"{'recompiled because: ' + escape(frame.guard_failure) if frame.guard_failure else 'no earlier entry'}. "
             f"Compile time: trace {frame.trace_time_s * 1000:.2f} ms, backend {frame.backend_time_s * 1000:.2f} ms, "
             f"total {report.compile_time_s * 1000:.2f} ms.</p>"]
    if report.fallback_reason:
        parts.append(f"<p class=\"reason\">Runs eagerly: {escape(report.fallback_reason)}</p>")
    parts += ["<h3>Source and graph breaks</h3>", _source_table(code, report.break_reasons)]
    for number, gm in enumerate(report.graphs + report.backward_graphs):  # a backward graph is named *_backward
        parts += [f"<h3>Graph {number} ({escape(getattr(gm, 'class_name', 'graph'))})</h3>",
                  f"<div class=\"scroll\">{_picture(gm, f'{frame.name} graph {number}', graphviz)}</div>",
                  "<h3>Graph code</h3>", f"<pre>{escape(gm.print_readable(print_output=False))}</pre>",
                  "<h3>Nodes</h3>", _node_table(gm)]
        if getattr(gm, "backend_code", None):
            parts += ["<h3>Backend code</h3>", f"<div class=\"scroll\"><pre>{escape(gm.backend_code)}</pre></div>"]
    guards = [line for line in (report.guards or "").splitlines() if line.strip()]
    parts += ["<h3>Guards</h3>", f"<details class=\"guards\"><summary>{len(guards)} guard(s): when this "
              f"translation is reused (click to show)</summary><pre>{escape(report.guards or '(none)')}</pre></details>"]
    if report.transformed_code is not None:
        parts += ["<h3>Bytecode: original | rewritten</h3>", _bytecode_columns(code, report.transformed_code)]
        for resume, origin in report.resume_codes:
            parts += [f"<h3>Resume function {escape(resume.co_name)} (original offset {origin.offset}): "
                      "original | rewritten</h3>", _bytecode_columns(origin.code, resume)]
    if report.rewritten is not None:
        parts += ["<h3>Rewritten code as Python</h3>", f"<pre>{escape(report.rewritten.source)}</pre>"]
    return "\n".join(parts)


def _source_lines(code) -> list:
    """``(lineno, text)`` of the code's source lines, from its first line to its last."""
    if code is None:
        return []
    numbers = [line for _, _, line in code.co_lines() if line is not None]
    last = max(numbers, default=code.co_firstlineno)
    return [(n, linecache.getline(code.co_filename, n).rstrip("\n")) for n in range(code.co_firstlineno, last + 1)]


def _source_table(code, break_reasons) -> str:
    reasons: dict = {}
    for reason in break_reasons:  # a callee's break is shown at the line that calls it
        reasons.setdefault(reason.lineno if reason.callee is None else reason.call_lineno, []).append(reason)
    lines = _source_lines(code)
    if not any(text for _, text in lines):
        listed = "".join(f"<li>{escape(str(r))}</li>" for r in break_reasons)
        return f"<p class=\"note\">Source not available.</p><ul>{listed}</ul>"
    rows = []
    for number, text in lines:
        here = reasons.pop(number, [])
        said = "<br>".join(_break_text(r) for r in here)
        rows.append(f"<tr class=\"{'break' if here else 'src'}\"><td class=\"lineno\">{number}</td>"
                    f"<td>{escape(text)}</td><td class=\"reason\">{said}</td></tr>")
    elsewhere = "".join(f"<li>{escape(str(r))}</li>" for rs in reasons.values() for r in rs)
    table = f"<div class=\"scroll\"><table class=\"code\">{''.join(rows)}</table></div>"
    return table + (f"<p>Breaks in inlined callees defined elsewhere:</p><ul>{elsewhere}</ul>" if elsewhere else "")


def _break_text(r) -> str:
    where = f"{escape(f'{r.filename}:{r.lineno}')}: <code>{escape(r.source_line)}</code>"
    hint = f"<br>hint: {escape(r.hint)}" if r.hint else ""
    if r.callee is not None:
        return (f"calls {escape(r.callee)}, which runs eagerly here and compiles as its own frame; the break "
                f"inside it is counted there: {escape(r.reason)} ({where})")
    return f"graph break: {escape(r.reason)} ({where}){hint}"


#: Graphs with more nodes than this are shown as a summary, the full picture folded behind a click.
SUMMARY_NODES = 40
#: How many nodes a summary lists from each end of the graph.
SUMMARY_ENDS = 6


def _picture(gm, title: str, graphviz: bool) -> str:
    picture = _full_picture(gm, title, graphviz)
    nodes = list(gm.graph.nodes)
    if len(nodes) <= SUMMARY_NODES:
        return picture
    return (_graph_summary(nodes) + f"<details class=\"picture\"><summary>the whole graph drawn "
            f"({len(nodes)} nodes; click to show)</summary>{picture}</details>")


def _graph_summary(nodes) -> str:
    """A large graph in words: how many nodes of each op, and its first and last nodes."""
    histogram = Counter(node.op if node.op in ("placeholder", "get_attr", "output") else format_target(node.target)
                        for node in nodes)
    rows = "".join(f"<tr><td>{escape(str(op))}</td><td class=\"count\">{count}</td></tr>"
                   for op, count in histogram.most_common())
    ends = [n.format_node() for n in nodes[:SUMMARY_ENDS]] + ["..."] + [n.format_node() for n in nodes[-SUMMARY_ENDS:]]
    return (f"<p class=\"note\">{len(nodes)} nodes: a summary (ops by count; the first and last nodes).</p>"
            f"<table class=\"histogram summary\"><tr><th>op</th><th>nodes</th></tr>{rows}</table>"
            f"<pre class=\"ends\">{escape(chr(10).join(ends))}</pre>")


def _full_picture(gm, title: str, graphviz: bool) -> str:
    if graphviz and shutil.which("dot"):
        svg = render_svg(to_dot(gm.graph))
        return svg[svg.index("<svg"):]  # drop the XML prolog and the DOCTYPE (an external DTD)
    note = "<p class=\"note\">Graphviz was asked for but 'dot' is not installed.</p>" if graphviz else ""
    return note + to_svg(gm.graph, getattr(gm, "fused_groups", ()), title)


def _node_table(gm) -> str:
    header, _, *rows = format_tabular(gm.graph).splitlines()
    return f"<div class=\"scroll\"><pre>{escape(header)}\n{escape(chr(10).join(rows))}</pre></div>"


def _bytecode_columns(original, rewritten) -> str:
    cells = "".join(
        f"<tr class=\"{row.kind}\"><td class=\"original\">{escape(row.original or '')}</td>"
        f"<td class=\"rewritten\">{escape(row.rewritten or '')}</td></tr>"
        for row in aligned_rows(original, rewritten))
    return (f"<div class=\"scroll\"><table class=\"code bytecode\"><tr><th>original</th><th>rewritten</th></tr>"
            f"{cells}</table></div>")
