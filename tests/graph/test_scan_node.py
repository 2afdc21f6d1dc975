"""The scan node's reference semantics (graph/scan.py): a Python loop over the body, stacked outputs."""
from __future__ import annotations

import numpy as np

import dynamo_lite as dl
from dynamo_lite.graph import Graph, GraphModule
from dynamo_lite.graph.scan import ScanBody, is_scan, scan, scan_meta
from dynamo_lite.ops.core.registry import REGISTRY
from dynamo_lite.tensor.meta import TensorMeta


def _body() -> ScanBody:
    """(t, h, x) -> (h * 0.5 + x[t], h * 0.5 + x[t]): one carry, one step output."""
    g = Graph()
    t, h, x = g.placeholder("t"), g.placeholder("h"), g.placeholder("x")
    row = g.call_function(REGISTRY["squeeze"], (g.call_function(REGISTRY["narrow"], (x, 0, t, 1)), (0,)))
    new = g.call_function(REGISTRY["add"], (g.call_function(REGISTRY["mul"], (h, 0.5)), row))
    g.output((new, new))
    return ScanBody(GraphModule({}, g), n_carry=1, n_out=1)


def test_scan_runs_the_body_per_step_and_stacks_outputs():
    x, h0 = dl.randn(6, 3), dl.randn(3)
    final, stacked = scan(_body(), 6, (h0,), (x,))
    h, rows = h0.numpy(), []
    for t in range(6):
        h = h * 0.5 + x.numpy()[t]
        rows.append(h)
    np.testing.assert_allclose(final.numpy(), h, rtol=1e-6)
    np.testing.assert_allclose(stacked.numpy(), np.stack(rows), rtol=1e-6)


def test_scan_meta_gives_final_carries_and_stacked_outputs():
    metas = scan_meta(_body(), 6, (TensorMeta.of(dl.randn(3)),), (TensorMeta.of(dl.randn(6, 3)),))
    assert [tuple(m._sizes) for m in metas] == [(3,), (6, 3)]


def test_a_graph_with_a_scan_node_runs_and_prints():
    g = Graph()
    x, h = g.placeholder("x"), g.placeholder("h")
    node = g.call_function(scan, (_body(), 4, (h,), (x,)))
    g.output(node)
    gm = GraphModule({}, g)
    assert is_scan(node) and "scan_1(scanbody, 4, (h,), (x,))" in gm.code
    final, stacked = gm(dl.ones(4, 2), dl.zeros(2))
    np.testing.assert_allclose(stacked.numpy()[:, 0], [1.0, 1.5, 1.75, 1.875])
    assert "1 carries, 1 step outputs, 4 ops" in repr(node.args[0])
