"""Library callables with explicit handling (the special rows of NOTE: [trace rules]).

``functools.reduce`` and ``functools.partial``, ``itertools`` iterators, and the
``collections`` dicts are modelled by the translator; any other opaque callable is a
graph break (or folded when it is a pure function of constants).
"""
from __future__ import annotations

import collections
import functools
import itertools
import operator

from ...errors import Unsupported, UserError
from .. import trace_rules
from .base import ConstantVariable, VariableTracker
from .containers import TupleVariable
from .dicts import make_dict
from .functions import PartialVariable
from .iterators import IteratorVariable, LazyIteratorVariable, iterate


def _reduce(tx, fn, iterable, *initial):
    items = iterate(tx, iterable).unpack(tx)
    if initial:
        total, rest = initial[0], items
    elif items:
        total, rest = items[0], items[1:]
    else:
        raise UserError(TypeError("reduce() of empty iterable with no initial value"))
    for item in rest:
        total = fn.call(tx, [total, item], {})
    return total


def _partial(tx, fn, *args, **kwargs):
    return PartialVariable(fn, list(args), kwargs)


def _chain(tx, *iterables):
    return LazyIteratorVariable("chain", [iterate(tx, it) for it in iterables])


def _chain_from_iterable(tx, iterable):
    return _chain(tx, *iterate(tx, iterable).unpack(tx))


def _product(tx, *iterables, repeat=None):
    pools = [iterate(tx, it).unpack(tx) for it in iterables]  # product reads its inputs first too
    pools *= 1 if repeat is None else repeat.as_python_constant()
    return IteratorVariable([TupleVariable(list(row)) for row in itertools.product(*pools)])


def _accumulate(tx, iterable, func=None, *, initial=None):
    items = iterate(tx, iterable).unpack(tx)
    step = (lambda a, b: tx.binary_operation(operator.add, a, b)) if func is None or _is_none(func) \
        else (lambda a, b: func.call(tx, [a, b], {}))
    results = [] if initial is None or _is_none(initial) else [initial]
    for item in items:
        results.append(item if not results else step(results[-1], item))
    return IteratorVariable(results)


def _is_none(variable) -> bool:
    return variable.is_python_constant() and variable.as_python_constant() is None


def _ordered_dict(tx, *args, **kwargs):
    return make_dict(tx, collections.OrderedDict, list(args), kwargs)


def _defaultdict(tx, factory=None, *args, **kwargs):
    return make_dict(tx, collections.defaultdict, list(args), kwargs,
                     default_factory=factory if factory is not None else ConstantVariable(None))


#: callable -> handler(tx, *args, **kwargs) returning a variable.
SPECIAL_CALLABLES = {
    functools.reduce: _reduce,
    functools.partial: _partial,
    itertools.chain: _chain,
    itertools.chain.from_iterable: _chain_from_iterable,
    itertools.product: _product,
    itertools.accumulate: _accumulate,
    collections.OrderedDict: _ordered_dict,
    collections.defaultdict: _defaultdict,
}


def has_special_handling(fn) -> bool:
    try:
        return fn in SPECIAL_CALLABLES
    except TypeError:  # unhashable
        return False


def call_special(tx, fn, args: list, kwargs: dict) -> VariableTracker:
    """Call a library callable: its explicit handling, a fold, or a graph break."""
    if has_special_handling(fn):
        return SPECIAL_CALLABLES[fn](tx, *args, **kwargs)
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    if module in trace_rules.FOLDABLE_MODULES and all(a.is_python_constant() for a in [*args, *kwargs.values()]):
        values = [a.as_python_constant() for a in args]
        try:
            return tx.wrap_constant(fn(*values, **{k: v.as_python_constant() for k, v in kwargs.items()}))
        except Exception as exc:
            raise UserError(exc) from None
    raise Unsupported(f"call to {module + '.' if module else ''}{name}, library code the compiler does not trace "
                      "(it runs eagerly)")


def special_attribute(tx, variable, name: str) -> VariableTracker:
    """An attribute of an opaque callable (``chain.from_iterable`` ...)."""
    try:
        value = getattr(variable.fn, name)
    except AttributeError:
        raise Unsupported(f"{variable.fn!r} has no attribute {name!r}") from None
    if not has_special_handling(value) and not isinstance(value, (str, int, type(None))):
        raise Unsupported(f"attribute {name!r} of {variable.fn!r}")
    return tx.wrap(value, None)


class OpaqueCallableVariable(VariableTracker):
    """A callable the trace rules keep opaque (standard library, installed packages, C
    callables): folded when it is known pure and every argument is a constant, handled
    by the translator when it has explicit handling (``library.SPECIAL_CALLABLES``),
    otherwise a graph break, so it runs eagerly in program order."""

    def __init__(self, fn, source=None):
        self.fn = fn
        self.source = source

    def python_type(self) -> type:
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def var_getattr(self, tx, name: str) -> VariableTracker:
        return special_attribute(tx, self, name)

    def call(self, tx, args, kwargs) -> VariableTracker:
        return call_special(tx, self.fn, args, kwargs)

    def __repr__(self) -> str:
        return f"OpaqueCallableVariable({getattr(self.fn, '__qualname__', self.fn)!r})"
