"""compile_joint: trace, partition and compile a captured graph for training (forward + backward)."""
from __future__ import annotations

from ...backends.registry import compile_graph
from ...graph import GraphModule
from ...ops.core.registry import REGISTRY
from ...tensor.meta import TensorMeta
from ...tensor.symint import hint_of
from .compiled_function import CompiledFunction
from .joint import requires_grad_flags, trace_joint
from .partition import SAVED_ATTRIBUTE, SAVED_INPUT, partition

OPS = REGISTRY


def _example(meta):
    """An uninitialized tensor of ``meta``'s geometry (symbolic sizes at their example values),
    or the example value of a saved size."""
    if not isinstance(meta, TensorMeta):
        return hint_of(meta)
    return OPS["empty_strided"](size=tuple(map(hint_of, meta._sizes)), stride=tuple(map(hint_of, meta._strides)),
                                dtype=meta._dtype, device=meta._device)


def compile_joint(compiler, gm, example_inputs: list, rerun) -> CompiledFunction | None:
    """A CompiledFunction for ``gm``, or None when no output of it carries a gradient.

    Args:
        compiler: the backend (``compiler(graph_module, example_inputs) -> callable``).
        gm: the captured graph.
        example_inputs: the call's inputs (their ``requires_grad`` decides what is differentiated).
        rerun: ``rerun(*inputs)`` runs ``gm`` op by op with autograd recording (double backward).

    Raises:
        Unsupported: the graph cannot be compiled as a forward and a backward graph.
    """
    attributes = [gm.get_attribute(n.target) for n in gm.graph.nodes if n.op == "get_attr"]
    flags = requires_grad_flags(example_inputs, attributes)
    joint = trace_joint(gm, flags)
    if not joint.tangents or not joint.input_grads:
        return None
    parts = partition(joint)
    name = getattr(gm, "class_name", "Graph")
    forward_module = GraphModule(gm._attributes, parts.forward, class_name=f"{name}_forward")
    backward_module = GraphModule({}, parts.backward, class_name=f"{name}_backward")
    forward_fn = compile_graph(compiler, forward_module, list(example_inputs))
    saved_examples = []
    for (kind, key), node in zip(parts.saved, [n for n in parts.backward.nodes if n.op == "placeholder"]):
        if kind == SAVED_INPUT:
            saved_examples.append(example_inputs[key])
        elif kind == SAVED_ATTRIBUTE:
            saved_examples.append(gm.get_attribute(key))
        else:
            saved_examples.append(_example(node.meta["val"]))
    tangent_examples = [_example(joint.tangents[i].meta["val"]) for i in parts.tangent_outputs]
    backward_fn = compile_graph(compiler, backward_module, saved_examples + tangent_examples)
    return CompiledFunction(gm, parts, forward_module, forward_fn, backward_module, backward_fn, flags, rerun)
