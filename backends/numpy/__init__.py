"""The ``numpy`` backend: straight-line NumPy code with fused, cache-blocked pointwise loops.

Pipeline (one module each): ``simplify`` (exact algebraic rewrites) -> fusion groups
(``dynamo_lite.graph.passes.fusion``) -> ``values`` (memory root and geometry of every
node) -> ``memory`` (liveness, pooled buffers) -> ``fused`` / ``blocking`` / ``templates``
(block loops) -> ``codegen`` + ``compiler`` (the generated function per input signature).
"""
from __future__ import annotations

import logging
import os

from ..registry import register_backend
from ..report_notes import record_fused_groups
from .blocking import DEFAULT_BLOCK_BYTES
from .compiler import MAX_SIGNATURES, Program, Specializations
from .runtime import BlockWorkers
from .scan import compile_scan_bodies

__all__ = ["BlockWorkers", "DEFAULT_BLOCK_BYTES", "MAX_SIGNATURES", "NumpyBackend", "Program", "Specializations", "numpy_backend"]

graph_log = logging.getLogger("dynamo_lite.graph")

# More threads rarely pay: a group is split only into shares of at least 1 MiB.
MAX_DEFAULT_THREADS = 8


class NumpyBackend:
    """A numpy backend with its own options; ``dl.compile(fn, backend=NumpyBackend(...))``.

    Args:
        block_bytes: bytes of one operand per block in fused loops.
        threads: threads sharing a large fused group (default: the CPUs this process may
            use, at most ``MAX_DEFAULT_THREADS``).

    Example:
        >>> f = dl.compile(fn, backend=NumpyBackend(block_bytes=64 * 1024, threads=1))
    """

    __name__ = "numpy"
    symbolic_shapes = True  # specializes per signature itself (NOTE: [signatures])

    def __init__(self, block_bytes: int = DEFAULT_BLOCK_BYTES, threads: int | None = None):
        self.block_bytes = block_bytes
        self.threads = threads if threads is not None else min(_usable_cpus(), MAX_DEFAULT_THREADS)
        self.workers = BlockWorkers(self.threads)

    def __call__(self, gm, example_inputs):
        compile_scan_bodies(gm, self)  # NOTE: [numpy scan bodies]
        specializations = Specializations(gm, self.block_bytes, self.workers)
        function = specializations.build(list(example_inputs), propagate=False)
        program = specializations.programs[-1] if specializations.programs else None
        # Shown by debug mode next to the graph (NOTE: [backend code in debug output]).
        gm.backend_code = _describe(program, specializations.eager_reason)
        record_fused_groups(gm, [g.group.nodes for g in program.groups] if program else [])
        if program is not None and graph_log.isEnabledFor(logging.DEBUG):
            graph_log.debug("numpy code of %s:\n%s", getattr(gm, "class_name", "graph"), gm.backend_code)
        return function

    def __repr__(self) -> str:
        return f"NumpyBackend(block_bytes={self.block_bytes}, threads={self.threads})"


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _describe(program, reason) -> str:
    if program is None:
        return f"# numpy backend: this graph runs eagerly ({reason})\n"
    return f"# numpy backend: {program.summary()}\n{program.source}"


numpy_backend = NumpyBackend()
register_backend("numpy", numpy_backend, devices=("cpu",), priority=10)
