"""Symbolic input sizes: which dims become symbols, their sources, and the shape guard checking them.

NOTE: [symbolic inputs] A graph input tensor gets a symbol for each dim the dynamic
policy chose (``dl.compile(dynamic=...)``, ``dl.mark_dynamic``, or a size that changed
since the last compile of the frame) unless that size is 0 or 1 (specialized, as many
programs treat those sizes specially). Its strides become expressions over the symbols
when the tensor is dense (contiguous, channels_last or any dense permutation); a
tensor with any other layout stays static. The TENSOR_MATCH guard then checks only the
static dims and strides, and one SHAPE_ENV guard, last in the entry, binds each symbol
to the first dim it was read from (``s0 = x.size(1)``), checks every other dim that
shares it, every symbolic stride, and every relation the ShapeEnv recorded. A failing
call is explained in words: ``x.size(1) = s0 = 1 but the graph assumes s0 >= 2``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...tensor import layout
from ...tensor.shape_env import ShapeEnv
from ...tensor.sym_expr import Expr
from ...tensor.symint import SymInt, hint_of
from .sources import Source


@dataclass(frozen=True)
class DimSource:
    """Dim ``dim`` of the tensor at ``source``: where a symbol is read from."""

    source: Source
    dim: int

    def expr(self) -> str:
        return f"{self.source.expr()}._sizes[{self.dim}]"

    def __repr__(self) -> str:
        return f"{self.source.name()}.size({self.dim})"


@dataclass(frozen=True)
class ValueSource:
    """A frame's int that has a symbol (NOTE: [symbolic int inputs]): read as it is."""

    source: Source

    def expr(self) -> str:
        return self.source.expr()

    def __repr__(self) -> str:
        return self.source.name()


def symbolic_geometry(tensor, source: Source, dims, env: ShapeEnv):
    """``(sizes, strides)`` of ``tensor`` with symbols for ``dims`` (sizes >= 2 only), or
    None when nothing is symbolic or the layout cannot be expressed (see NOTE: [symbolic inputs])."""
    sizes = list(tensor._sizes)
    for d in dims:
        if sizes[d] >= ShapeEnv.MIN_SIZE:
            sizes[d] = env.create_symbol(sizes[d], DimSource(source, d))
    if not any(type(s) is SymInt for s in sizes):
        return None
    strides = _dense_strides(tensor._sizes, tensor._strides, sizes)
    if strides is None:
        return None
    return tuple(sizes), strides


def _dense_strides(actual_sizes, actual_strides, sizes):
    """Symbolic strides in the tensor's own dense dim order. A size-1 dim whose stride is the extent
    of another dim (``stride * size``: a contiguous or channels_last batch of one) gets that extent
    symbolically, so a new size elsewhere is no recompile; any other size-1 stride stays as it is."""
    if not layout.is_non_overlapping_and_dense(actual_sizes, actual_strides):
        return None
    strides = list(actual_strides)
    acc = 1
    for d in reversed(layout.dense_order_like(actual_sizes, actual_strides)):
        if actual_sizes[d] == 1:
            continue
        strides[d] = acc
        acc = acc * sizes[d]
    extents = [strides[e] * sizes[e] for e, n in enumerate(actual_sizes) if n != 1]
    for d, n in enumerate(actual_sizes):
        if n == 1:
            strides[d] = next((x for x in extents if hint_of(x) == actual_strides[d]), strides[d])
    if tuple(hint_of(s) for s in strides) != tuple(actual_strides):
        return None
    return tuple(strides)


def guarded_key(key: tuple, sizes: tuple, strides: tuple) -> tuple:
    """A TENSOR_MATCH key whose symbolic sizes and strides are left to the shape guard
    (they hold the symbol's text instead of an int)."""
    shown = lambda values: tuple(repr(v) if type(v) is SymInt else v for v in values)  # noqa: E731
    return key[:4] + (shown(sizes), shown(strides))


