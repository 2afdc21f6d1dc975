"""Graph nodes that compute symbolic sizes at run time from the graph's input tensors.

A SymInt that flows into an op argument (``x.view(x.size(0) // 2, -1)``) or out of the
graph (``return x.shape[0]``) needs a value when the graph runs: each symbol is read
from the input it came from (``sym_size(x, 1)``) and an expression is rebuilt from its
normal form with ``operator`` calls, so every backend evaluates it as plain ints. Nodes
are shared per expression.
"""
from __future__ import annotations

import operator

from ...tensor.sym_expr import Expr, FloorDiv, Mod, Symbol
from ...tensor.symint import SymInt, sym_size

_DIVISIONS = {FloorDiv: operator.floordiv, Mod: operator.mod}


class SymbolicNodes:
    """Expression -> node, for one OutputGraph.

    Args:
        output: the OutputGraph (its ``graph``, ``shape_env`` and node bookkeeping).
    """

    def __init__(self, output):
        self.output = output
        self.inputs: dict = {}  # Symbol -> (placeholder node, dim) it is read from
        self.ints: dict = {}  # Symbol -> (source, value) of a frame's symbolic int (a graph input when used)
        self.nodes: dict = {}  # Expr -> node

    def note_input(self, node, sizes) -> None:
        """Remember where the symbols of an input's ``sizes`` can be read from."""
        for dim, size in enumerate(sizes):
            if type(size) is SymInt:
                symbol = size.expr.as_symbol()
                if symbol is not None:
                    self.inputs.setdefault(symbol, (node, dim))

    def node_for(self, value: SymInt):
        """The node (or int) computing ``value`` at run time."""
        expr = self.output.shape_env.simplify(value.expr)
        return self._expr(expr) if not expr.is_constant else expr.constant_value

    def forget(self, erased_ids: set) -> None:
        """Drop nodes a rollback erased."""
        self.nodes = {e: n for e, n in self.nodes.items() if id(n) not in erased_ids}

    def _expr(self, expr: Expr):
        if expr.is_constant:
            return expr.constant_value
        known = self.nodes.get(expr)
        if known is not None:
            return known
        total = None
        for monomial, coeff in expr.terms:
            term = coeff if not monomial else None
            for atom in monomial:
                factor = self._atom(atom)
                term = factor if term is None else self._call(operator.mul, term, factor)
            if monomial and coeff != 1:
                term = self._call(operator.mul, term, coeff)
            total = term if total is None else self._call(operator.add, total, term)
        self.nodes[expr] = total
        total.meta["val"] = SymInt(expr, self.output.shape_env)
        return total

    def _atom(self, atom):
        if isinstance(atom, Symbol):
            key = Expr.symbol(atom)
            if key not in self.nodes:
                if atom in self.inputs:
                    node, dim = self.inputs[atom]
                    self.nodes[key] = self._call(sym_size, node, dim)
                else:  # NOTE: [symbolic int inputs]
                    source, value = self.ints[atom]
                    self.nodes[key] = self.output.int_input(source, value)
                self.nodes[key].meta["val"] = SymInt(key, self.output.shape_env)
            return self.nodes[key]
        return self._call(_DIVISIONS[type(atom)], self._expr(atom.num), self._expr(atom.den))

    def _call(self, fn, *args):
        return self.output._created(self.output.graph.call_function(fn, args, {}))
