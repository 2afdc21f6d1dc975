"""Values around a scanned loop: a range over a size (scanned when a for-loop walks it) and a
list a scan filled (one stacked tensor, consumed by ``dl.stack``/``dl.cat``/``len``).

See NOTE: [scan] in graph/scan.py and NOTE: [loops traced once] in translate/scan_loop.py.
"""
from __future__ import annotations

from ...errors import Unsupported
from ....ops.core import api as ops
from ....tensor.symint import SymInt
from .base import ConstantVariable, SymIntVariable, VariableTracker
from .containers import TupleVariable
from .iterators import IteratorVariable
from .tensor import TensorVariable, TracedCallableVariable


class ScanUnfit(Unsupported):
    """A scanned loop's result was used in a way a scan cannot express: translate the frame
    again with that loop unrolled (``loop`` is ``(code, FOR_ITER index)``)."""

    def __init__(self, reason: str, loop):
        super().__init__(reason)
        self.loop = loop


class SymbolicRangeVariable(VariableTracker):
    """``range(n)`` for a symbolic ``n``: iterated by a for-loop, it may become a scan; any
    other use reads it as the concrete range (specializing ``n``, as before)."""

    def __init__(self, stop: SymInt):
        self.stop = stop

    def python_type(self) -> type:
        return range

    def is_python_constant(self) -> bool:
        return True

    def as_python_constant(self):
        return range(int(self.stop))

    def unpack(self, tx) -> list:
        return [ConstantVariable(i) for i in self.as_python_constant()]

    def iterate(self, tx):
        return ScanRangeIterator(self)

    def truth(self, tx) -> bool:
        return bool(self.stop > 0)

    def reconstruct(self, cg) -> None:
        cg.load_const(self.as_python_constant())

    def __repr__(self) -> str:
        return f"SymbolicRangeVariable({self.stop})"


class ScanRangeIterator(IteratorVariable):
    """The iterator of a SymbolicRangeVariable: FOR_ITER tries a scan before the first item;
    otherwise its items are the concrete range's."""

    def __init__(self, range_variable: SymbolicRangeVariable):
        super().__init__()
        self.range_variable = range_variable
        self.materialized = False

    @property
    def scan_length(self):
        return self.range_variable.stop if not self.materialized and self.index == 0 else None

    def scan_item(self, tx, step: SymInt) -> VariableTracker:
        return ConstantVariable(step)

    def next_item(self, tx):
        if not self.materialized:
            self.items = self.range_variable.unpack(tx)
            self.materialized = True
        return super().next_item(tx)

    def save_state(self):
        return self.index, self.materialized, list(self.items)

    def restore_state(self, state) -> None:
        self.index, self.materialized, self.items = state[0], state[1], list(state[2])


def symbolic_range(tx, args: list, kwargs: dict):
    """``range(n)`` / ``range(0, n)`` with a symbolic ``n`` as a SymbolicRangeVariable, else None."""
    if kwargs or not args or len(args) > 2 or getattr(tx.output, "scan_disabled", False):
        return None
    if len(args) == 2 and not (isinstance(args[0], ConstantVariable) and args[0].value == 0
                               and not isinstance(args[0], SymIntVariable)):
        return None
    stop = args[-1]
    if not isinstance(stop, SymIntVariable) or type(stop.value) is not SymInt:
        return None
    return SymbolicRangeVariable(stop.value)


