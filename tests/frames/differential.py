"""Run a function uncompiled and compiled on fresh inputs and compare everything a user can see.

What is compared, call after call: the result or the exception (type and message),
printed output, and the state afterwards of the arguments and of any extra objects the
test names (globals, class attributes, defaults). Values are compared by content;
identity is compared too: every list, dict, set, tensor and object met while walking
(result, arguments, state) gets a number in visit order, so ``return L, L`` (one list
twice) and ``return L, list(L)`` (two lists) do not look alike, and neither do an
argument mutated in place and a new object returned in its place.
"""
from __future__ import annotations

import contextlib
import io
import math
import types

import numpy as np

import dynamo_lite as dl

#: Objects with an identity that code can observe (``is``, mutation through an alias).
_IDENTITY_TYPES = (list, dict, set, bytearray, dl.Tensor, np.ndarray)


def canonical(value, seen: dict | None = None):
    """A comparable description of ``value``: content, types, and aliasing (see module doc)."""
    seen = {} if seen is None else seen
    return _Walker(seen).walk(value, depth=0)


class _Walker:
    def __init__(self, seen: dict):
        self.seen = seen

    def ref(self, value):
        """(already visited?, the visit number of ``value``)."""
        key = id(value)
        if key in self.seen:
            return True, self.seen[key][0]
        self.seen[key] = (len(self.seen), value)  # keeps value alive, so ids stay unique
        return False, self.seen[key][0]

    def walk(self, value, depth: int):
        if depth > 30:
            return ("deep",)
        if isinstance(value, _IDENTITY_TYPES) or _is_plain_object(value):
            visited, number = self.ref(value)
            if visited:
                return ("ref", number)
        else:
            number = None
        kind = type(value)
        if isinstance(value, dl.Tensor):
            data = np.array(value.detach().cpu().numpy(), copy=True) if value.numel() else np.zeros(tuple(value.shape))
            return ("tensor", number, str(value.dtype), tuple(value.shape), data)
        if isinstance(value, np.ndarray):
            return ("ndarray", number, str(value.dtype), value.shape, np.array(value, copy=True))
        if isinstance(value, (list, tuple)):
            return (kind.__qualname__, number, [self.walk(v, depth + 1) for v in value])
        if isinstance(value, dict):
            return (kind.__qualname__, number, [(self.walk(k, depth + 1), self.walk(v, depth + 1))
                                                for k, v in value.items()])
        if isinstance(value, (set, frozenset)):
            return (kind.__qualname__, number, sorted(repr(v) for v in value))
        if isinstance(value, (types.MappingProxyType,)):
            return ("mappingproxy", sorted(value))
        if kind.__name__ in ("dict_keys", "dict_values", "dict_items"):
            return (kind.__name__, [self.walk(v, depth + 1) for v in value])
        if isinstance(value, float):
            return ("float", "nan" if math.isnan(value) else value)
        if isinstance(value, (int, str, bytes, bool, complex, type(None), range, slice)):
            return (kind.__qualname__, value)
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType)):
            return ("named", kind.__qualname__, getattr(value, "__qualname__", getattr(value, "__name__", "")))
        if _is_plain_object(value):
            state = {k: v for k, v in vars(value).items()}
            return ("object", kind.__qualname__, number, self.walk(state, depth + 1))
        return ("other", kind.__qualname__)


def _is_plain_object(value) -> bool:
    """An instance of a user class with a ``__dict__`` (its attributes are its state)."""
    return (hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType, types.FunctionType,
                                                                  types.MethodType, dl.Tensor))
            and getattr(type(value), "__module__", "") not in ("builtins",))


def assert_canonical_equal(actual, expected, path: str = "") -> None:
    """Compare two ``canonical`` descriptions; the message names the first difference."""
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), f"{path}: expected an array, got {actual!r}"
        assert actual.shape == expected.shape, f"{path}: shape {actual.shape} != {expected.shape}"
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6, err_msg=path, equal_nan=True)
        return
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, type(expected)) and len(actual) == len(expected), \
            f"{path}: {_short(actual)} != {_short(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_canonical_equal(a, e, f"{path}[{i}]")
        return
    assert type(actual) is type(expected) and actual == expected, f"{path}: {actual!r} != {expected!r}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 300 else text[:300] + "..."


def observe(fn, args: tuple, state=None) -> dict:
    """Call ``fn(*args)`` and describe what happened (see the module docstring)."""
    out = io.StringIO()
    result, error = None, None
    with contextlib.redirect_stdout(out):
        try:
            result = fn(*args)
        except Exception as exc:  # the comparison is the point
            error = (type(exc), str(exc))
    watched = state() if state is not None else None
    return {"error": error, "stdout": out.getvalue(), "after": canonical((result, args, watched))}


def assert_transparent(fn, make_args, backend: str, *, calls: int = 3, setup=None, state=None,
                       graphs: int | None = None, breaks: int | None = None, **compile_kwargs):
    """``dl.compile(fn)`` must behave exactly like ``fn``, and must really compile.

    Args:
        fn: the program.
        make_args: ``make_args(call) -> tuple`` of fresh arguments for call number ``call``
            (called once for the eager run and once for the compiled run; values may
            differ between calls, so a result baked in at trace time shows).
        backend: the backend to compile with.
        calls: how many calls to compare (the first compiles, later ones hit the cache).
        setup: ``setup(call)`` restores global state before each run.
        state: ``state() -> object`` the global state to compare after each run.
        graphs: if given, the number of graphs the first translation must produce.
        breaks: if given, the number of graph breaks ``dl.explain`` must report.

    Returns:
        The compiled function.
    """
    compiled = dl.compile(fn, backend=backend, **compile_kwargs)
    for call in range(calls):
        runs = []
        for runner in (fn, compiled):
            if setup is not None:
                setup(call)
            runs.append(observe(runner, make_args(call), state))
        expected, actual = runs
        assert actual["error"] == expected["error"], f"call {call}: compiled raised {actual['error']}, " \
                                                      f"eager {expected['error']}"
        assert actual["stdout"] == expected["stdout"], f"call {call}: printed output differs"
        assert_canonical_equal(actual["after"], expected["after"], f"call {call}: (result, args, state)")
    stats = dl.stats()
    assert stats.frames_compiled >= 1 and stats.graph_count >= 1, f"nothing was compiled: {stats}"
    own = [record for record in stats.fallbacks if record.function == fn.__code__.co_qualname]
    assert not own, f"the function fell back to eager: {own}"
    internal = [record for record in stats.fallbacks if "internal compiler error" in record.reason]
    assert not internal, f"a frame hit an internal compiler error: {internal}"
    if graphs is not None or breaks is not None:
        if setup is not None:
            setup(0)
        report = dl.explain(fn, backend=backend)(*make_args(0))
        if graphs is not None:
            assert report.graph_count == graphs, str(report)
        if breaks is not None:
            assert report.graph_break_count == breaks, str(report)
    return compiled
