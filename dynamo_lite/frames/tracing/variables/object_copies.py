"""``copy.deepcopy`` and ``copy.copy`` of values the translator models: containers, constants,
instances made in the frame; what holds a tensor or an outside object breaks the graph."""
from __future__ import annotations

import copy

from ...errors import Unsupported
from .base import ConstantVariable
from .containers import ListVariable, TupleVariable
from .dicts import DictVariable
from .identity_keys import IdentityKey
from .instances import FrameObjectVariable, is_plain_class
from .named_tuples import NamedTupleVariable
from .sets import SetVariable

#: Constants ``deepcopy`` returns as they are (immutable atoms).
_ATOMS = (type(None), bool, int, float, complex, str, bytes, type, range, slice, type(Ellipsis))


def deepcopy(tx, value, memo=None):
    """``copy.deepcopy(value)``: a new variable tree; objects met twice are copied once."""
    if memo is not None and not (memo.is_python_constant() and memo.as_python_constant() is None):
        raise Unsupported("copy.deepcopy() with a memo dict")
    return _deep(tx, value, {})


def _deep(tx, value, memo: dict):
    known = memo.get(id(value))
    if known is not None:
        return known
    if value.is_python_constant() and _is_atom(value.as_python_constant()):
        return value
    copier = _DEEP_COPIERS.get(type(value))
    if copier is None:
        raise Unsupported(f"copy.deepcopy of {value.describe()}, which the compiler does not copy (it runs eagerly)")
    return copier(tx, value, memo)


def _is_atom(constant) -> bool:
    if isinstance(constant, (tuple, frozenset)):
        return all(_is_atom(item) for item in constant)
    return isinstance(constant, _ATOMS)


def _copy_list(tx, value, memo):
    copied = memo[id(value)] = ListVariable([])
    copied.items = [_deep(tx, item, memo) for item in value.items]
    return copied


def _copy_tuple(tx, value, memo):
    items = [_deep(tx, item, memo) for item in value.items]
    if all(a is b for a, b in zip(items, value.items)):
        return value  # deepcopy returns a tuple of atoms itself
    copied = NamedTupleVariable(items, value.tuple_type) if isinstance(value, NamedTupleVariable) else TupleVariable(items)
    memo[id(value)] = copied  # the same tuple met twice is copied once
    return copied


def _copy_dict(tx, value, memo):
    if value.dict_type is not dict:
        raise Unsupported(f"copy.deepcopy of a {value.dict_type.__name__}")
    copied = memo[id(value)] = DictVariable({})
    for key, item in value.items.items():
        if isinstance(key, IdentityKey):
            raise Unsupported("copy.deepcopy of a dict keyed by tensors or objects")
        copied.items[key] = _deep(tx, item, memo)
    return copied


def _copy_set(tx, value, memo):
    if any(isinstance(v, IdentityKey) for v in value.values):
        raise Unsupported("copy.deepcopy of a set of tensors or objects")
    return SetVariable(list(value.values), set_type=value.set_type)


def _copy_frame_object(tx, value, memo):
    """An instance made in the frame: a new instance (no ``__init__``) with copies of its attributes."""
    cls = type(value.value)
    if not is_plain_class(cls) or any(name in vars(k) for k in cls.__mro__[:-1]
                                      for name in ("__deepcopy__", "__reduce_ex__", "__reduce__", "__getstate__",
                                                   "__setstate__", "__copy__")):
        raise Unsupported(f"copy.deepcopy of a {cls.__qualname__}, whose class customizes copying")
    copied = memo[id(value)] = FrameObjectVariable(cls)
    copied.attributes = {name: _deep(tx, item, memo) for name, item in value.attributes.items()}
    return copied


_DEEP_COPIERS = {
    ListVariable: _copy_list,
    TupleVariable: _copy_tuple,
    NamedTupleVariable: _copy_tuple,
    DictVariable: _copy_dict,
    SetVariable: _copy_set,
    FrameObjectVariable: _copy_frame_object,
    ConstantVariable: lambda tx, value, memo: _constant(value),
}


def _constant(value):
    raise Unsupported(f"copy.deepcopy of {value.describe()}, a value the compiler does not copy (it runs eagerly)")


def shallow_copy(tx, value):
    """``copy.copy(value)``: containers get new outer objects over the same items."""
    if value.is_python_constant() and _is_atom(value.as_python_constant()):
        return value
    if type(value) is ListVariable:
        return ListVariable(list(value.items))
    if type(value) in (TupleVariable, NamedTupleVariable):
        return value
    if type(value) is DictVariable and value.dict_type is dict:
        return DictVariable(dict(value.items))
    if type(value) is SetVariable:
        return SetVariable(list(value.values), set_type=value.set_type)
    raise Unsupported(f"copy.copy of {value.describe()}, which the compiler does not copy (it runs eagerly)")


#: The ``copy`` module's functions this module models.
COPY_FUNCTIONS = {copy.deepcopy: deepcopy, copy.copy: shallow_copy}
