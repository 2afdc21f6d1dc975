"""What the calls of one compiled training forward reuse while its graph's attributes stay the same objects.

NOTE: [flat training-call overhead] A training forward over hundreds of parameters must
not pay Python work per parameter on every call. While the graph's attributes are the
same objects (no ``GraphModule.set_attribute`` since, for exact attribute names; else their
ids, compared as one tuple), a call reuses what the previous call built:

- the backward node's edges into the parameters (their AccumulateGrad nodes: a leaf keeps
  its one node, ``grad_accumulator``), as one tuple the node takes without a copy;
- the saved parameters, as one list joined to the call's saved inputs and to the
  forward's extra outputs (the partition orders the saved values that way: inputs,
  attributes, outputs);
- the parameters' storages, whose versions the node records at list-comprehension speed;
- whether every attribute's ``requires_grad`` is what the graph was compiled for (a change
  runs the graph op by op). That is read again only when the process-wide rebind count
  (tensor/rebinds.py) moved: every change of an existing tensor's ``requires_grad`` and
  every swap of its storage (``p.data = t``, ``set_``) bumps it, so an unchanged count
  means unchanged flags and storages.

What a call still reads: its inputs (their flags and edges), and the storage version of
every saved value (an optimizer step between the forward and the backward must raise as in
eager); the latter is one attribute load per saved value, the same order of work as the
forward's building of its output tuple.
"""
from __future__ import annotations

import operator

from ...autograd.node import gradient_edge
from ...tensor.rebinds import REBINDS
from ...tensor.tensor import Tensor
from .partition import SAVED_ATTRIBUTE, SAVED_INPUT, SAVED_OUTPUT

_REQUIRES_GRAD = operator.attrgetter("_requires_grad")
_KIND_RANK = {SAVED_INPUT: 0, SAVED_ATTRIBUTE: 1, SAVED_OUTPUT: 2}


def saved_layout(saved: list) -> tuple:
    """The call arguments' positions that are saved, and the attribute names that are, from
    the partition's ``(kind, key)`` list (inputs, then attributes, then every extra output in order).

    Raises:
        ValueError: ``saved`` is not in that order.
    """
    ranks = [_KIND_RANK[kind] for kind, _ in saved]
    outputs = [key for kind, key in saved if kind == SAVED_OUTPUT]
    if ranks != sorted(ranks) or outputs != list(range(len(outputs))):
        raise ValueError("saved values must be the inputs, then the attributes, then the outputs in order")
    return ([key for kind, key in saved if kind == SAVED_INPUT],
            [key for kind, key in saved if kind == SAVED_ATTRIBUTE])


class AttributeState:
    """What a CompiledFunction's calls reuse while its graph's attributes stay the same objects.

    Attributes:
        key: the ids of the attributes it was built for; attributes: those objects.
        version: the graph module's ``attribute_version`` when last checked.
        rebinds: ``REBINDS.count`` when the flags and storages were last read.
        stale: an attribute's ``requires_grad`` is not what the graph was compiled for, or an
            attribute that required grad is no tensor now: calls run the graph op by op.
        saved_attributes: the values of the saved attributes, in the partition's order.
        saved_storages: their storages (None when one of them is not a tensor).
        edges: per gradient input, its edge (None where the call's input decides); a tuple
            when no call argument gets a gradient.
        input_edges: (slot in edges, input position) for the gradient inputs that are call arguments.
    """

    def __init__(self, function, attributes: list, key: tuple):
        self.key, self.attributes = key, attributes  # kept: the ids stay theirs while cached
        self.version = None
        inputs = function.placeholder_count
        compiled_flags = function.input_requires_grad[inputs:]  # what the graph was compiled for
        self._tensors = [t for t in attributes if isinstance(t, Tensor)]
        self._tensor_flags = [flag for t, flag in zip(attributes, compiled_flags) if isinstance(t, Tensor)]
        # an attribute that required grad is no tensor now: every call runs the graph op by op
        self._changed = any(flag and not isinstance(t, Tensor) for t, flag in zip(attributes, compiled_flags))
        by_name = dict(zip(function.attribute_names, attributes))
        get = function.graph_module.get_attribute
        self.saved_attributes = [by_name[name] if name in by_name else get(name)
                                 for name in function.saved_attribute_names]
        self._saved_tensors = all(isinstance(t, Tensor) for t in self.saved_attributes)
        edges, self.input_edges = [], []
        for slot, position in enumerate(function.grad_inputs):
            if position < inputs:
                edges.append(None)
                self.input_edges.append((slot, position))
                continue
            tensor = attributes[position - inputs]
            if tensor._grad_fn is None and getattr(tensor, "_view_base", None) is None:
                edges.append(gradient_edge(tensor))  # a leaf: its one AccumulateGrad (or none)
            else:  # a tensor with history: looked at on every call
                edges.append(None)
                self.input_edges.append((slot, position))
        self.edges = edges if self.input_edges else tuple(edges)
        self.refresh()

    def refresh(self) -> None:
        """Read the attributes' ``requires_grad`` and the saved ones' storages again (after a rebind)."""
        self.rebinds = REBINDS.count
        self.stale = self._changed or list(map(_REQUIRES_GRAD, self._tensors)) != self._tensor_flags
        self.saved_storages = [t._storage for t in self.saved_attributes] if self._saved_tensors else None