class ScannedListVariable(VariableTracker):
    """A list a scanned loop appended one tensor to per step: held as those tensors stacked
    (``stacked``, the steps along dim 0). ``dl.stack``/``dl.cat`` of it, ``len``, reversing it
    (``[::-1]``) and indexing it are exact; any other use asks for the loop to be unrolled."""

    def __init__(self, stacked: TensorVariable, length: SymInt, loop):
        self.stacked, self.steps, self.loop = stacked, length, loop

    consumes_calls = True  # library calls with it as an argument come to consume_call

    def python_type(self) -> type:
        return list

    def consume_call(self, tx, fn, args: list, kwargs: dict):
        return consume_scanned(tx, fn, args, kwargs)

    def unfit(self, what: str) -> ScanUnfit:
        return ScanUnfit(f"{what} of a list a scanned loop built", self.loop)

    def is_python_constant(self) -> bool:
        return False

    def as_python_constant(self):
        raise self.unfit("reading the items")

    def as_traceable(self):
        raise self.unfit("passing on")

    def unpack(self, tx) -> list:
        raise self.unfit("iteration")

    def truth(self, tx) -> bool:
        return True  # at least one step: the loop's length is a size >= 1

    def length(self, tx):
        return self.steps

    def getitem(self, tx, key: VariableTracker) -> VariableTracker:
        if isinstance(key, ConstantVariable) and isinstance(key.value, slice) and key.value == slice(None, None, -1):
            flipped = TracedCallableVariable(lambda s: ops.flip(s, (0,)), "flip").call(tx, [self.stacked], {})
            return ScannedListVariable(flipped, self.steps, self.loop)
        if isinstance(key, ConstantVariable) and type(key.value) in (int, SymInt):
            return TracedCallableVariable(lambda s, i: s[i], "getitem").call(tx, [self.stacked, key], {})
        raise self.unfit("this subscript")

    def var_getattr(self, tx, name: str) -> VariableTracker:
        raise self.unfit(f"the method {name}")

    def reconstruct(self, cg) -> None:
        raise self.unfit("keeping past the graph")

    def __repr__(self) -> str:
        return f"ScannedListVariable({self.stacked}, {self.steps})"


def _stack(tx, scanned, dim=0):
    d = dim.as_python_constant() if isinstance(dim, VariableTracker) else dim
    return TracedCallableVariable(lambda s: ops.movedim(s, 0, d if d >= 0 else d + s.ndim), "stack").call(
        tx, [scanned.stacked], {})


def _cat(tx, scanned, dim=0):
    d = dim.as_python_constant() if isinstance(dim, VariableTracker) else dim

    def cat(s):
        item_dims = s.ndim - 1
        at = d if d >= 0 else d + item_dims
        return ops.flatten(ops.movedim(s, 0, at), at, at + 1)

    return TracedCallableVariable(cat, "cat").call(tx, [scanned.stacked], {})


#: Library functions that consume a scanned list, keyed by the function.
CONSUMERS = {ops.stack: _stack, ops.cat: _cat}


def consume_scanned(tx, fn, args: list, kwargs: dict):
    """``fn(*args)`` where an argument is a ScannedListVariable: exact for the CONSUMERS (the
    list first), else the loop is unrolled (ScanUnfit)."""
    scanned = next(a for a in list(args) + list(kwargs.values()) if isinstance(a, ScannedListVariable))
    consumer = CONSUMERS.get(fn)
    if consumer is None or not args or args[0] is not scanned:
        raise scanned.unfit(f"calling {getattr(fn, '__name__', fn)} with all the items")
    extra = dict(kwargs)
    if len(args) > 1:
        extra["dim"] = args[1]
    if set(extra) - {"dim"}:
        raise scanned.unfit(f"{getattr(fn, '__name__', fn)} with {sorted(extra)}")
    return consumer(tx, scanned, **extra)


def symbolic_int_subscript(tx, tensor: TensorVariable, key: VariableTracker):
    """``x[i]`` / ``x[:, i]`` with a symbolic int ``i`` (a scan's step, a size) as ``select``, which
    keeps ``i`` symbolic (indexing would read its value); None for any other key."""
    items = key.items if isinstance(key, TupleVariable) and key.python_type() is tuple else [key]
    at = next((i for i, item in enumerate(items) if isinstance(item, SymIntVariable)), None)
    if at is None:
        return None
    full = slice(None)
    if not all(isinstance(i, ConstantVariable) and i.value == full for i in items[:at]):
        return None
    rest = items[at + 1:]
    if any(isinstance(i, SymIntVariable) or not isinstance(i, ConstantVariable) for i in rest):
        return None
    rest_key = tuple(i.value for i in rest)
    while rest_key and rest_key[-1] == full:  # x[:, t, :]: trailing full slices index nothing
        rest_key = rest_key[:-1]

    def select(x, index):
        picked = ops.squeeze(ops.narrow(x, at, index, 1), at)  # select() would read the index's value
        return picked[(full,) * at + rest_key] if rest_key else picked

    return TracedCallableVariable(select, "Tensor.__getitem__").call(tx, [tensor, items[at]], {})


