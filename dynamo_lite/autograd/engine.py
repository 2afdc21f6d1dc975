"""The backward engine: runs the graph of ``grad_fn`` nodes from outputs to leaves."""
from __future__ import annotations

import heapq

from ..ops.core.dispatch import dispatch
from ..ops.core.registry import REGISTRY
from ..tensor.layout import Size
from ..tensor.tensor import Tensor
from .anomaly_mode import check_gradients
from .grad_mode import GRAD_MODE
from .node import AccumulateGrad, gradient_edge
from .recording import history

OPS = REGISTRY


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None) -> None:
    """Accumulate into ``.grad`` of the leaves the gradients of ``tensors`` (see Tensor.backward).

    Example:
        >>> w = dl.ones(3, requires_grad=True)
        >>> dl.autograd.backward((w * 2).sum())
        >>> w.grad
        tensor([2., 2., 2.])
    """
    tensors = _as_tuple(tensors)
    grads = _root_grads(tensors, _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors))
    retain = create_graph if retain_graph is None else retain_graph
    targets = None
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        targets = [history(t) for t in inputs]
    _run(tensors, grads, retain, create_graph, targets, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned instead of accumulated.

    Args:
        outputs: a tensor or sequence of tensors to differentiate.
        inputs: the tensors to differentiate with respect to.
        grad_outputs: the gradient of each output (None: ones, for scalar outputs).
        retain_graph: keep the graph for another backward (default: ``create_graph``).
        create_graph: record the backward itself, for higher-order gradients.
        allow_unused: return None for an input the outputs do not depend on instead of raising.
        materialize_grads: return zeros instead of None for unused inputs.

    Example:
        >>> x = dl.tensor([3.0], requires_grad=True)
        >>> (g,) = dl.autograd.grad(x ** 2, x, create_graph=True)
        >>> dl.autograd.grad(g, x)
        (tensor([2.]),)
    """
    if is_grads_batched:
        raise NotImplementedError("grad(is_grads_batched=True) is not supported")
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    allow_unused = bool(allow_unused) or materialize_grads
    for t in inputs:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _root_grads(outputs, _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs))
    retain = create_graph if retain_graph is None else retain_graph
    captured = _run(outputs, grads, retain, create_graph, [history(t) for t in inputs], accumulate=False)
    result = []
    for t, g in zip(inputs, captured):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior."
                )
            if materialize_grads:
                g = OPS["zeros"](size=t._sizes, dtype=t._dtype, device=t._device)
        result.append(g)
    return tuple(result)


def _as_tuple(value) -> tuple:
    if isinstance(value, Tensor) or value is None:
        return (value,)
    return tuple(value)


def _root_grads(tensors, grads) -> list:
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(grads)} tensors and {len(tensors)} gradients")
    result = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        history(t)
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = OPS["ones"](size=t._sizes, dtype=t._dtype, device=t._device)
        elif not isinstance(g, Tensor):
            g = OPS["full"](size=t._sizes, dtype=t._dtype, device=t._device, fill_value=g)
        elif g._sizes != t._sizes:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._sizes)!r} and output[{i}] "
                f"has a shape of {Size(t._sizes)!r}."
            )
        result.append(g)
    return result


def _run(roots, root_grads, retain_graph, create_graph, targets, accumulate):
    """Execute the graph; return the gradients reaching ``targets`` (when given)."""
    root_edges = [gradient_edge(t) for t in roots]
    dependencies = _count_dependencies([node for node, _ in root_edges])
    captures = {}
    if targets is not None:
        for index, t in enumerate(targets):
            captures.setdefault(gradient_edge(t), []).append(index)
        needed = _nodes_reaching({node for node, _ in captures}, dependencies)
    captured = [None] * (len(targets) if targets is not None else 0)
    buffers: dict = {}
    for (node, nr), g in zip(root_edges, root_grads):
        _add(buffers.setdefault(node, {}), nr, g)
    roots_nodes = {node for node, _ in root_edges}
    ready = [(-node._sequence_nr, id(node), node) for node in roots_nodes if dependencies[node] == 0]
    heapq.heapify(ready)
    saved_mode = GRAD_MODE.enabled
    GRAD_MODE.enabled = create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[2]
            grads = buffers.pop(node, {})
            if node._pre_hooks or node._retained or isinstance(node, AccumulateGrad):
                grads = _run_pre_hooks(node, grads)
            if captures:
                for nr, g in grads.items():
                    for index in captures.get((node, nr), ()):
                        captured[index] = g
            if targets is not None and node not in needed:
                outputs = [None] * len(node.next_functions)
            elif isinstance(node, AccumulateGrad):
                if accumulate and targets is None or accumulate and (node, 0) in captures:
                    _accumulate(node.variable, grads.get(0), create_graph)
                    _run_post_accumulate_hooks(node.variable, grads.get(0))
                continue
            else:
                outputs = _apply(node, grads)
                if not retain_graph:
                    node.release()
            for (next_node, nr), g in zip(node.next_functions, outputs):
                if next_node is None:
                    continue
                if g is not None:
                    _add(buffers.setdefault(next_node, {}), nr, g)
                dependencies[next_node] -= 1
                if dependencies[next_node] == 0:
                    heapq.heappush(ready, (-next_node._sequence_nr, id(next_node), next_node))
    finally:
        GRAD_MODE.enabled = saved_mode
    return captured


def _count_dependencies(roots) -> dict:
    """node -> how many edges of the graph point at it (iterative, no recursion)."""
    dependencies = {node: 0 for node in roots if node is not None}
    stack = list(dependencies)
    while stack:
        node = stack.pop()
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            if next_node not in dependencies:
                dependencies[next_node] = 0
                stack.append(next_node)
            dependencies[next_node] += 1
    return dependencies


def _nodes_reaching(targets: set, graph: dict) -> set:
    """The nodes of ``graph`` from which a target node can be reached."""
    parents: dict = {}
    for node in graph:
        for next_node, _ in node.next_functions:
            if next_node is not None:
                parents.setdefault(next_node, []).append(node)
    reached, stack = set(targets), list(targets)
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in reached:
                reached.add(parent)
                stack.append(parent)
    return reached


def _add(buffer: dict, nr: int, grad) -> None:
    current = buffer.get(nr)
    buffer[nr] = grad if current is None else current + grad


def _run_pre_hooks(node, grads: dict) -> dict:
    if isinstance(node, AccumulateGrad):
        meta = node.variable._autograd
        hooks = {0: meta.hooks} if meta is not None and meta.hooks else {}
    else:
        hooks = node._pre_hooks
    for nr, fns in hooks.items():
        for fn in list(fns):
            if nr in grads:
                replaced = fn(grads[nr])
                if replaced is not None:
                    grads[nr] = replaced
    for nr, ref in node._retained.items():
        tensor = ref()
        if tensor is not None and nr in grads:
            _accumulate(tensor, grads[nr], GRAD_MODE.enabled)
    return grads


def _run_post_accumulate_hooks(variable: Tensor, grad) -> None:
    """``hook(variable)`` for each post-accumulate-grad hook, once its gradient is in ``.grad``."""
    meta = variable._autograd
    if grad is not None and meta is not None and meta.post_accumulate_hooks:
        for hook in list(meta.post_accumulate_hooks):
            hook(variable)


def _apply(node, grads: dict) -> list:
    if not grads:
        return [None] * len(node.next_functions)
    count = max(len(getattr(node, "output_metas", ())), max(grads) + 1)
    outputs = node.apply([grads.get(nr) for nr in range(count)])
    check_gradients(node, outputs)
    for hook in node._hooks:
        hook(tuple(outputs), tuple(grads.get(nr) for nr in range(count)))
    return outputs


def _accumulate(variable: Tensor, grad, create_graph: bool) -> None:
    """Add ``grad`` into ``variable.grad`` (in place unless building a graph of the backward)."""
    if grad is None:
        return
    meta = variable._meta()
    if meta.grad is None:
        meta.grad = grad if create_graph else dispatch(OPS["clone"], (grad._plain_alias(),), {}, record_grad=False)
    elif create_graph:
        meta.grad = meta.grad + grad
    else:
        dispatch(OPS["add_"], (meta.grad, grad._plain_alias()), {}, record_grad=False)
