"""dl.jit: TorchScript's API (script, trace, ScriptModule, annotate ...) mapped onto dl.compile.

TorchScript compiled a function or module from its Python source; dynamo_lite compiles the
same code from its bytecode (``dl.compile``), so ported code keeps its decorators and
annotations and runs compiled. See docs/user_guide.md ("Porting TorchScript code").

Example:
    >>> class Cell(dl.jit.ScriptModule):
    ...     @dl.jit.script_method
    ...     def forward(self, x: Tensor, hx: Tensor) -> Tensor:
    ...         outputs = dl.jit.annotate(List[Tensor], [])
    ...         ...
"""
from __future__ import annotations

from .annotations import Attribute, Final, annotate, export, fork, ignore, interface, script_if_tracing, unused, wait
from .annotations import fuser, optimized_execution
from .scripting import ScriptFunction, ScriptModule, script, script_method, trace, trace_module
from .graphs import ScriptGraph
from .serialization import load, save


def is_scripting() -> bool:
    """Always False: dynamo_lite never scripts code (also inside compiled code).

    Example:
        >>> if not dl.jit.is_scripting(): pass   # the Python-only branch always runs
    """
    return False


def is_tracing() -> bool:
    """Always False: ``dl.jit.trace`` compiles with dl.compile, it never records a trace."""
    return False


__all__ = [
    "Attribute", "Final", "ScriptFunction", "ScriptGraph", "ScriptModule", "annotate", "export", "fork", "fuser",
    "ignore", "interface", "is_scripting", "is_tracing", "load", "optimized_execution", "save", "script",
    "script_if_tracing", "script_method", "trace", "trace_module", "unused", "wait",
]
