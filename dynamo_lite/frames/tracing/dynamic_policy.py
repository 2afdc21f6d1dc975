"""Which dims of a graph input get symbolic sizes: ``dl.compile(dynamic=...)``, marks, and sizes that changed.

NOTE: [automatic dynamic shapes] With ``dynamic=None`` a frame is compiled static first.
Each compile records, per input, the sizes it saw (in the frame's cache); a dim whose
size differs from an earlier compile is marked changed for good, and every later
compile of the frame gives it a symbol. So the recompile that a new sequence length
causes makes the sequence dim symbolic, and that entry serves every later length.
``dynamic=True`` gives every dim a symbol from the first compile, ``dynamic=False``
none. ``dl.mark_dynamic`` / ``dl.mark_static`` on a tensor add or forbid dims (a static
mark wins). Sizes 0 and 1 are always specialized (see NOTE: [symbolic inputs]).

NOTE: [symbolic int inputs] A plain ``int`` the frame receives (an argument, or a local
a resume function is handed after a graph break, such as ``n = x.shape[1]``) follows
the same policy as a size: static (guarded by value) until a compile sees it changed,
symbolic from then on (from the first compile with ``dynamic=True``; never with
``False``; 0 and 1 stay specialized). A symbolic int is guarded by type and bound by
the shape guard (``s2 = n``); the graph reads it as an int input only where an op
needs its value. To the program it is an int (NOTE: [observing a symbolic int]): what
needs its concrete value (``range(n)``, ``str(n)``) specializes it as it does a size. So
a break in the middle of a model no longer compiles its resume function once per
sequence length.
"""
from __future__ import annotations

from ...tensor.layout import normalize_dim

DYNAMIC_ATTR = "_dynamo_lite_dynamic_dims"
STATIC_ATTR = "_dynamo_lite_static_dims"


def marked_dims(tensor, attr: str) -> frozenset:
    return tensor.__dict__.get(attr, frozenset())


class DynamicPolicy:
    """``policy(source, tensor) -> dims`` for one translation.

    Args:
        mode: the ``dynamic`` option of ``dl.compile`` (None, True or False).
        history: the frame's record of sizes per input source name (updated here).
    """

    def __init__(self, mode, history: dict | None):
        self.mode = mode
        self.history = history if history is not None else {}

    def __call__(self, source, tensor) -> tuple:
        sizes = tensor._sizes
        changed = self._merge(source.name(), sizes)
        if self.mode is False:
            return ()
        if self.mode is True:
            dims = set(range(len(sizes)))
        else:
            dims = set(changed) | set(marked_dims(tensor, DYNAMIC_ATTR))
        return tuple(sorted(dims - set(marked_dims(tensor, STATIC_ATTR))))

    def int_is_dynamic(self, source, value: int) -> bool:
        """Whether the frame's int ``value`` at ``source`` gets a symbol (NOTE: [symbolic int inputs])."""
        changed = self._merge(source.name(), (value,))
        if self.mode is False or value < 2:
            return False
        return self.mode is True or bool(changed)

    def float_is_dynamic(self, source, value: float) -> bool:
        """Whether an optimizer's float at ``source`` is lifted (NOTE: [lifted floats])."""
        changed = self._merge(source.name(), (value,))
        return self.mode is not False and (self.mode is True or bool(changed))

    def _merge(self, name: str, sizes: tuple) -> tuple:
        """Record ``sizes``; the dims that ever changed (None in the record)."""
        seen = self.history.get(name)
        if seen is None or len(seen) != len(sizes):
            self.history[name] = tuple(sizes)
            return ()
        merged = tuple(None if old is None or old != new else old for old, new in zip(seen, sizes))
        self.history[name] = merged
        return tuple(d for d, size in enumerate(merged) if size is None)


def _mark(tensor, dims, attr: str) -> None:
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    normalized = {normalize_dim(d, tensor.ndim) for d in dims}
    tensor.__dict__[attr] = marked_dims(tensor, attr) | normalized


def mark_dynamic(tensor, dims) -> None:
    """Give ``tensor``'s ``dims`` symbolic sizes when a compiled function first sees it.

    Eager code is unaffected: the mark is only read by the compiler. A size of 0 or 1
    stays specialized.

    Args:
        tensor: a graph input of a compiled function.
        dims: a dim or a sequence of dims (negative dims count from the end).

    Example:
        >>> x = dl.randn(32, 10)
        >>> dl.mark_dynamic(x, 0)
        >>> dl.compile(model)(x)  # one graph for every batch size >= 2
    """
    _mark(tensor, dims, DYNAMIC_ATTR)


def mark_static(tensor, dims) -> None:
    """Keep ``tensor``'s ``dims`` static even when they change or ``dynamic=True``.

    Example:
        >>> dl.mark_static(x, 1)
    """
    _mark(tensor, dims, STATIC_ATTR)
