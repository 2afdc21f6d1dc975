"""Dict keys and set elements hashed by identity: tensors, modules, instances of user classes.

NOTE: [keys by identity] ``{x: 2}`` with a tensor ``x``, ``{id(m): ...}``'s cousin ``{m: ...}``,
``seen = set(); seen.add(module)``: such a key is neither a constant nor a value known when
the code runs, but Python hashes and compares it by identity (``object.__hash__`` and
``object.__eq__``), which the translator knows: a tensor variable is one graph value (its
proxy, kept by in-place ops), an object variable one object. The key is kept as an
``IdentityKey`` holding its variable, and rebuilt from it where the dict or set leaves the
graph. Two keys from the frame (arguments, attributes) that the trace found different get a
guard that they still are (and the same object under two names a guard that it still is),
so a call that aliases them recompiles. A key that is missing where eager raises
``KeyError(key)`` breaks the graph (the message shows the key's repr, known only then).
"""
from __future__ import annotations

from ...errors import Unsupported
from .. import guards as G
from .base import ConstantVariable
from .tensor import TensorVariable


class IdentityKey:
    """A dict key or set element that is a variable hashed and compared by identity."""

    __slots__ = ("variable", "identity")

    def __init__(self, variable, identity):
        self.variable, self.identity = variable, identity

    def __hash__(self) -> int:
        return hash(self.identity)

    def __eq__(self, other) -> bool:
        return isinstance(other, IdentityKey) and other.identity == self.identity

    def __repr__(self) -> str:
        return f"IdentityKey({self.variable!r})"


def hashed_by_identity(value) -> bool:
    """Whether Python hashes ``value`` by identity (its class keeps object's ``__hash__``/``__eq__``)."""
    kind = type(value)
    return kind.__hash__ is object.__hash__ and kind.__eq__ is object.__eq__


def identity_key(tx, variable, *, any_hash: bool = False) -> IdentityKey | None:
    """The key of ``variable`` when it is hashed by identity (see NOTE: [keys by identity]), else
    None; with ``any_hash``, the identity of any object variable (what ``is`` compares)."""
    if isinstance(variable, TensorVariable):
        identity = ("tensor", id(variable.proxy))
    else:
        value = getattr(variable, "value", None)
        if value is None or isinstance(value, type) or not (any_hash or hashed_by_identity(value)) \
                or variable.is_python_constant():
            return None
        identity = ("object", id(value))
    _guard_identity(tx, identity, getattr(variable, "source", None))
    return IdentityKey(variable, identity)


def _guard_identity(tx, identity, source) -> None:
    """Keep what the trace learnt of this key's identity against the other keys from the frame."""
    if source is None:
        return
    known = tx.output.identity_keys
    for other_identity, other_sources in known.items():
        for other in other_sources:
            if other == source:
                continue
            kind = G.ID_MATCH_SOURCE if other_identity == identity else G.DISTINCT_SOURCE
            tx.output.guards.add(source, kind, other)
    sources = known.setdefault(identity, [])
    if source not in sources:
        sources.append(source)


def key_variable(key):
    """The variable of a dict key or set element (a constant is wrapped)."""
    if isinstance(key, IdentityKey):
        return key.variable
    return ConstantVariable(key)


def emit_key(cg, key) -> None:
    """Load a dict key or set element in emitted code."""
    if isinstance(key, IdentityKey):
        cg.reconstruct(key.variable)
    else:
        cg.load_const(key)


def has_identity_keys(keys) -> bool:
    return any(isinstance(key, IdentityKey) for key in keys)


#: Constants whose ``==`` with an object of a user class gives NotImplemented (then identity decides).
_BUILTIN_CONSTANTS = (type(None), bool, int, float, complex, str, bytes)


def equal_by_identity(tx, left, right) -> bool:
    """``left == right`` as ``in`` on a list asks it, where identity decides (objects with
    object's ``__eq__``, and a tensor compared with itself); anything else compares values
    the translator does not know: Unsupported."""
    left_key, right_key = identity_key(tx, left), identity_key(tx, right)
    if left_key is not None and right_key is not None:
        if left_key == right_key:
            return True
        if not isinstance(left, TensorVariable) and not isinstance(right, TensorVariable):
            return False
    for key, other in ((left_key, right), (right_key, left)):
        if key is not None and not isinstance(key.variable, TensorVariable) and other.is_python_constant() \
                and type(other.as_python_constant()) in _BUILTIN_CONSTANTS:
            return False
    raise Unsupported(f"'in' comparing {right.describe()} with the value of {left.describe()} (data-dependent)")


def contains_by_identity(tx, item, elements: list) -> bool:
    """``item in elements`` (a list or tuple), each element tested in order as Python does."""
    for element in elements:
        if element.is_python_constant() and item.is_python_constant():
            if element.as_python_constant() == item.as_python_constant():
                return True
            continue
        if equal_by_identity(tx, element, item):
            return True
    return False


def same_object(tx, left, right) -> bool:
    """``left is right`` for the fallback of ``==`` between objects whose methods gave
    NotImplemented: a builtin constant is never an object of a user class."""
    left_key, right_key = identity_key(tx, left, any_hash=True), identity_key(tx, right, any_hash=True)
    if left_key is not None and right_key is not None:
        return left_key == right_key
    for key, other in ((left_key, right), (right_key, left)):
        if key is not None and other.is_python_constant() and type(other.as_python_constant()) in _BUILTIN_CONSTANTS:
            return False
    raise Unsupported(f"'==' between {left.describe()} and {right.describe()}, whose identity is unknown while "
                      "tracing")
