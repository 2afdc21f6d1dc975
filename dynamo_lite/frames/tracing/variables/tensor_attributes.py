"""Custom attributes on tensors (``t.tag = 3``) read and written in compiled code.

NOTE: [custom tensor attributes] A tensor's ``__dict__`` holds what a program stores on it
(the Tensor class keeps its own state in slots). A name the Tensor class does not define
is such an attribute:

- read from a tensor of the frame, it is read from that ``__dict__`` and guarded there
  (present and its value like any value read from the frame; absent: a constant class
  attribute of a Tensor subclass, else ``AttributeError`` as eagerly, guarded absent, so
  ``hasattr``/``getattr(t, name, default)`` fold);
- written (to a frame tensor or one the graph computes), it is a side effect replayed
  after the graph on the real tensor, in program order; later reads in the frame see the
  stored value.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

from ....tensor.tensor import Tensor
from ...errors import Unsupported, UserError
from .. import guards as G
from ..sources import AttrSource, ItemSource, KeyPresentSource


def is_custom_attribute(tensor_class: type, name: str) -> bool:
    """Whether ``name`` is an attribute a program adds or a Tensor subclass defines (Tensor does not)."""
    return not name.startswith("__") and not hasattr(Tensor, name)


@dataclass
class TensorAttributeStore:
    """``tensor.name = value`` on a tensor of the frame or of the graph (replayed after the graph)."""

    target: object
    name: str
    value: object

    def replay(self, cg) -> None:
        cg.reconstruct(self.value)
        cg.reconstruct(self.target)
        cg.emit("STORE_ATTR", self.name)

    def variables(self) -> list:
        return [self.target, self.value]


def _stored(tx, variable, name: str):
    for entry in reversed(tx.output.side_effects.entries):
        if isinstance(entry, TensorAttributeStore) and entry.name == name and entry.target.proxy is variable.proxy:
            return entry.value
    return None


def read_attribute(tx, variable, name: str):
    """``tensor.name`` for a custom attribute (NOTE: [custom tensor attributes])."""
    stored = _stored(tx, variable, name)
    if stored is not None:
        return stored
    tensor, source = variable.value, variable.source
    if tensor is None or source is None:  # a tensor the graph made has only what the frame stored on it
        if hasattr(variable.python_type(), name):
            raise Unsupported(f"attribute {name!r} of a {variable.python_type().__name__} computed in the graph")
        raise UserError(AttributeError(f"'{Tensor.__name__}' object has no attribute '{name}'"))
    attributes = AttrSource(source, "__dict__")
    present = name in tensor.__dict__
    tx.output.guards.add(KeyPresentSource(attributes, name), G.CONSTANT_MATCH, present)
    if present:
        return tx.wrap(tensor.__dict__[name], ItemSource(attributes, name))
    on_class = inspect.getattr_static(type(tensor), name, _ABSENT)  # a Tensor subclass's own attribute
    if on_class is _ABSENT:
        raise UserError(AttributeError(f"'{type(tensor).__name__}' object has no attribute '{name}'"))
    if type(on_class) in (int, float, bool, str, type(None)):
        return tx.wrap(on_class, AttrSource(source, name))
    raise Unsupported(f"attribute {name!r} of class {type(tensor).__qualname__} (a Tensor subclass)")


_ABSENT = object()


def store_attribute(tx, variable, name: str, value) -> None:
    """``tensor.name = value``: a side effect on the real tensor, replayed after the graph."""
    if getattr(value, "proxy", None) is variable.proxy:
        raise Unsupported(f"storing a tensor as attribute {name!r} of itself")
    tx.output.side_effects.record(TensorAttributeStore(variable, name, value))
