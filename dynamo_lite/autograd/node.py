"""Nodes of the backward graph (a tensor's ``grad_fn``), saved tensors and AccumulateGrad."""
from __future__ import annotations

import itertools
import weakref
from types import MappingProxyType

from ..tensor.autograd_fields import type_name
from ..tensor.tensor import Tensor
from .anomaly_mode import ANOMALY, forward_stack

_SEQUENCE = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


class Node:
    """One step of the backward graph: maps the gradients of its forward outputs to the
    gradients of its forward inputs.

    Attributes:
        next_functions: one ``(node, output_nr)`` per differentiable forward input, in
            order; ``(None, 0)`` for an input that needs no gradient.

    Example:
        >>> y = dl.ones(2, requires_grad=True) * 3
        >>> y.grad_fn.name(), y.grad_fn.next_functions[0][0].name()
        ('MulBackward0', 'AccumulateGrad')
    """

    # NOTE: [lazy node tables] Hooks, retained tensors and metadata are rare: a node reads the
    # shared empty tables of its class until the first registration gives it its own (one
    # node per recorded op, so four containers fewer per op to build and to collect).
    _pre_hooks = MappingProxyType({})  # output_nr -> [hook(grad) -> grad | None]
    _hooks = ()                        # hook(grad_inputs, grad_outputs) after apply
    _retained = MappingProxyType({})   # output_nr -> the non-leaf tensor that called retain_grad()
    _metadata = None

    def __init__(self, next_functions=()):
        self.next_functions = tuple(next_functions)
        self._sequence_nr = next(_SEQUENCE)
        self._freed = False
        if ANOMALY.enabled:  # NOTE: [anomaly mode]
            self.metadata["traceback_"] = forward_stack()

    @property
    def metadata(self) -> dict:
        """A dict of the user's (and anomaly mode's ``traceback_``) data about this node."""
        metadata = self._metadata
        if metadata is None:
            metadata = self._metadata = {}
        return metadata

    @metadata.setter
    def metadata(self, value) -> None:
        self._metadata = value

    def retain(self, output_nr: int, ref) -> None:
        """Keep the gradient of output ``output_nr`` in the tensor ``ref()`` (``retain_grad``)."""
        if "_retained" not in self.__dict__:
            self._retained = {}
        self._retained[output_nr] = ref

    def name(self) -> str:
        return type(self).__name__

    def apply(self, grad_outputs: list) -> list:
        """Gradients for ``next_functions`` from the gradients of the outputs."""
        raise NotImplementedError

    def release(self) -> None:
        """Free what backward needed (after a backward without ``retain_graph``)."""
        self._freed = True

    def register_hook(self, hook):
        """``hook(grad_inputs, grad_outputs)`` runs after this node computed its gradients."""
        if "_hooks" not in self.__dict__:
            self._hooks = []
        self._hooks.append(hook)
        return _RemovableHandle(self._hooks, hook)

    def register_prehook(self, hook, output_nr: int = 0):
        """``hook(grad)`` runs on an output's gradient before this node uses it; may return a new one."""
        if "_pre_hooks" not in self.__dict__:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, [])
        hooks.append(hook)
        return _RemovableHandle(hooks, hook)

    def __call__(self, *grads):
        return self.apply(list(grads))

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class _RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` unregisters the hook."""

    def __init__(self, hooks: list, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds the incoming gradient into ``variable.grad``."""

    def __init__(self, variable: Tensor):
        super().__init__()
        self.variable = variable

    def apply(self, grad_outputs: list) -> list:
        raise RuntimeError("AccumulateGrad runs inside the engine only")


class SavedTensor:
    """A tensor a formula needs at backward time, with the storage version it had when saved.

    An output saved by its own node is kept without its ``grad_fn`` (so node and tensor
    do not keep each other alive) and gets it back when unpacked.
    """

    __slots__ = ("tensor", "version", "grad_fn", "output_nr", "requires_grad", "is_output")

    def __init__(self, tensor: Tensor, is_output: bool = False):
        self.version = tensor._storage.version
        self.is_output = is_output
        self.requires_grad = tensor._requires_grad
        self.output_nr = tensor.output_nr
        if is_output:
            self.tensor, self.grad_fn = tensor._plain_alias(), None
        else:
            self.tensor, self.grad_fn = tensor, tensor._grad_fn

    def unpack(self, owner: Node) -> Tensor:
        tensor = self.tensor
        if tensor._storage.version != self.version:
            raise RuntimeError(self._modified_message(owner))
        if not self.is_output:
            return tensor
        alias = tensor._plain_alias()
        alias._requires_grad = self.requires_grad
        alias._grad_fn = owner
        if self.output_nr:  # a fresh alias reads output 0 without its AutogradMeta
            alias._meta().output_nr = self.output_nr
        return alias

    def _modified_message(self, owner: Node) -> str:
        desc = f"[dl.{type_name(self.tensor)} [{', '.join(map(str, self.tensor._sizes))}]]"
        grad_fn = owner if self.is_output else self.grad_fn
        origin = f", which is output {self.output_nr} of {grad_fn.name()}," if grad_fn is not None else ""
        return (
            "one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: {desc}{origin} is at version {self.tensor._storage.version}; expected version "
            f"{self.version} instead."
        )


def gradient_edge(tensor: Tensor):
    """The ``(node, output_nr)`` a gradient for ``tensor`` flows into, or ``(None, 0)``."""
    if tensor._grad_fn is not None:
        return tensor._grad_fn, tensor.output_nr
    if tensor._requires_grad:
        return grad_accumulator(tensor), 0
    return None, 0


def grad_accumulator(leaf: Tensor) -> AccumulateGrad:
    """The one AccumulateGrad node of a leaf (made on first use)."""
    meta = leaf._meta()
    node = None if meta.grad_accumulator is None else meta.grad_accumulator()
    if node is None:
        node = AccumulateGrad(leaf)
        meta.grad_accumulator = weakref.ref(node)  # the graph owns it; the leaf only finds it
    return node
