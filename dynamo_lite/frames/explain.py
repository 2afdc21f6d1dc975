"""dl.explain: compile a call once, in isolation, and report graphs, breaks and guards."""
from __future__ import annotations

import linecache
import types
from dataclasses import dataclass, field

from .context import CompileConfig
from .errors import Unsupported


@dataclass
class BreakReason:
    """Why part of the program was not captured, where, and what to do about it."""

    reason: str
    filename: str | None
    lineno: int | None
    hint: str = ""

    @property
    def source_line(self) -> str:
        if not self.filename or not self.lineno:
            return ""
        return linecache.getline(self.filename, self.lineno).strip()

    def __str__(self) -> str:
        where = f"{self.filename}:{self.lineno}" if self.filename else "<unknown>"
        text = f"{self.reason}\n    at {where}"
        if self.source_line:
            text += f"\n        {self.source_line}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text


@dataclass
class ExplainOutput:
    """What ``dl.explain(fn)(*args)`` found."""

    graphs: list = field(default_factory=list)
    break_reasons: list = field(default_factory=list)
    guards: list = field(default_factory=list)
    bytecode_diffs: list = field(default_factory=list)
    compile_times: list = field(default_factory=list)
    result: object = None

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

    def __str__(self) -> str:
        lines = [f"Graph count: {self.graph_count}", f"Graph break count: {self.graph_break_count}"]
        ops = self.ops_per_graph
        lines.append(f"Op count: {sum(len(o) for o in ops)}")
        if self.break_reasons:
            lines.append("Break reasons:")
            for i, reason in enumerate(self.break_reasons, 1):
                lines.append(f"  {i}. " + str(reason).replace("\n", "\n     "))
        for i, gm in enumerate(self.graphs):
            lines.append(f"Graph {i} ({len(ops[i])} ops):")
            lines.append("  " + gm.print_readable(print_output=False).replace("\n", "\n  "))
        if self.guards:
            lines.append("Guards:")
            for text in self.guards:
                lines.append("  " + text.replace("\n", "\n  "))
        if self.compile_times:
            lines.append("Compile times (ms): " + ", ".join(f"{t * 1000:.2f}" for t in self.compile_times))
        return "\n".join(lines)


class _Recorder:
    """Wraps the translator to keep every entry and every reason a frame was not captured."""

    def __init__(self, out: ExplainOutput):
        self.out = out

    def __call__(self, request):
        from .convert import convert_frame

        try:
            entry = convert_frame(request)
        except Unsupported as exc:
            exc.located(request.code.co_filename, request.code.co_firstlineno)
            self.out.break_reasons.append(BreakReason(exc.reason, exc.filename, exc.lineno, exc.hint))
            raise
        info = entry.info
        self.out.graphs.extend(info.get("graphs", ()))
        self.out.break_reasons.extend(info.get("break_reasons", ()))
        self.out.guards.append(info.get("guards", ""))
        self.out.bytecode_diffs.append(info.get("bytecode_diff", ""))
        self.out.compile_times.append(info.get("compile_time_s", 0.0))
        return entry


def _fresh_copy(fn):
    """A new function object over ``fn``'s original code, so explaining never touches the
    caches of ``dl.compile``'d code."""
    from .hook import original_code

    copy = types.FunctionType(original_code(fn.__code__), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy


def explain(fn, *, backend="eager"):
    """Run ``fn`` once under the compiler and report what it captured.

    Args:
        fn: a function, bound method or ``dl.nn.Module``.
        backend: the backend the graphs are compiled with.

    Returns:
        A callable taking ``fn``'s arguments and returning an ``ExplainOutput`` with
        ``graphs``, ``graph_count``, ``graph_break_count``, ``break_reasons``,
        ``ops_per_graph``, ``guards``, ``bytecode_diffs``, ``compile_times`` and the call's
        ``result``; ``print()`` it for a report.

    Example:
        >>> report = dl.explain(model)(x)
        >>> print(report.graph_count, report.break_reasons)
    """
    from ..backends.registry import resolve_backend
    from ..nn.module import Module
    from .hook import FrameHook

    def run(*args, **kwargs) -> ExplainOutput:
        out = ExplainOutput()
        hook = FrameHook(translate=_Recorder(out))
        compiler, name = resolve_backend(backend)
        config = CompileConfig(compiler, name)
        if isinstance(fn, Module):
            target, call_args = _fresh_copy(type(fn).forward), (fn, *args)
        elif isinstance(fn, types.MethodType):
            target, call_args = _fresh_copy(fn.__func__), (fn.__self__, *args)
        else:
            target, call_args = _fresh_copy(fn), args
        hook.instrument(target)
        try:
            with hook.activate(config):
                out.result = target(*call_args, **kwargs)
        finally:
            hook.reset()
        return out

    return run
