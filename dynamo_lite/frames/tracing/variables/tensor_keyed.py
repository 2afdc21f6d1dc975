"""Dicts keyed by the frame's tensors (an optimizer's per-parameter ``state``), read entry by entry.

NOTE: [tensor-keyed state] ``Optimizer.state`` is a defaultdict of dicts (a ``TrackedState``
of ``TrackedDict``: NOTE: [optimizer edit count]) keyed by parameters. Its keys cannot be constants, but every key the traced code looks up is a
tensor read from the frame (a parameter, with a source), so an entry has a source too:
``opt.state[p]`` is reloaded as ``opt.state.get(<p's source>)`` (a guard never inserts).
A present entry is wrapped like any value from the frame (its dict's keys guarded, its
tensors guarded by identity and geometry); an absent one is guarded ``is None`` and made
by the default factory on first use, like eager does, and the new entry is stored into
the real dict after the graph (an ``ItemStore`` side effect). Nothing else (iteration,
``len``, ``in``) is modelled: those break the graph.
"""
from __future__ import annotations

from ....optim.tracked import TrackedDict
from ....tensor.tensor import Tensor
from ...errors import Unsupported
from .. import guards as G
from ..sources import TensorKeySource
from .base import VariableTracker
from .dicts import DictVariable
from .tensor import TensorVariable


class TensorKeyedDictVariable(VariableTracker):
    """A ``defaultdict(dict)`` from the frame whose keys are tensors (compared by identity).

    Attributes:
        value: the real dict.
        entries: ``id(key tensor) -> (key variable, value variable)`` of the entries read
            or made while tracing.
    """

    def __init__(self, value, source):
        self.value, self.source = value, source
        self.entries: dict = {}

    @staticmethod
    def accepts(value) -> bool:
        return value.default_factory in (dict, TrackedDict) and all(isinstance(k, Tensor) for k in value)

    def python_type(self) -> type:
        return type(self.value)

    def save_state(self):
        return dict(self.entries)

    def restore_state(self, state) -> None:
        self.entries = state

    def _key_tensor(self, key):
        tensor = key.value if isinstance(key, TensorVariable) else None
        if tensor is None or key.source is None:
            raise Unsupported(f"a lookup in {self.source.name()} by something other than a tensor of the frame")
        return tensor

    def getitem(self, tx, key) -> VariableTracker:
        tensor = self._key_tensor(key)
        known = self.entries.get(id(tensor))
        if known is not None:
            return known[1]
        source = TensorKeySource(self.source, key.source)
        real = self.value.get(tensor)
        if real is not None:
            variable = tx.wrap(real, source)
            self.entries[id(tensor)] = (key, variable)
            return variable
        tx.output.guards.add(source, G.CONSTANT_MATCH, None)
        created = DictVariable({}, dict_type=self.value.default_factory)  # what the default factory makes
        self.store_item(tx, key, created)
        return created

    def store_item(self, tx, key, value) -> None:
        tensor = self._key_tensor(key)
        tx.output.side_effects.store_item(self, key, value)
        self.entries[id(tensor)] = (key, value)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        raise Unsupported(f"{self.source.name()}.{name} (only lookups by a tensor are traced in a tensor-keyed dict)")

    def __repr__(self) -> str:
        return f"TensorKeyedDictVariable({self.source.name()})"
