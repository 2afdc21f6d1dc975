"""Optimizer containers that count their edits, so a compiled step guards them in O(1).

NOTE: [optimizer edit count] An optimizer's ``param_groups`` (a list of group dicts,
each with a ``params`` list) and its ``state`` (a defaultdict of per-parameter dicts)
are ``Tracked*`` subclasses of the builtin containers when the optimizer makes them.
Every mutation of one (set, delete, insert, append, update, pop, clear, ...) and every
attribute set on an ``Optimizer`` bumps one process-wide counter, ``EDITS.count``. A
compiled step's guards on what it read through them (the group dicts' keys and values,
the parameters' identities, the state dicts' keys and tensors) are then checked as one
comparison of that count, and in full only after some optimizer was edited (NOTE:
[guard tree] in frames/tracing/guard_tree.py).

Two writes do not count, because no covered guard can depend on them:
- storing the very object a key already holds (``state["step"] += 1`` on a tensor);
- storing a float over a float (an lr schedule): the guard tree never lets the count
  vouch for a float held by a tracked container, so those are checked on every call
  (one check per hyper-parameter and group, not per parameter).

Not covered: a group dict the user made and passed in (torch keeps that very dict, so
it stays a plain dict and its guards are checked on every call), containers a user
puts in place of the tracked ones (plain types fail the type guard: one recompile,
then per-call guards), writes through ``dict.__setitem__(group, ...)``.
"""
from __future__ import annotations

import collections


class EditCount:
    """How many times any optimizer's tracked container or attribute was edited."""

    __slots__ = ("count",)

    def __init__(self):
        self.count = 0


EDITS = EditCount()

_MISSING = object()


def edited() -> None:
    """Record that an optimizer's structure or hyper-parameters changed."""
    EDITS.count += 1


def _counting(method):
    """``method`` of the builtin container, bumping the edit count first."""

    def wrapper(self, *args, **kwargs):
        EDITS.count += 1
        return method(self, *args, **kwargs)

    wrapper.__name__, wrapper.__doc__ = method.__name__, method.__doc__
    return wrapper


def _counted_setitem(base):
    def __setitem__(self, key, value):
        try:
            old = base.get(self, key, _MISSING)
        except TypeError:  # unhashable: the store below raises it
            old = _MISSING
        if old is not value and not (type(old) is float and type(value) is float):
            EDITS.count += 1
        base.__setitem__(self, key, value)

    return __setitem__


def _counted_setdefault(base):
    def setdefault(self, key, default=None):
        if key not in self:
            EDITS.count += 1
        return base.setdefault(self, key, default)

    return setdefault


_DICT_MUTATORS = ("__delitem__", "__ior__", "pop", "popitem", "clear", "update")
_LIST_MUTATORS = ("__setitem__", "__delitem__", "__iadd__", "__imul__", "append", "extend", "insert", "pop",
                  "remove", "clear", "sort", "reverse")


class TrackedList(list):
    """A list whose every edit bumps the optimizer edit count (``param_groups``, ``params``)."""

    __slots__ = ()

    def __reduce_ex__(self, protocol):
        return (TrackedList, (list(self),))


class TrackedDict(dict):
    """A dict whose every edit bumps the optimizer edit count (a param group, a parameter's state)."""

    __slots__ = ()
    __setitem__ = _counted_setitem(dict)
    setdefault = _counted_setdefault(dict)

    def __reduce_ex__(self, protocol):
        return (TrackedDict, (dict(self),))


class TrackedState(collections.defaultdict):
    """``Optimizer.state``: a defaultdict of TrackedDicts keyed by parameters, counting its edits."""

    __slots__ = ()
    __setitem__ = _counted_setitem(collections.defaultdict)
    setdefault = _counted_setdefault(collections.defaultdict)

    def __init__(self, default_factory=TrackedDict, *args, **kwargs):
        super().__init__(default_factory, *args, **kwargs)

    def __setattr__(self, name, value):  # default_factory
        EDITS.count += 1
        super().__setattr__(name, value)


for _name in _LIST_MUTATORS:
    setattr(TrackedList, _name, _counting(getattr(list, _name)))
for _cls in (TrackedDict, TrackedState):
    for _name in _DICT_MUTATORS:
        setattr(_cls, _name, _counting(getattr(_cls.__mro__[1], _name)))

#: The container types whose edits are counted (what the guard tree may trust the count for).
TRACKED_TYPES = (TrackedList, TrackedDict, TrackedState)
