"""dl.explain: compile a call once, in isolation, and report graphs, breaks and guards.

NOTE: [breaks counted once] A break inside an inlined callee stops the caller's graph at the
call, which then runs eagerly; the callee's own frame is compiled when it runs and breaks
at the same place. Both translations record the break (the caller's with ``callee`` set), but
explain and the HTML report count and list it once: the callee's record
(``dl.stats().graph_breaks`` counts it once too: CompileStats.count_breaks).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..backends.registry import backend_name_of, resolve_backend
from . import api
from .report import BreakReason, TranslationReport
from .report_html import write_report
from .runtime.context import CompileConfig
from .translate import debug


@dataclass
class FrameRecord:
    """One translation of an explain run, in execution order (what the HTML report shows).

    Attributes:
        name: the frame's qualified name.
        report: its TranslationReport (graphs, guards, breaks, original and rewritten code).
        backend_time_s: time spent in the backend compiling its graphs.
        guard_failure: why an earlier entry for the same code did not match this call
            (why it recompiled); None for a first translation.
        entry_index: how many entries the code had before this one.
    """

    name: str
    report: TranslationReport
    backend_time_s: float = 0.0
    guard_failure: str | None = None
    entry_index: int = 0

    @property
    def trace_time_s(self) -> float:
        return max(self.report.compile_time_s - self.backend_time_s, 0.0)


@dataclass
class ExplainOutput:
    """What ``dl.explain(fn)(*args)`` found."""

    graphs: list = field(default_factory=list)
    backward_graphs: list = field(default_factory=list)  # of graphs compiled for training
    break_reasons: list = field(default_factory=list)
    guards: list = field(default_factory=list)
    bytecode_diffs: list = field(default_factory=list)
    compile_times: list = field(default_factory=list)
    frames: list = field(default_factory=list)
    compile_notes: list = field(default_factory=list)  # torch.compile arguments without effect (NOTE: [compile modes])
    result: object = None
    compiled: dict = field(default_factory=dict)  # id(graph) -> (graph, backend's function, backend name)

    def backend_of(self, gm) -> str:
        """The backend whose code runs ``gm`` now (``auto`` names what it chose, and a tier switch)."""
        _, function, name = self.compiled.get(id(gm), (None, None, "?"))
        return backend_name_of(function, name)

    def measurement_of(self, gm) -> str | None:
        """How ``auto`` chose what runs ``gm``: each candidate's measured time and the choice, or None."""
        _, function, _ = self.compiled.get(id(gm), (None, None, "?"))
        measurement = getattr(function, "measurement", None)
        return measurement() if callable(measurement) else None

    def add_breaks(self, reasons) -> None:
        """Record a translation's breaks, each break once: a caller's report of a break inside a callee gives
        way to the callee's own frame's report of it (NOTE: [breaks counted once])."""
        for reason in reasons:
            known = {r.key for r in self.break_reasons}
            if reason.callee is not None and reason.key in known:
                continue
            if reason.callee is None:
                self.break_reasons[:] = [r for r in self.break_reasons if r.callee is None or r.key != reason.key]
            self.break_reasons.append(reason)

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def graph_break_count(self) -> int:
        return len(self.break_reasons)

    @property
    def ops_per_graph(self) -> list:
        return [
            [node.target for node in gm.graph.nodes if node.op in ("call_function", "call_method", "call_module")]
            for gm in self.graphs
        ]

    @property
    def rewritten_source(self) -> dict:
        """Qualified name -> the rewritten code of each transformed frame (compiled frames and
        resume functions) as Python source; ``rewritten_bindings`` names its constants."""
        return {f.name: f.report.rewritten.source for f in self.frames if f.report.rewritten is not None}

    @property
    def rewritten_bindings(self) -> dict:
        """Qualified name -> the objects the rewritten source names (graphs, resume functions)."""
        return {f.name: f.report.rewritten.bindings for f in self.frames if f.report.rewritten is not None}

    def __str__(self) -> str:
        lines = [f"Graph count: {self.graph_count}", f"Graph break count: {self.graph_break_count}"]
        ops = self.ops_per_graph
        lines.append(f"Op count: {sum(len(o) for o in ops)}")
        if self.break_reasons:
            lines.append("Break reasons:")
            for i, reason in enumerate(self.break_reasons, 1):
                lines.append(f"  {i}. " + str(reason).replace("\n", "\n     "))
        unrolled = [loop for frame in self.frames for loop in frame.report.unrolled_loops]
        if unrolled:
            lines.append("Loops unrolled (not scanned):")
            lines.extend(f"  {file}:{line}: {why}" for file, line, why in unrolled)
        for i, gm in enumerate(self.graphs):
            lines.append(f"Graph {i} ({len(ops[i])} ops, backend {self.backend_of(gm)}):")
            measured = self.measurement_of(gm)
            if measured:
                lines.append(f"  measured: {measured}")
            if getattr(gm, "build_units", None):
                lines.append(f"  {gm.build_units}")
            lines.append("  " + gm.print_readable(print_output=False).replace("\n", "\n  "))
        for i, gm in enumerate(self.backward_graphs):
            lines.append(f"Backward graph {i}:")
            lines.append("  " + gm.print_readable(print_output=False).replace("\n", "\n  "))
        if self.guards:
            lines.append("Guards:")
            for text in self.guards:
                lines.append("  " + text.replace("\n", "\n  "))
        if self.compile_notes:
            lines.append("Compile options without effect:")
            lines.extend(f"  {note}" for note in self.compile_notes)
        if self.compile_times:
            lines.append("Compile times (ms): " + ", ".join(f"{t * 1000:.2f}" for t in self.compile_times))
        for name, source in self.rewritten_source.items():
            lines.append(f"Rewritten code of {name}:")
            lines.append("  " + source.rstrip("\n").replace("\n", "\n  "))
        return "\n".join(lines)

    def to_html(self, path, *, graphviz: bool = False) -> str:
        """Write the self-contained HTML compile report to ``path`` and return the path.

        Args:
            path: the file to write.
            graphviz: draw the graphs with Graphviz's ``dot`` (only if it is installed)
                instead of dynamo_lite's own layout.

        Example:
            >>> dl.explain(model)(x).to_html("report.html")
        """
        return write_report(self, path, graphviz=graphviz)


