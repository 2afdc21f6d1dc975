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

from ....tensor.device import device as Device
from ...errors import Unsupported, UserError
from .. import trace_rules
from .base import ConstantVariable, VariableTracker
from .containers import BaseListVariable, TupleVariable
from .dataclass_helpers import DATACLASS_FUNCTIONS
from .deques import make_deque
from .dicts import make_dict
from .function_wrappers import WRAPPER_FUNCTIONS
from .functions import PartialVariable
from .iterators import IteratorVariable, LazyIteratorVariable, iterate
from .object_copies import COPY_FUNCTIONS


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


def _combinatoric(kind):
    """``itertools.combinations``/``permutations``/``combinations_with_replacement``: they read
    their whole input first, then yield tuples of its items."""
    def handler(tx, iterable, *args, **kwargs):
        pool = iterate(tx, iterable).unpack(tx)
        values = [a.as_python_constant() for a in args]
        keywords = {k: v.as_python_constant() for k, v in kwargs.items()}
        try:
            rows = list(kind(range(len(pool)), *values, **keywords))
        except (TypeError, ValueError) as exc:
            raise UserError(exc) from None
        return IteratorVariable([TupleVariable([pool[i] for i in row]) for row in rows])

    return handler


def _islice(tx, iterable, *args):
    """``itertools.islice`` over a list or tuple (over an iterator it would consume only part
    of it, which this cannot show: a graph break then)."""
    if not isinstance(iterable, BaseListVariable):
        raise Unsupported("itertools.islice over an iterator (it consumes only part of it)")
    bounds = [a.as_python_constant() for a in args]
    try:
        picked = list(itertools.islice(range(len(iterable.items)), *bounds))
    except (TypeError, ValueError) as exc:
        raise UserError(exc) from None
    return IteratorVariable([iterable.items[i] for i in picked])


def _zip_longest(tx, *iterables, fillvalue=None):
    pools = [iterate(tx, it).unpack(tx) for it in iterables]  # it reads every input to its end
    fill = fillvalue if fillvalue is not None else ConstantVariable(None)
    longest = max((len(pool) for pool in pools), default=0)
    return IteratorVariable([TupleVariable([pool[i] if i < len(pool) else fill for pool in pools])
                             for i in range(longest)])


def _namedtuple(tx, typename, field_names, **kwargs):
    """``collections.namedtuple(...)`` of constants: the class is made while tracing (each
    translation makes one; eager code makes one per call)."""
    arguments = [typename, field_names, *kwargs.values()]
    if not all(a.is_python_constant() for a in arguments):
        raise Unsupported("collections.namedtuple() with arguments that are not constants")
    try:
        cls = collections.namedtuple(typename.as_python_constant(), field_names.as_python_constant(),
                                     **{k: v.as_python_constant() for k, v in kwargs.items()})
    except (TypeError, ValueError) as exc:
        raise UserError(exc) from None
    return tx.wrap(cls, None)


def _device(tx, *args, **kwargs):
    """``dl.device("cpu")``: an immutable value, made while tracing from constants."""
    if not all(a.is_python_constant() for a in [*args, *kwargs.values()]):
        raise Unsupported("dl.device() with arguments that are not constants")
    try:
        made = Device(*(a.as_python_constant() for a in args), **{k: v.as_python_constant() for k, v in kwargs.items()})
    except (TypeError, ValueError, RuntimeError) as exc:
        raise UserError(exc) from None
    return ConstantVariable(made)


#: callable -> handler(tx, *args, **kwargs) returning a variable.
SPECIAL_CALLABLES = {
    functools.reduce: _reduce,
    functools.partial: _partial,
    itertools.chain: _chain,
    itertools.chain.from_iterable: _chain_from_iterable,
    itertools.product: _product,
    itertools.accumulate: _accumulate,
    itertools.combinations: _combinatoric(itertools.combinations),
    itertools.combinations_with_replacement: _combinatoric(itertools.combinations_with_replacement),
    itertools.permutations: _combinatoric(itertools.permutations),
    itertools.islice: _islice,
    itertools.zip_longest: _zip_longest,
    collections.namedtuple: _namedtuple,
    Device: _device,
    collections.OrderedDict: _ordered_dict,
    collections.deque: make_deque,
    collections.defaultdict: _defaultdict,
    **COPY_FUNCTIONS,  # copy.deepcopy / copy.copy
    **DATACLASS_FUNCTIONS,  # dataclasses.fields / asdict / astuple / replace / is_dataclass
    **WRAPPER_FUNCTIONS,  # functools.wraps / update_wrapper
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
