"""Split a training graph at DDP bucket boundaries: one compiled forward/backward pair per bucket.

NOTE: [DDP graph split] A compiled training graph has one backward node, so every
parameter's gradient appears when the whole backward is done and DDP's bucket reductions
(NOTE: [DDP reduction]) cannot overlap it. When the graph reads parameters that a
DistributedDataParallel manages (they carry ``DDP_BUCKET_LIMITS``: its bucket byte limits),
the graph is cut into consecutive pieces (TorchDynamo's DDPOptimizer idea): walking the nodes
backwards, a piece is closed once the parameters it reads reach the current limit (the first,
then the next ones), as the reducer fills its buckets in backward order. Each piece is its own
graph with the values earlier pieces made as inputs, compiled separately (its own
compiled forward and backward, NOTE: [compiled function node]) on the first call, with the
real values of that call as example inputs; so in backward the last piece's node runs first,
its parameters' gradients are accumulated and their bucket's reduction starts while the
earlier pieces' backward still runs. The values are those of the unsplit graph: the pieces
run the same nodes in the same order. A cut is never placed where a non-tensor value would
cross it (a tuple from ``split``), and a graph that yields a single piece is not split.
"""
from __future__ import annotations

import copy
import logging

from ...distributed.buckets import DDP_BUCKET_LIMITS
from ...graph.graph import Graph
from ...graph.graph_module import GraphModule
from ...graph.node import map_arg
from ...tensor.meta import TensorMeta
from ...tensor.tensor import Tensor

LOG = logging.getLogger("dynamo_lite.aot")

COMPUTE_OPS = ("call_function", "call_method", "call_module")


def _ddp_limits(graph_module, node):
    if node.op != "get_attr":
        return None
    value = graph_module.get_attribute(node.target)
    return getattr(value, DDP_BUCKET_LIMITS, None) if isinstance(value, Tensor) else None


def bucket_pieces(graph_module) -> list | None:
    """The compute nodes in consecutive pieces (forward order), or None when the graph is not split."""
    compute = [n for n in graph_module.graph.nodes if n.op in COMPUTE_OPS]
    pieces, size, counted, limits = [[]], 0, set(), None
    for node in reversed(compute):
        pieces[-1].append(node)
        for source in node.all_input_nodes:
            found = _ddp_limits(graph_module, source)
            if found is None or source.target in counted:
                continue
            counted.add(source.target)
            value = graph_module.get_attribute(source.target)
            limits = found
            size += value.numel() * value._dtype.itemsize
        if limits is not None and size >= limits[min(len(pieces) - 1, len(limits) - 1)]:
            pieces.append([])
            size = 0
    pieces = [list(reversed(p)) for p in reversed(pieces) if p]
    pieces = _merge_non_tensor_cuts(pieces)
    return pieces if len(pieces) > 1 else None


def _merge_non_tensor_cuts(pieces: list) -> list:
    """Join neighbouring pieces while a value that is not a tensor would cross between them."""
    merged = True
    while merged and len(pieces) > 1:
        merged = False
        for i in range(len(pieces) - 1):
            members = set(pieces[i])
            later = {n for piece in pieces[i + 1:] for n in piece}
            crossing = [n for n in pieces[i] if any(u in later for u in n.users)]
            earlier_inputs = [s for n in pieces[i + 1] for s in n.all_input_nodes if s in members]
            if any(not isinstance(n.meta.get("val"), TensorMeta) for n in crossing + earlier_inputs):
                pieces[i:i + 2] = [pieces[i] + pieces[i + 1]]
                merged = True
                break
    return pieces


def piece_module(graph_module, nodes: list, index: int):
    """(GraphModule of ``nodes``, the outer nodes it reads, the nodes it gives to later pieces)."""
    members = set(nodes)
    inputs = []
    for node in nodes:
        for source in node.all_input_nodes:
            if source not in members and source.op != "get_attr" and source not in inputs:
                inputs.append(source)
    outputs = [n for n in nodes if any(u not in members for u in n.users)]
    graph, env, attributes = Graph(), {}, {}
    for source in inputs:
        env[source] = graph.placeholder(source.name)
        env[source].meta = copy.copy(source.meta)

    def lookup(node):
        if node not in env:  # a get_attr: each piece reads the attributes it needs
            env[node] = graph.get_attr(node.target)
            env[node].meta = copy.copy(node.meta)
            attributes[node.target] = graph_module.get_attribute(node.target)
        return env[node]

    for node in nodes:
        for source in node.all_input_nodes:
            lookup(source)
        env[node] = graph.node_copy(node, lookup)
    graph.output(tuple(env[n] for n in outputs))
    return GraphModule(attributes, graph, f"{graph_module.class_name}_bucket{index}"), inputs, outputs


class BucketSplitGraph:
    """Runs the pieces of a split graph in order; each piece is compiled on the first call."""

    def __init__(self, graph_module, pieces: list, compile_piece):
        self.graph_module = graph_module
        self.placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
        self.pieces = [piece_module(graph_module, nodes, i) for i, nodes in enumerate(pieces)]
        self.compiled = [None] * len(self.pieces)
        self.compile_piece = compile_piece
        self.output = graph_module.graph.output_node.args[0]

    def __call__(self, *inputs):
        env = dict(zip(self.placeholders, inputs))
        for i, (module, piece_inputs, piece_outputs) in enumerate(self.pieces):
            values = [env[n] for n in piece_inputs]
            if self.compiled[i] is None:
                self.compiled[i] = self.compile_piece(module, values)
            env.update(zip(piece_outputs, self.compiled[i](*values)))

        def value(node):
            if node.op == "get_attr":
                return self.graph_module.get_attribute(node.target)
            return env[node]

        return map_arg(self.output, value)


def split_at_ddp_buckets(graph_module, compile_piece):
    """A BucketSplitGraph of ``graph_module`` when it reads DDP parameters of several buckets, else None.

    Args:
        compile_piece: ``compile_piece(piece_module, example_inputs) -> callable`` (a compiled
            forward/backward pair for the piece).
    """
    try:
        pieces = bucket_pieces(graph_module)
        if pieces is None:
            return None
        split = BucketSplitGraph(graph_module, pieces, compile_piece)
    except Exception as exc:  # an internal error: the unsplit graph is always correct
        LOG.info("graph %s: not split at DDP bucket boundaries: %s: %s", graph_module.class_name,
                 type(exc).__name__, exc)
        return None
    LOG.info("graph %s: split into %d pieces at DDP bucket boundaries", graph_module.class_name, len(pieces))
    return split
