"""Split a joint graph into a forward graph (which also returns what the backward needs) and a backward graph.

NOTE: [recompute rule] The backward graph is everything the input gradients need that
the forward did not compute, plus the forward values it reads. Walking back from the
gradients, a forward value is *recomputed* in the backward when it is made by a pure
pointwise or view op (or a factory without tensor inputs), and *saved* otherwise: graph
inputs and parameters (free: they exist anyway), and the outputs of matmul-like ops,
reductions, normalizations, windows (conv/pool), random ops (dropout's mask) and
multi-output ops. So a pointwise chain (``gelu``'s tanh polynomial, an LSTM's gates)
costs one saved tensor at its non-pointwise start, not one per step; the backend fuses
the recomputation into the backward's own pointwise chains. A symbolic size the backward
needs is saved as the int the forward computes, not read again from its input: saving the
input would make an in-place change of it before ``backward()`` an error eager does not
raise (eager saves no tensor for a size). A value the backward reads
must not be overwritten by an in-place op of the forward (a BatchNorm running statistic
may be updated, but not read by the backward): such a graph is ``Unsupported`` and runs
op by op, as does a graph returning a view of one of its inputs.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass

from ...graph.graph import Graph
from ...ops.core.registry import Op
from ...tensor.symint import SIZE_FUNCTIONS
from ..errors import Unsupported

#: What a saved value is at run time: the call's input ``key`` (placeholder index), the
#: graph attribute ``key``, or the forward graph's extra output ``key``.
SAVED_INPUT, SAVED_ATTRIBUTE, SAVED_OUTPUT = "input", "attribute", "output"
_SAVED_RANK = {"placeholder": 0, "get_attr": 1}


@dataclass
class Partition:
    """The two graphs of a joint graph and how the runtime connects them.

    Attributes:
        forward: the captured graph's inputs; returns its outputs, then the saved intermediates.
        backward: placeholders for the saved values (in ``saved`` order), then one per tangent;
            returns the gradients of ``grad_inputs``, in order.
        saved: ``(kind, key)`` per saved value (``SAVED_INPUT``, ``SAVED_ATTRIBUTE``, ``SAVED_OUTPUT``):
            the saved inputs, then the saved attributes, then every extra output of the
            forward in order, so the runtime joins three runs instead of picking one by one.
        tangent_outputs: the output index of each tangent placeholder, in order.
        output_count: how many of the forward graph's outputs are the captured graph's.
        grad_inputs: positions (in the joint graph's ``inputs``) of the inputs gradients reach.
        recomputed: how many forward nodes the backward recomputes (for reports and tests).
    """

    forward: Graph
    backward: Graph
    saved: list
    output_count: int
    tangent_outputs: list
    grad_inputs: list
    recomputed: int


def recomputable(node) -> bool:
    """NOTE: [recompute rule]: a pure pointwise or view op, or a factory without tensor inputs."""
    if node.op == "call_function" and node.target in SIZE_FUNCTIONS:
        return False  # NOTE: [symbolic joint graphs]: an int the forward returns (reading it saves no tensor)
    if node.op != "call_function" or node.target is operator.getitem or not isinstance(node.target, Op):
        return False
    op = node.target
    return op.is_pure and (bool(op.tags & {"pointwise", "view"}) or not node.all_input_nodes)


def _alias_root(node):
    """The node whose storage ``node`` shares through views and in-place ops."""
    while (node.op == "call_function" and isinstance(node.target, Op) and node.target.tags & {"view", "inplace"}
           and node.args and hasattr(node.args[0], "op")):
        node = node.args[0]
    return node


def _first_read(node, forward_nodes: set, order: dict) -> int:
    """When the forward first reads ``node``'s value (not through a view, nor by writing into
    it): a write to its storage before then (a buffer filled in place through views of it)
    is part of the value the backward sees; one after it would make the value stale."""
    reads = [order[user] for user in node.users if user in forward_nodes and not (
        user.op == "call_function" and isinstance(user.target, Op) and user.target.tags & {"view", "inplace"})]
    return max(order[node], min(reads, default=order[node]))


def _is_impure(node) -> bool:
    return node.op == "call_function" and isinstance(node.target, Op) and not node.target.is_pure


def _ancestors(roots, within: set) -> set:
    found, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node in found or node not in within:
            continue
        found.add(node)
        stack.extend(node.all_input_nodes)
    return found


def _copy(nodes, order, graph: Graph, env: dict) -> None:
    for node in sorted(nodes, key=order.__getitem__):
        env[node] = graph.node_copy(node, env.__getitem__)


def partition(joint) -> Partition:
    """The forward and backward graphs of ``joint`` (NOTE: [recompute rule])."""
    inputs = set(joint.inputs)
    for index in joint.tangents:
        if _alias_root(joint.forward_outputs[index]) in inputs:
            raise Unsupported("a graph output is a view of an input (eager gives it the input as its view base)")
    order = {node: i for i, node in enumerate(joint.graph.nodes)}
    forward_nodes = joint.forward_nodes
    backward_impure = [n for n in joint.graph.nodes if n not in forward_nodes and _is_impure(n)]
    # The backward gets a saved tensor as the forward leaves it: a value the forward writes
    # to in place *after* the node the backward reads (through any alias) would be stale.
    # Writes before it (a buffer filled in place, then saved) are what the node holds; so a
    # value computed from a buffer the forward writes in place is saved, never recomputed
    # (recomputing it would read the buffer as the forward left it, not as it was then).
    last_write: dict = {}
    for n in forward_nodes:
        if _is_impure(n) and "inplace" in n.target.tags:
            root = _alias_root(n.args[0])
            last_write[root] = max(last_write.get(root, -1), order[n])
    saved, in_backward, stack = {}, set(), list(joint.input_grads.values()) + backward_impure
    while stack:
        node = stack.pop()
        if node in in_backward or node in saved:
            continue
        if node not in forward_nodes or (recomputable(node) and not any(
                _alias_root(i) in last_write for i in node.all_input_nodes)):
            in_backward.add(node)
            stack.extend(node.all_input_nodes)
        else:
            saved[node] = None
    read = [n for n in in_backward if n in forward_nodes] + list(saved)
    if any(_first_read(n, forward_nodes, order) < last_write.get(_alias_root(n), -1) for n in read):
        raise Unsupported("the backward reads a tensor the forward modifies in place")
    # inputs, then attributes, then the forward's extra outputs (NOTE: [flat training-call overhead])
    saved_nodes = sorted(saved, key=lambda n: (_SAVED_RANK.get(n.op, 2), order[n]))

    forward = Graph()
    env: dict = {}
    roots = [n for n in joint.forward_outputs if hasattr(n, "op")] + saved_nodes
    roots += [n for n in forward_nodes if _is_impure(n)]
    _copy(_ancestors(roots, forward_nodes) | inputs, order, forward, env)
    extra = [n for n in saved_nodes if n not in inputs]
    forward.output(tuple(env[n] if hasattr(n, "op") else n for n in joint.forward_outputs) + tuple(env[n] for n in extra))

    placeholders = [n for n in joint.inputs if n.op == "placeholder"]
    saved_kinds = []
    for node in saved_nodes:
        if node.op == "placeholder":
            saved_kinds.append((SAVED_INPUT, placeholders.index(node)))
        elif node.op == "get_attr":
            saved_kinds.append((SAVED_ATTRIBUTE, node.target))
        else:
            saved_kinds.append((SAVED_OUTPUT, extra.index(node)))

    backward = Graph()
    benv = {node: backward.placeholder(f"saved_{node.name}") for node in saved_nodes}
    for node in saved_nodes:
        benv[node].meta = dict(node.meta)
    tangent_outputs = sorted(joint.tangents)
    for index in tangent_outputs:
        tangent = joint.tangents[index]
        benv[tangent] = backward.node_copy(tangent)
    _copy(in_backward - set(joint.tangents.values()), order, backward, benv)
    grad_inputs = [i for i, node in enumerate(joint.inputs) if node in joint.input_grads]
    backward.output(tuple(benv[joint.input_grads[joint.inputs[i]]] for i in grad_inputs))
    recomputed = sum(1 for n in in_backward if n in forward_nodes)
    return Partition(forward, backward, saved_kinds, len(joint.forward_outputs), tangent_outputs, grad_inputs,
                     recomputed)
