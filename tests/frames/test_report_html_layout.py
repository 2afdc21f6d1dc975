"""The HTML report stays readable: guards folded with their count, break text wrapped, large graphs summarized."""
import html
import re

import dynamo_lite as dl
from benchmarks.models import WORKLOADS
from dynamo_lite.frames import report_html


def _page(fn, *args, tmp_path):
    out = dl.explain(fn)(*args)
    path = tmp_path / "report.html"
    out.to_html(path)
    return out, path.read_text()


def small(x):
    y = x.sin() * 2
    print("break", end="")
    return y + 1


def test_guards_are_folded_behind_their_count(tmp_path, capsys):
    out, page = _page(small, dl.ones(3), tmp_path=tmp_path)
    folded = re.findall(r'<details class="guards"><summary>(\d+) guard\(s\)[^<]*</summary><pre>(.*?)</pre></details>',
                        page, re.S)
    assert len(folded) == len(out.frames) >= 2
    for (count, text), frame in zip(folded, out.frames):
        lines = [line for line in html.unescape(text).splitlines() if line.strip()]
        assert int(count) == len(lines) == len(frame.report.guards.splitlines()) > 0
    assert "<details open" not in page  # folded by default


def test_break_text_wraps_inside_its_column():
    rule = re.search(r"td\.reason \{([^}]*)\}", report_html.STYLE).group(1)
    assert "white-space: normal" in rule and "overflow-wrap: anywhere" in rule and "max-width" in rule


def test_small_graphs_are_drawn_in_full(tmp_path, capsys):
    out, page = _page(small, dl.ones(3), tmp_path=tmp_path)
    assert all(len(gm.graph.nodes) <= report_html.SUMMARY_NODES for gm in out.graphs)
    assert 'class="picture"' not in page and 'class="histogram' not in page
    assert page.count("<svg") == out.graph_count


def test_a_large_graph_is_a_summary_with_the_picture_behind_a_click(tmp_path):
    workload = WORKLOADS["gpt"]
    out, page = _page(workload.make(), *workload.make_inputs(), tmp_path=tmp_path)
    large = [gm for gm in out.graphs + out.backward_graphs if len(gm.graph.nodes) > report_html.SUMMARY_NODES]
    assert large
    summaries = re.findall(r'<table class="histogram summary">(.*?)</table>', page, re.S)
    assert len(summaries) == len(large)
    nodes = list(large[0].graph.nodes)
    counts = {html.unescape(op): int(n) for op, n in re.findall(r"<tr><td>(.*?)</td><td class=\"count\">(\d+)</td>",
                                                                 summaries[0])}
    assert sum(counts.values()) == len(nodes) and counts["placeholder"] >= 1 and counts["output"] == 1
    assert html.escape(nodes[0].format_node()) in page and html.escape(nodes[-1].format_node()) in page
    pictures = re.findall(r'<details class="picture"><summary>the whole graph drawn \((\d+) nodes; click to show\)'
                          r'</summary>(.*?)</details>', page, re.S)
    assert [int(n) for n, _ in pictures] == [len(gm.graph.nodes) for gm in large]
    assert all("<svg" in picture for _, picture in pictures)
