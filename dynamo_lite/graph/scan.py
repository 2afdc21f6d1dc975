"""The ``scan`` node: a loop over a (symbolic) number of steps whose body is a subgraph, run once per step.

NOTE: [scan] ``scan(body, length, init, closed)`` runs ``body(t, *carry, *closed)`` for
``t`` in ``range(length)``. The body returns the new carries (same shapes and dtypes as
``init``) followed by one tensor per step output; the node returns the final carries
followed by each step output stacked along a new leading dim (``length`` rows). The
translator makes one for a Python loop whose trip count is a size (frames/translate/
scan_loop.py), so the graph is the same for every length. This module is the reference
(the eager backend runs it as a Python loop over the body); backends may compile the body.
"""
from __future__ import annotations

from ..ops.core import api as ops
from ..tensor.layout import contiguous_strides
from ..tensor.meta import TensorMeta
from .graph_module import GraphModule
from .shape_prop import ShapeProp


class ScanBody:
    """The body of a scan node and how its outputs split.

    Attributes:
        gm: the body's GraphModule, ``(t, *carries, *closed) -> (*new carries, *step outputs)``.
        n_carry: how many carries.
        n_out: how many per-step outputs.
        run: what the scan calls per step (``gm``, or a backend's compiled version of it).
        loop: None, or what runs the whole scan at once (a backend's compiled loop):
            ``loop(length, init, closed)`` returns the scan's result, or None to run it step by step.
    """

    def __init__(self, gm, n_carry: int, n_out: int):
        self.gm, self.n_carry, self.n_out = gm, n_carry, n_out
        self.run = gm
        self.loop = None

    @property
    def graph(self):
        return self.gm.graph

    def with_runner(self, run, loop=None) -> "ScanBody":
        """A copy whose steps call ``run`` (a compiled body), and whose whole loop ``loop`` runs if given."""
        body = ScanBody(self.gm, self.n_carry, self.n_out)
        body.run, body.loop = run, loop
        return body

    def __repr__(self) -> str:
        ops_count = sum(1 for n in self.gm.graph.nodes if n.op.startswith("call_"))
        return f"<scan body: {self.n_carry} carries, {self.n_out} step outputs, {ops_count} ops>"


def scan(body: ScanBody, length: int, init: tuple, closed: tuple) -> tuple:
    """Run ``body`` ``length`` times (see NOTE: [scan]); returns ``(*final carries, *stacked outputs)``."""
    if body.loop is not None:
        result = body.loop(length, init, closed)
        if result is not None:
            return result
    carry = tuple(init)
    outputs = [[] for _ in range(body.n_out)]
    run, n_carry = body.run, body.n_carry
    for t in range(length):
        result = run(t, *carry, *closed)
        carry = tuple(result[:n_carry])
        for k, value in enumerate(result[n_carry:]):
            outputs[k].append(value)
    return carry + tuple(ops.stack(values) for values in outputs)


def scan_meta(body: ScanBody, length, init: tuple, closed: tuple) -> tuple:
    """What a scan node produces, from its inputs' metas: the body propagated once for the
    carries (same geometry every step), ``length`` rows of each step output stacked."""
    graph = body.gm.graph.copy()
    result = ShapeProp(GraphModule({}, graph)).propagate(0, *init, *closed)
    outs = tuple(result[:body.n_carry])
    for meta in result[body.n_carry:]:
        sizes = (length, *meta._sizes)
        outs += (TensorMeta.from_geometry(sizes, contiguous_strides(sizes), meta._dtype, meta._device),)
    return outs


scan.graph_meta = scan_meta


def is_scan(node) -> bool:
    """True for a scan node."""
    return node.op == "call_function" and node.target is scan
