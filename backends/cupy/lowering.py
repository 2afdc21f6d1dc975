"""Lowering: a captured graph becomes a graph of kernel launches and library/eager op calls.

Pointwise nodes are partitioned into fusion groups (``graph.passes.fusion``); each group
becomes one generated kernel. A reduction, softmax, log_softmax or layer_norm whose
input is the only output of a group, read by nothing else, absorbs that group as its
prologue. Everything else (matmuls, convolutions, views, ops without a C rule) stays a
call of its registry op, which on CUDA tensors runs CuPy (cuBLAS for matmuls).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

from dynamo_lite.graph import Graph, GraphModule
from dynamo_lite.graph.passes.fusion import FusionGroup, fusion_schedule, partition_pointwise
from dynamo_lite.ops.core.registry import Op
from dynamo_lite.tensor.tensor import empty_like_meta

from .normalization import build_layer_norm, build_softmax, layer_norm_args
from .pointwise import build_pointwise, expressible, tensor_meta
from .rows import REDUCTIONS, build_reduction

_REDUCTION_KWARGS = frozenset({"dim", "keepdim", "dtype"})


def _reduction_ok(node) -> bool:
    return set(node.kwargs) <= _REDUCTION_KWARGS and len(node.args) == 1


def _softmax_ok(node) -> bool:
    source = tensor_meta(node.args[0])
    return len(node.args) in (2, 3) and not node.kwargs and source is not None and len(source._sizes) > 0


def _layer_norm_ok(node) -> bool:
    _, _, weight, bias, eps = layer_norm_args(node)
    params_ok = all(p is None or tensor_meta(p) is not None for p in (weight, bias))
    return params_ok and isinstance(eps, (int, float)) and set(node.kwargs) <= {"eps"}


# Consumers: ops that become row kernels, with their extra checks and builders.
CONSUMERS = {name: (_reduction_ok, build_reduction) for name in REDUCTIONS}
CONSUMERS.update({
    "softmax": (_softmax_ok, build_softmax),
    "log_softmax": (_softmax_ok, build_softmax),
    "layer_norm": (_layer_norm_ok, build_layer_norm),
})


def consumer_builder(node):
    """The kernel builder for a row-kernel node, or None if it runs as an op call."""
    if node.op != "call_function" or not isinstance(node.target, Op):
        return None
    entry = CONSUMERS.get(node.target.name)
    if entry is None or tensor_meta(node) is None or not node.args or tensor_meta(node.args[0]) is None:
        return None
    check, builder = entry
    return builder if check(node) else None


@dataclass
class Lowered:
    """The result of lowering: the new graph, its kernels, and the attributes it reads."""

    graph: Graph
    kernels: list = field(default_factory=list)
    attributes: dict = field(default_factory=dict)

    def module(self, class_name: str = "CupyGraph") -> GraphModule:
        return GraphModule(dict(self.attributes), self.graph, class_name=class_name)


class KernelCall:
    """A graph target that allocates a kernel's outputs and launches it on ``runtime``."""

    def __init__(self, kernel, runtime):
        self.kernel = kernel
        self.runtime = runtime
        self.__name__ = kernel.name
        self.out_metas = [n.meta["val"] for n in kernel.outputs]
        self.in_geometry = [(n.meta["val"]._sizes, n.meta["val"]._strides) for n in kernel.inputs]
        self.handle = None

    def __call__(self, *inputs):
        for tensor, (sizes, strides), node in zip(inputs, self.in_geometry, self.kernel.inputs):
            if tensor._sizes != sizes or tensor._strides != strides:
                raise RuntimeError(
                    f"{self.kernel.name}: input {node.name} has sizes {tensor._sizes} and strides "
                    f"{tensor._strides}, but the kernel was generated for {sizes} and {strides}"
                )
        outputs = [empty_like_meta(meta) for meta in self.out_metas]
        if self.kernel.work:
            if self.handle is None:
                self.handle = self.runtime.load(self.kernel)
            self.runtime.launch(self.handle, self.kernel, inputs, outputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def __repr__(self) -> str:
        return f"<launch {self.kernel.name}>"


def plan_groups(graph) -> list:
    """Fusion groups whose members all have C rules (others are split into single nodes)."""
    groups = []
    grouped = set()
    for group in partition_pointwise(graph):
        if all(expressible(n) for n in group.nodes):
            groups.append(group)
            grouped.update(group.nodes)
        else:
            groups += [_single(n) for n in group.nodes if expressible(n)]
            grouped.update(n for n in group.nodes if expressible(n))
    # Copies (clone, dtype conversion) are one-node pointwise kernels of their own.
    groups += [_single(n) for n in graph.nodes if n not in grouped and expressible(n)]
    return groups


def _single(node) -> FusionGroup:
    meta = node.meta["val"]
    return FusionGroup([node], list(node.all_input_nodes), [node], tuple(meta._sizes), meta._device)


def _prologues(graph, groups: list) -> dict:
    """consumer node -> the group it absorbs (see the module docstring for when)."""
    group_of = {member: g for g in groups for member in g.nodes}
    position = {node: i for i, node in enumerate(graph.nodes)}
    impure = [position[n] for n in graph.nodes if n.op not in ("placeholder", "output") and n.is_impure()]
    absorbed = {}
    for node in graph.nodes:
        if consumer_builder(node) is None:
            continue
        source = node.args[0]
        group = group_of.get(source)
        if group is None or group.outputs != [source] or list(source.users) != [node]:
            continue
        start, end = position[group.nodes[0]], position[node]
        if any(start < p < end for p in impure):
            continue  # a mutation in between could change what the prologue reads
        absorbed[node] = group
    return absorbed


def lower(gm, runtime=None) -> Lowered:
    """Lower ``gm`` (nodes carrying TensorMetas in ``meta["val"]``) to kernel launches.

    Args:
        gm: the captured GraphModule.
        runtime: where kernels are compiled and launched (``CupyRuntime``, or the host
            emulation); None only generates the kernels (for inspection and NVRTC checks).

    Returns:
        A :class:`Lowered` whose ``kernels`` are the generated sources in launch order.

    Example:
        >>> lowered = lower(gm)
        >>> [k.kind for k in lowered.kernels]   # relu(x * 2 + 1).sum()
        ['reduction']
    """
    graph = gm.graph
    groups = plan_groups(graph)
    absorbed = _prologues(graph, groups)
    skipped = {id(g) for g in absorbed.values()}
    new = Graph()
    env: dict = {}
    kernels: list = []
    for item in fusion_schedule(graph, groups):
        if isinstance(item, FusionGroup):
            if id(item) not in skipped:
                _emit(new, env, build_pointwise(item.nodes, item.inputs, item.outputs, item.shape), kernels, runtime)
            continue
        builder = consumer_builder(item)
        if builder is None:
            env[item] = new.node_copy(item, env.__getitem__)
            continue
        group = absorbed.get(item)
        if group is not None:
            kernel = builder(item, list(group.inputs), list(group.nodes), item.args[0])
        else:
            kernel = builder(item, [item.args[0]], [], item.args[0])
        _emit(new, env, kernel, kernels, runtime)
    if runtime is not None:
        runtime.prepare(kernels)  # compile everything up front (the emulation batches it)
    return Lowered(new, kernels, dict(gm.attributes))


def _emit(new: Graph, env: dict, kernel, kernels: list, runtime) -> None:
    kernels.append(kernel)
    call = new.call_function(KernelCall(kernel, runtime), tuple(env[n] for n in kernel.inputs),
                             name=f"{kernel.kind}_kernel")
    metas = tuple(n.meta["val"] for n in kernel.outputs)
    if len(kernel.outputs) == 1:
        call.meta["val"] = metas[0]
        env[kernel.outputs[0]] = call
        return
    call.meta["val"] = metas
    for i, node in enumerate(kernel.outputs):
        item = new.call_function(operator.getitem, (call, i), name=node.name)
        item.meta["val"] = metas[i]
        env[node] = item
