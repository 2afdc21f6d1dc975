"""The ``native`` backend: the NumPy backend's program with fused pointwise groups as C kernels.

The graph goes through the numpy backend's pipeline (simplify, fusion groups, memory
plan, generated function per signature); each fused group whose members all have an
exact C lowering (``c_ops``) becomes one OpenMP loop (``kernel``) in a shared object
per generated function, built by the system compiler and cached on disk
(``toolchain``). Every other node runs as in the numpy backend. Without a C compiler
the backend logs why once and compiles with the numpy backend.
"""
from __future__ import annotations

import logging

from ..numpy import NumpyBackend, numpy_backend
from ..numpy.compiler import Specializations
from ..registry import register_backend, register_tier
from ..report_notes import record_build_units, record_fused_groups
from ..tiered import Tier
from .call_clock import measuring_clock
from .lowering import NativeLowering
from .scan_loop import compile_native_scans
from .threads import THREADS, get_num_threads, set_num_threads
from .toolchain import BuildError, build, cache_dir, compiler_available, find_compiler

__all__ = ["BuildError", "NativeBackend", "cache_dir", "compiler_available", "find_compiler", "get_num_threads",
           "native_backend", "set_num_threads"]

log = logging.getLogger("dynamo_lite")
graph_log = logging.getLogger("dynamo_lite.graph")


class NativeBackend(NumpyBackend):
    """The native backend; ``dl.compile(fn, backend="native")`` compiles synchronously.

    Args:
        fall_back: without a compiler, or when a build fails, compile with the numpy backend
            (logged once); False raises ``BuildError`` instead (the upper tier of ``auto``).
    """

    __name__ = "native"

    def __init__(self, *, fall_back: bool = True):
        super().__init__()
        self.fall_back = fall_back
        self._reported: set = set()

    def __call__(self, gm, example_inputs):
        if not self.fall_back:
            return self.compile_or_raise(gm, example_inputs)
        reason = self.unavailable()
        if reason is not None:
            self._report(f"native backend unavailable, using numpy: {reason}")
            return _ran_by(numpy_backend(gm, example_inputs), "numpy")
        try:
            return self.compile_or_raise(gm, example_inputs)
        except BuildError as exc:
            self._report(f"native build failed, using numpy: {exc}")
            return _ran_by(numpy_backend(gm, example_inputs), "numpy")

    @staticmethod
    def unavailable() -> str | None:
        """Why native kernels cannot be built here (no C compiler), or None."""
        available, reason = compiler_available()
        return None if available else reason

    def compile_or_raise(self, gm, example_inputs):
        """Compile ``gm`` with C kernels (the upper tier of ``auto``).

        Raises:
            BuildError: no compiler, or it rejected the generated source.
        """
        compile_native_scans(gm, self)  # NOTE: [native scan loops]
        lowering = NativeLowering(build, THREADS)
        specializations = Specializations(gm, self.block_bytes, self.workers, lowering)
        function = specializations.build(list(example_inputs), propagate=False)
        program = specializations.programs[-1] if specializations.programs else None
        gm.backend_code = _describe(program, specializations.eager_reason, lowering)
        record_fused_groups(gm, [lowering.fused_nodes(g.group) for g in program.groups] if program else [])
        record_build_units(gm, lowering.build_units)
        if program is not None and graph_log.isEnabledFor(logging.DEBUG):
            graph_log.debug("native code of %s:\n%s", getattr(gm, "class_name", "graph"), gm.backend_code)
        return function

    def _report(self, message: str) -> None:
        if message not in self._reported:  # once per reason, not once per graph
            self._reported.add(message)
            log.warning(message)

    def __repr__(self) -> str:
        return "NativeBackend()" if self.fall_back else "NativeBackend(fall_back=False)"


def _ran_by(function, name: str):
    """Name the backend whose code ``function`` runs (``registry.backend_name_of``), where it takes attributes."""
    try:
        function.backend_name = name
    except AttributeError:  # a bound method (a graph the numpy backend runs eagerly)
        pass
    return function


def _describe(program, reason, lowering) -> str:
    if program is None:
        return f"# native backend: this graph runs eagerly ({reason})\n"
    c_part = f"/* C kernels of this graph */\n{lowering.built_source}" if lowering.built_source else "/* no C kernels */\n"
    return f"# native backend: {program.summary()}\n{program.source}\n{c_part}"


native_backend = NativeBackend()
register_backend("native", native_backend, devices=("cpu",))
# A backend object, not the bound method: compile_graph reads its symbolic_shapes (a graph
# with symbolic sizes goes to it whole, specialized per signature inside).
register_tier("numpy", Tier("native", NativeBackend(fall_back=False), native_backend.unavailable, measuring_clock))
