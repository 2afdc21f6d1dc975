"""Scan bodies on the cupy backend: each body lowered once to fused kernels, launched per step.

NOTE: [cupy scan bodies] As on numpy (NOTE: [numpy scan bodies]) the body is rewritten to take
its step's slices in place of the inputs it slices and no step, and compiled by the cupy
backend on its first step; its kernels take sizes and strides as arguments (NOTE: [sizes as
kernel arguments]), so one lowering serves every step, length and size. Its kernels are
generated for their inputs' stride patterns (a broadcast input is read otherwise), so every
input is passed contiguous: a step's slice is a view when it is contiguous, else a copy, and
so are the carries (an initial state may be a broadcast or transposed tensor). The steps run
from Python, each launching the body's fused kernels and products.
"""
from __future__ import annotations

from dynamo_lite.graph.shape_prop import ShapeProp
from dynamo_lite.ops.core import api as ops

from ..numpy.scan import NumpyScanRunner, compile_scan_bodies


class CupyScanRunner(NumpyScanRunner):
    """``run(t, *carries, *closed)`` of a scan body lowered by the cupy backend."""

    take = staticmethod(lambda tensor, dim, row: _contiguous(ops.select(tensor, dim, row)))
    loop = None  # steps stacked by the scan itself (on the device)

    def __init__(self, backend, graph, sliced: dict, plan: tuple, n_carry: int, reversed_inputs=frozenset()):
        super().__init__(backend, graph, sliced, plan, n_carry, reversed_inputs)
        self.gm.class_name = "ScanBodyCupy"

    def __call__(self, t, *values):
        values = tuple(_contiguous(v) for v in values)
        if self.function is None:  # the body's metas are the traced example's: lower for these inputs
            carries, closed = values[:self.n_carry], values[self.n_carry:]
            args = self.arguments(t, carries, closed)
            ShapeProp(self.gm).propagate(*args)
            self.function = self.backend(self.gm, args)
        return super().__call__(t, *values)


def _contiguous(value):
    return value.contiguous() if hasattr(value, "is_contiguous") and not value.is_contiguous() else value


def compile_cupy_scan_bodies(gm, backend) -> None:
    """Give every scan node of ``gm`` a body lowered by the cupy ``backend`` (in place)."""
    compile_scan_bodies(gm, backend, CupyScanRunner)
