"""The HTML compile report: every frame's graphs (inline SVG), breaks, source, guards and bytecode; self-contained."""
import html
import html.parser
import inspect
import re

import numpy as np

import dynamo_lite as dl
from benchmarks.models import WORKLOADS
from dynamo_lite.frames.bytecode.columns import aligned_rows
from dynamo_lite.graph.svg import layout
from tests.cupy_emulated import cupy_emulated  # noqa: F401 (a fixture)
from tests.helpers import native_skip_reason, run_rewritten

# What a reference to an external resource looks like in a page (links to "#..." are internal).
EXTERNAL_REFERENCE = re.compile(r"""(?:src|href)\s*=\s*["']?(?!#)[^"'\s>]+|url\(\s*["']?(?!#)|@import""", re.I)


def scale(x):
    return x.sin() * 2  # inlined into the first graph


def two_breaks(x):
    y = scale(x) + 1
    print("between graphs")
    if y.sum().item() > 0:
        y = y * 3
    return y.relu()


class PageParser(html.parser.HTMLParser):
    """Collects the elements of a page and checks that they nest properly."""

    VOID = {"meta", "br", "link", "img", "input", "hr"}

    def __init__(self):
        super().__init__()
        self.open, self.elements, self.errors = [], [], []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
        else:
            self.open.pop()


