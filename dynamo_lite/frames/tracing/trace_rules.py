"""Trace rules: which callables the translator inlines, folds on constants, or calls opaquely.

NOTE: [trace rules] User code and dynamo_lite's own Python are *inlined* (their bytecode
is translated). Pure functions of constants (``math``, ``operator``, ...) are *folded*:
called at trace time when every argument is a constant. Everything else from the
standard library or an installed package is *opaque*: never traced and never
instrumented; a call to it is a graph break (it runs eagerly, in program order). A
few library callables have explicit handling instead (``SPECIAL``): they behave as
the translator models them (``functools.partial`` objects, ``functools.reduce``,
``itertools`` iterators, namedtuple and dataclass instances, enum members).
"""
from __future__ import annotations

import os
import sys
import sysconfig
import types

INLINE, FOLD, OPAQUE = "inline", "fold", "opaque"

#: Modules whose builtin functions are pure: folded when every argument is a constant.
FOLDABLE_MODULES = ("math", "cmath", "operator", "_operator")

#: Directories of the standard library and installed packages (opaque code lives there).
_LIBRARY_DIRS = tuple(sorted({os.path.realpath(p) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                              if (p := sysconfig.get_paths().get(key))} | {os.path.realpath(sys.prefix) + os.sep}))
_OWN_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


#: dynamo_lite modules (and packages) whose functions are never inlined: a call to one is a graph break
#: (it runs eagerly, in program order), for the reason given.
EAGER_MODULES = {
    "dynamo_lite.optim.lr_scheduler": "an lr scheduler runs eagerly: it counts its steps in Python ints, which a "
                                      "graph would take as constants (a recompile on every call)",
    "dynamo_lite.autograd.function": "a custom autograd.Function runs eagerly: its apply builds the user's own "
                                     "autograd node around forward, which a graph cannot hold",
    "dynamo_lite.utils.checkpoint": "a checkpointed call runs eagerly: its autograd node reruns the function in "
                                    "backward (NOTE: [checkpoint])",
    "dynamo_lite.amp": "autocast and GradScaler run eagerly: an autocast block is traced with the state on, a "
                       "scaler reads its found-inf flags (NOTE: [autocast in compiled code])",
    "dynamo_lite.distributed": "collectives and DDP's gradient reducer run eagerly: they call MPI on the tensors' "
                               "buffers (NOTE: [DDP under dl.compile])",
    "dynamo_lite.func": "dl.func transforms run eagerly: vmap runs the function per slice and watches the random "
                        "generator, grad and jacrev drive the autograd engine (NOTE: [vmap per slice])",
    "dynamo_lite.frames": "dynamo_lite's compiler API (dl.compile, dl.explain, dl.disable, dl.reset, ...) runs "
                          "eagerly: compiling is not part of the program's graph",
}


def eager_reason(fn) -> str | None:
    """Why calls to ``fn`` run eagerly instead of being inlined (None: they are inlined); a key of
    ``EAGER_MODULES`` covers its submodules too."""
    module = getattr(fn, "__module__", None) or ""
    return next((reason for key, reason in EAGER_MODULES.items() if module == key or module.startswith(key + ".")),
                None)


def rule_for_code(code) -> str:
    """INLINE for user code and dynamo_lite's own, OPAQUE for the standard library and
    installed packages (judged by where the code's file lives)."""
    filename = os.path.realpath(code.co_filename) if not code.co_filename.startswith("<") else code.co_filename
    if filename.startswith(_OWN_PACKAGE):
        return INLINE
    if filename.startswith(_LIBRARY_DIRS) or filename.startswith("<frozen"):
        return OPAQUE
    return INLINE


def rule_for_function(fn) -> str:
    """The rule of a Python function (see ``rule_for_code``); OPAQUE for anything else that carries a
    ``__code__`` (a Cython function's describes its ``.pyx`` source, not bytecode the translator can run)."""
    if not isinstance(fn, types.FunctionType) or not isinstance(fn.__code__, types.CodeType):
        return OPAQUE
    return rule_for_code(fn.__code__)


#: Type names of functions compiled to machine code that still look like Python functions (Cython's carry a
#: ``__code__`` naming their ``.pyx`` line): always called opaquely.
COMPILED_FUNCTION_TYPES = frozenset({"cython_function_or_method", "fused_cython_function", "cyfunction"})


def is_compiled_function(value) -> bool:
    """A Cython (or similar) function object: judged by its type's name, never by reading its attributes."""
    return type(value).__name__ in COMPILED_FUNCTION_TYPES


def is_library_code(code) -> bool:
    """True for code the hook must never instrument nor the translator trace."""
    return rule_for_code(code) == OPAQUE


#: Sentinel of ``TRACE_TIME_VALUES``: the value is the function's own answer, asked at trace time.
ASK_AT_TRACE_TIME = object()

#: dynamo_lite functions whose traced call becomes a constant (no graph break): the value they
#: have inside compiled code, or ASK_AT_TRACE_TIME for a fact fixed for the process (NOTE: [no CUDA device]).
TRACE_TIME_VALUES = {
    "dynamo_lite.compiler.is_compiling": True,
    "dynamo_lite.compiler.is_dynamo_compiling": True,
    "dynamo_lite.compiler.is_exporting": False,
    "dynamo_lite.jit.is_scripting": False,
    "dynamo_lite.jit.is_tracing": False,
    "dynamo_lite.cuda.is_available": ASK_AT_TRACE_TIME,
    "dynamo_lite.cuda.device_count": ASK_AT_TRACE_TIME,
}


def trace_time_value_key(fn) -> str | None:
    """The ``TRACE_TIME_VALUES`` key of ``fn``, or None when its calls are not constants."""
    key = f"{getattr(fn, '__module__', None)}.{getattr(fn, '__qualname__', None)}"
    return key if key in TRACE_TIME_VALUES else None