class ExplainBackend:
    """The backend of an explain run: compiles with the chosen backend and is told of
    every translation (``convert_frame`` calls ``observe_translation``). Being a fresh
    object, it also makes the run's compile config unlike any other, so its cache
    entries are never shared with ``dl.compile``'s and can be removed afterwards."""

    def __init__(self, compiler, out: ExplainOutput, name: str = "?"):
        self.compiler, self.out, self.name = compiler, out, name
        self.backend_time_s = 0.0  # of the translation under way

    def __call__(self, gm, example_inputs):
        started = time.perf_counter()
        try:
            function = self.compiler(gm, example_inputs)
            self.out.compiled[id(gm)] = (gm, function, self.name)
            return function
        finally:
            self.backend_time_s += time.perf_counter() - started

    def observe_translation(self, request, entry) -> None:
        report = debug.with_diffs(entry.report)
        cache = request.hook.cache_for(request.code)
        earlier = cache.entries_for(request.config) if cache is not None else []
        failure = cache.first_failure(request.config, request.values) if earlier else None
        name = getattr(request.code, "co_qualname", request.code.co_name)
        self.out.frames.append(FrameRecord(name, report, self.backend_time_s, failure, len(earlier)))
        self.backend_time_s = 0.0
        self.out.graphs.extend(report.graphs)
        self.out.backward_graphs.extend(report.backward_graphs)
        self.out.add_breaks(report.break_reasons)
        self.out.guards.append(report.guards)
        if report.bytecode_diff:
            self.out.bytecode_diffs.append(report.bytecode_diff)
        self.out.compile_times.append(report.compile_time_s)


def explain(fn, *, backend="eager", dynamic=None):
    """Run ``fn`` once under the compiler and report what it captured.

    The call goes through the same frame hook as ``dl.compile`` (so functions it
    instrumented earlier are compiled here too), under a configuration of its own whose
    cache entries are dropped afterwards; ``dl.stats()`` is left as it was.

    Args:
        fn: a function, bound method or ``dl.nn.Module``.
        backend: the backend the graphs are compiled with.
        dynamic: as for ``dl.compile``; with symbolic sizes, ``guards`` lists each symbol
            with the dim it is read from and the shape guards.

    Returns:
        A callable taking ``fn``'s arguments and returning an ``ExplainOutput`` with
        ``graphs``, ``graph_count``, ``graph_break_count``, ``break_reasons``,
        ``ops_per_graph``, ``guards``, ``bytecode_diffs``, ``compile_times``, ``frames`` (one
        ``FrameRecord`` per translation), ``rewritten_source`` (the rewritten code as Python)
        and the call's ``result``; ``print()`` it for a report, ``to_html(path)`` for a page.

    Example:
        >>> report = dl.explain(model)(x)
        >>> print(report.graph_count, report.break_reasons)
    """
    def run(*args, **kwargs) -> ExplainOutput:
        out = ExplainOutput(compile_notes=list(_compile_notes(fn)))
        compiler, name = resolve_backend(backend)
        config = CompileConfig(ExplainBackend(compiler, out, name), f"explain({name})", dynamic=dynamic)
        hook = api.default_hook  # read per call: tests swap in their own hook
        with hook.stats.saved() as before:
            try:
                out.result = api._compile(fn, config, hook)(*args, **kwargs)
            finally:
                internal = [r for r in hook.stats.fallbacks if r not in before.fallbacks
                            and r.reason.startswith("internal compiler error")]
                out.break_reasons.extend(BreakReason(r.reason, r.filename, r.lineno) for r in internal)
                hook.drop_entries(config)
        return out

    return run


def _compile_notes(fn) -> tuple:
    """The notes of the ``dl.compile`` call that made ``fn`` (a compiled function or module); () otherwise."""
    wrapper = fn.__dict__.get("_compiled_call", fn) if isinstance(getattr(fn, "__dict__", None), dict) else fn
    config = getattr(wrapper, "_dynamo_lite_config", None)
    return getattr(config, "notes", ())
