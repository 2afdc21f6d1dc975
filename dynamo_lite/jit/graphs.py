"""``graph_for``: the graphs the compiled translation that ran for some inputs holds (printable)."""
from __future__ import annotations

import inspect

from ..frames.runtime.hook import argument_names


class ScriptGraph:
    """The graphs one translation of a scripted function handed to its backend.

    Attributes:
        graphs: the graph modules, in the order the translation runs them (more than one
            where the code has a graph break).
        fallback_reason: why the call ran eagerly (no graph), else None.

    ``str()`` prints every graph; ``nodes()`` lists their nodes; ``op_count`` counts the
    operations (``call_*`` nodes).

    Example:
        >>> print(scripted.graph_for(x, state))
    """

    def __init__(self, graphs: list, fallback_reason: str | None = None):
        self.graphs = list(graphs)
        self.fallback_reason = fallback_reason

    def nodes(self) -> list:
        return [node for gm in self.graphs for node in gm.graph.nodes]

    @property
    def op_count(self) -> int:
        return sum(1 for node in self.nodes() if node.op.startswith("call_"))

    def __str__(self) -> str:
        if not self.graphs:
            return f"<no graph: the call ran eagerly ({self.fallback_reason or 'nothing to capture'})>"
        return "\n".join(str(gm.graph) for gm in self.graphs)

    __repr__ = __str__


def frame_values(target, args: tuple, kwargs: dict) -> tuple:
    """What the compiled frame of ``target`` (a function) receives for a call: its arguments in
    frame order, then the contents of its free variables (as the dispatch prologue passes them)."""
    code = target.__code__
    bound = inspect.signature(target).bind(*args, **kwargs)
    bound.apply_defaults()
    values = []
    for name in argument_names(code):
        if name in bound.arguments:
            values.append(bound.arguments[name])
        else:  # an empty *args or **kwargs
            kind = inspect.signature(target).parameters[name].kind
            values.append(() if kind is inspect.Parameter.VAR_POSITIONAL else {})
    for cell in target.__closure__ or ():
        values.append(cell.cell_contents)
    return tuple(values)


def graph_for(hook, config, target, args: tuple, kwargs: dict) -> ScriptGraph:
    """The graphs of the cache entry of ``target`` under ``config`` whose guards accept this call
    (the caller has run the call, so there is one unless the function ran eagerly)."""
    cache = hook.cache_for(target)
    if cache is None:
        return ScriptGraph([], "the function was never compiled")
    values = frame_values(target, args, kwargs)
    for entry in cache.entries_for(config):
        try:
            accepted = entry.guard(values)
        except Exception:  # a guard that raises rejects the call, as in dispatch
            accepted = False
        if accepted:
            return ScriptGraph(entry.report.graphs, entry.report.fallback_reason)
    return ScriptGraph([], cache.last_failure or "no translation accepts these inputs")