#: The name the SHAPE_ENV guard's source has: nothing the check loads (its code reads the
#: inputs' sizes through their own sources); explaining a failure binds it to the frame's
#: values by name (``guards.describe_failure``).
FRAME_VALUES = "__dl_frame"


class ShapeGuardSource(Source):
    """The source of the SHAPE_ENV guard: the frame's values themselves (its explanation
    evaluates the symbols' dims from them; the check never loads it)."""

    def expr(self) -> str:
        return FRAME_VALUES

    def name(self) -> str:
        return "shape guards"


class ShapeGuard:
    """The SHAPE_ENV guard of one entry (see NOTE: [symbolic inputs]).

    Attributes:
        checks: ``(python expression, words, symbols)`` in evaluation order; words is None
            for the clauses that only bind a symbol.
    """

    def __init__(self, env: ShapeEnv, symbolic_tensors: list):
        self.env = env
        self.names = {symbol: f"__dl_{symbol.name}" for symbol in env.symbols}
        self.checks: list = []
        self.bound: dict = {}  # Symbol -> the DimSource that defines it
        self.replaced: dict = {}  # Symbol -> its DimSource, for symbols replaced by an expression
        for symbol in env.symbols:
            dim_source = env.sources[symbol]
            value = env.replacements.get(symbol)
            if value is None:
                self.bound[symbol] = dim_source
                # A one-element list is true: the clause only binds the symbol.
                self.checks.append((f"[{self.names[symbol]} := {dim_source.expr()}]", None, ()))
            else:  # specialized or unified with an older symbol: the dim must agree
                self.replaced[symbol] = dim_source
                self.checks.append((f"{dim_source.expr()} == {self._code(value)}", f"{symbol.name} == {value}",
                                    [symbol] + sorted(value.symbols(), key=lambda s: s.sort_key())))
        for source, strides in symbolic_tensors:
            for d, stride in enumerate(strides):
                if type(stride) is SymInt:
                    expr = env.simplify(stride.expr)
                    self._check(f"{source.expr()}._strides[{d}] == {self._code(expr)}",
                                f"{source.name()}.stride({d}) == {expr}", expr)
        for relation in env.guards:
            lhs, rhs = env.simplify(relation.lhs), env.simplify(relation.rhs)
            if (lhs - rhs).is_constant:
                continue  # decided by the replacements: always true
            self._check(f"{self._code(lhs)} {relation.op} {self._code(rhs)}", f"{lhs} {relation.op} {rhs}", lhs - rhs)

    def _check(self, code: str, words: str, expr: Expr) -> None:
        if any(code == known for known, _, _ in self.checks):
            return  # the same relation recorded twice
        symbols = sorted(expr.symbols(), key=lambda s: s.sort_key())
        self.checks.append((code, words, symbols))

    def _code(self, expr: Expr) -> str:
        return f"({expr.code(lambda s: self.names[s])})"

    def code(self) -> str:
        return "(" + " and ".join(code for code, _, _ in self.checks) + ")" if self.checks else "True"

    def text(self) -> str:
        lines = [f"{s.name} = {self.env.sources[s]!r}" for s in self.bound]
        lines += [words for _, words, _ in self.checks if words is not None]
        return "shape guards: " + "; ".join(lines)

    def explain(self, frame_values: dict) -> str | None:
        """The first failing check in words, with the symbols' values for this call."""
        local_ns = dict(frame_values)
        values: dict = {}
        sources = {**self.bound, **self.replaced}
        for symbol, dim_source in sources.items():
            values[symbol] = eval(dim_source.expr(), {}, local_ns)
            if symbol in self.bound:
                local_ns[self.names[symbol]] = values[symbol]
        for code, words, symbols in self.checks:
            if words is None or eval(code, {}, local_ns):
                continue
            bindings = ", ".join(f"{sources[s]!r} = {s.name} = {values[s]}" for s in symbols)
            return f"{bindings} but the graph assumes {words}" if bindings else f"the graph assumes {words}"
        return None