def _step_of(tensor: TensorVariable, dim: int, index: SymInt, tx):
    """``tensor.select(dim, index)`` keeping a symbolic index symbolic."""
    def select(x, i):
        return ops.squeeze(ops.narrow(x, dim, i, 1), dim)

    return TracedCallableVariable(select, "Tensor.select").call(tx, [tensor, ConstantVariable(index)], {})


class UnboundTensorVariable(VariableTracker):
    """``x.unbind(dim)`` with a symbolic size at ``dim``: the tuple of slices, held as ``x``.

    ``len``, indexing (by a symbolic step too), reversing (``[::-1]``) and a for-loop (a scan
    candidate) are exact on it; any other use makes the real tuple (fixing the size to
    the example's, as before)."""

    def __init__(self, tensor: TensorVariable, dim: int, length: SymInt):
        self.tensor, self.dim, self.steps = tensor, dim, length
        self._items = None

    def python_type(self) -> type:
        return tuple

    def length(self, tx):
        return self.steps

    def materialize(self, tx) -> list:
        if self._items is None:
            result = TracedCallableVariable(lambda x: ops.unbind(x, self.dim), "Tensor.unbind").call(
                tx, [self.tensor], {})
            self._items = list(result.items)
        return self._items

    def unpack(self, tx) -> list:
        return self.materialize(tx)

    def iterate(self, tx):
        return ScanTensorIterator(self)

    def is_python_constant(self) -> bool:
        return False

    def as_traceable(self):
        raise Unsupported("an unbound tensor of symbolic length passed on as a tuple")

    def truth(self, tx) -> bool:
        return True

    def getitem(self, tx, key: VariableTracker) -> VariableTracker:
        value = key.value if isinstance(key, ConstantVariable) else None
        if isinstance(value, slice) and value == slice(None, None, -1):
            flipped = TracedCallableVariable(lambda s: ops.flip(s, (self.dim,)), "flip").call(tx, [self.tensor], {})
            return UnboundTensorVariable(flipped, self.dim, self.steps)
        if type(value) in (int, SymInt):
            return _step_of(self.tensor, self.dim, value, tx)
        return TupleVariable(self.materialize(tx)).getitem(tx, key)

    def reconstruct(self, cg) -> None:
        raise Unsupported("an unbound tensor of symbolic length kept past the graph")

    def __repr__(self) -> str:
        return f"UnboundTensorVariable({self.tensor}, dim={self.dim})"


class ScanTensorIterator(IteratorVariable):
    """The iterator of an UnboundTensorVariable: FOR_ITER tries a scan with the step's slice
    as the loop variable; otherwise it walks the real slices."""

    def __init__(self, unbound: UnboundTensorVariable):
        super().__init__()
        self.unbound = unbound
        self.materialized = False

    @property
    def scan_length(self):
        return self.unbound.steps if not self.materialized and self.index == 0 else None

    def scan_item(self, tx, step: SymInt) -> VariableTracker:
        return _step_of(self.unbound.tensor, self.unbound.dim, step, tx)

    def next_item(self, tx):
        if not self.materialized:
            self.items = list(self.unbound.materialize(tx))
            self.materialized = True
        return super().next_item(tx)

    def save_state(self):
        return self.index, self.materialized, list(self.items)

    def restore_state(self, state) -> None:
        self.index, self.materialized, self.items = state[0], state[1], list(state[2])


def symbolic_unbind(tx, tensor: TensorVariable, args: list, kwargs: dict):
    """``tensor.unbind(dim)`` as an UnboundTensorVariable when that size is symbolic, else None."""
    if getattr(tx.output, "scan_disabled", False) or len(args) > 1 or set(kwargs) - {"dim"}:
        return None
    dim_var = args[0] if args else kwargs.get("dim", ConstantVariable(0))
    if not isinstance(dim_var, ConstantVariable) or type(dim_var.value) is not int:
        return None
    sizes = tensor.proxy._sizes
    if not sizes:
        return None
    dim = dim_var.value + len(sizes) if dim_var.value < 0 else dim_var.value
    if not 0 <= dim < len(sizes) or type(sizes[dim]) is not SymInt:
        return None
    return UnboundTensorVariable(tensor, dim, sizes[dim])