def explain_and_write(tmp_path, capsys, backend="eager"):
    x = dl.from_numpy(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    out = dl.explain(two_breaks, backend=backend)(x)
    assert capsys.readouterr().out == "between graphs\n"
    path = tmp_path / "report.html"
    assert out.to_html(path) == str(path)
    return out, path.read_text(), x


def test_report_holds_every_graph_break_and_source_line(tmp_path, capsys):
    out, page, x = explain_and_write(tmp_path, capsys)
    np.testing.assert_array_equal(out.result.numpy(), two_breaks(x).numpy())
    capsys.readouterr()
    assert (out.graph_count, out.graph_break_count) == (3, 2)
    names = [f.name for f in out.frames]
    assert names[0] == "two_breaks" and [n.split("@")[0] for n in names[1:]] == ["two_breaks.<resume"] * 2
    parser = PageParser()
    parser.feed(page)
    parser.close()
    assert parser.errors == [] and parser.open == []
    svgs = [attrs for tag, attrs in parser.elements if tag == "svg"]
    assert len(svgs) == out.graph_count
    for gm in out.graphs:  # every node of every graph is drawn, with its label
        for node in gm.graph.nodes:
            assert f'data-name="{node.name}"' in page
    edges = sum(len(n.all_input_nodes) for gm in out.graphs for n in gm.graph.nodes)
    assert page.count('class="edge"') == edges
    text = html.unescape(page)
    for reason in out.break_reasons:
        assert reason.reason in text and f"{reason.filename}:{reason.lineno}" in text
    for line in inspect.getsource(two_breaks).splitlines():
        assert line in text
    assert "Tensor dtype=float32" in text  # the guards in words
    assert EXTERNAL_REFERENCE.search(page) is None
    assert "<script" not in page


def test_numpy_backend_fused_groups_are_outlined(tmp_path, capsys):
    out, page, _ = explain_and_write(tmp_path, capsys, backend="numpy")
    # sin, mul and add of the first graph run as one fused loop.
    assert out.graphs[0].fused_groups == [["sin", "mul", "add"]]
    assert page.count('class="fused"') >= 1


def test_every_fusing_backend_records_its_fused_groups(tmp_path, capsys, cupy_emulated):
    backends = [cupy_emulated] + ([] if native_skip_reason() else ["native"])
    for backend in backends:
        out, page, _ = explain_and_write(tmp_path, capsys, backend=backend)
        fused = [group for group in out.graphs[0].fused_groups if len(group) > 1]
        assert fused == [["sin", "mul", "add"]], backend
        assert page.count('class="fused"') >= 1, backend


def test_graph_rows_are_topological():
    out = dl.explain(lambda a, b: (a + b) * a - b.exp())(dl.ones(2), dl.ones(2))
    graph = out.graphs[0].graph
    boxes, width, height = layout(graph)
    for node in graph.nodes:
        for source in node.all_input_nodes:
            assert boxes[source].y + boxes[source].height < boxes[node].y
        assert 0 <= boxes[node].x and boxes[node].x + boxes[node].width <= width
    assert all(box.y + box.height <= height for box in boxes.values())


def test_bytecode_columns_align_matching_instructions():
    out = dl.explain(two_breaks)(dl.ones(2))
    report = out.frames[0].report
    rows = aligned_rows(report.original_code, report.transformed_code)
    equal = [r for r in rows if r.kind == "equal"]
    assert equal and all(r.original.split()[2:] == r.rewritten.split()[2:] for r in equal)
    assert any(r.kind == "insert" for r in rows)  # the graph call is new
    assert [r.original for r in rows if r.original] == [
        r.original for r in aligned_rows(report.original_code, report.original_code)]


def test_recompile_reason_is_reported(tmp_path):
    def breaking_inner(x):
        print(end="")
        return x * 2

    def outer(x):
        return breaking_inner(x).sum() + breaking_inner(x[0]).sum()

    out = dl.explain(outer)(dl.ones(2, 3))
    records = [f for f in out.frames if f.name.endswith("breaking_inner")]
    assert len(records) == 2 and records[0].guard_failure is None
    assert records[1].entry_index == 1 and records[1].guard_failure == "x.ndim: expected 2, got 1"
    page = out.to_html(tmp_path / "r.html")
    assert html.escape(records[1].guard_failure) in open(page).read()


def test_rewritten_source_runs_like_the_original(capsys):
    x = dl.from_numpy(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    out = dl.explain(two_breaks)(x)
    sources = out.rewritten_source
    assert len(sources) == 3
    graphs = [v for ns in out.rewritten_bindings.values() for k, v in ns.items() if k.startswith("__compiled_graph")]
    assert len(graphs) == out.graph_count
    capsys.readouterr()
    result = run_rewritten(out, two_breaks, x)
    assert capsys.readouterr().out == "between graphs\n"
    np.testing.assert_array_equal(result.numpy(), two_breaks(x).numpy())
    first = sources["two_breaks"]
    assert "__compiled_graph_0(x)" in first and "graph break: print()" in first
    assert any("graph break: a Python branch on item()" in s for s in sources.values())


def normalize(x):
    centered = x - x.mean()
    scale = centered.abs().max()
    if scale > 1:
        centered = centered / scale
    return centered * 2


def test_rewritten_branch_on_a_tensor_takes_either_side():
    for values in ([0.0, 1.0, 5.0], [0.0, 0.5, 0.25]):
        x = dl.tensor(values)
        out = dl.explain(normalize)(x)
        source = out.rewritten_source["normalize"]
        assert source.count("graph break: a Python branch") == 1 and "    if " in source
        np.testing.assert_allclose(run_rewritten(out, normalize, x).numpy(), normalize(x).numpy())


def test_gpt_report_is_small(tmp_path):
    workload = WORKLOADS["gpt"]
    out = dl.explain(workload.make(), backend="numpy")(*workload.make_inputs())
    page = tmp_path / "gpt.html"
    out.to_html(page)
    text = page.read_text()
    assert page.stat().st_size < 5_000_000
    shown = out.graphs + out.backward_graphs  # the model has parameters: forward and backward graphs
    assert text.count("<svg") == len(shown) == 2 * out.graph_count >= 2
    assert text.count('class="node') == sum(len(gm.graph.nodes) for gm in shown)


def test_global_state_guards_read_as_words():
    def inner(x):
        print(end="")
        return x * 2

    def outer(x):
        with dl.no_grad():
            inner(x)
        return inner(x)

    out = dl.explain(outer)(dl.ones(2))
    guards = "\n".join(out.guards)
    assert "dl.is_grad_enabled() == True" in guards and "dl.is_grad_enabled() == False" in guards
    assert "dl.get_default_dtype() is dynamo_lite.float32" in guards
    assert "dl.get_default_device() == device(type='cpu')" in guards
    assert " at 0x" not in guards
    records = [f for f in out.frames if f.name.endswith("inner") and f.entry_index == 1]
    assert records and records[0].guard_failure == "dl.is_grad_enabled(): expected False, got True"
