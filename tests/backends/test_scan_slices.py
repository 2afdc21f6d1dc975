"""Sums of zero-padded slices in scan bodies merged into one tensor (NOTE: [padded slice sums])."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from dynamo_lite.backends.numpy.scan_slices import merge_padded_slices
from dynamo_lite.graph import Graph, GraphModule
from dynamo_lite.ops.core.registry import REGISTRY
from tests.helpers import assert_equal_values


def _padded_sum(spans):
    """``sum over (start, stop) of zeros(3, 8) with its [:, start:stop] set to a piece of x``."""
    g = Graph()
    x = g.placeholder("x")
    total = None
    for start, stop in spans:
        piece = g.call_function(REGISTRY["mul"], (g.call_function(REGISTRY["narrow"], (x, 1, start, stop - start)), 2.0))
        zeros = g.call_function(REGISTRY["zeros"], (), {"size": (3, 8), "dtype": dl.float32, "device": dl.device("cpu")})
        g.call_function(REGISTRY["copy_"], (g.call_function(REGISTRY["narrow"], (zeros, 1, start, stop - start)), piece))
        total = zeros if total is None else g.call_function(REGISTRY["add"], (total, zeros))
    g.output((total,))
    return g


def _count(graph, name):
    return sum(1 for n in graph.nodes if getattr(n.target, "name", None) == name)


@pytest.mark.parametrize("spans", [[(0, 2), (2, 4), (4, 8)], [(6, 8), (0, 3)], [(0, 4), (4, 8)]])
def test_disjoint_slices_are_written_into_one_zero_tensor(spans):
    x = dl.randn(3, 8)
    graph = _padded_sum(spans)
    expected = GraphModule({}, graph.copy())(x)
    assert merge_padded_slices(graph) == 1
    assert _count(graph, "zeros") == 1 and _count(graph, "add") == 0 and _count(graph, "copy_") == len(spans)
    graph.lint()
    assert_equal_values(GraphModule({}, graph)(x), expected, rtol=0, atol=0)


def test_overlapping_slices_still_add_up():
    x = dl.randn(3, 8)
    graph = _padded_sum([(0, 4), (2, 6)])
    expected = GraphModule({}, graph.copy())(x)
    assert merge_padded_slices(graph) == 0
    assert _count(graph, "add") == 1
    assert_equal_values(GraphModule({}, graph)(x), expected, rtol=0, atol=0)
