"""What each graph node is at run time: where its memory comes from and its exact geometry.

NOTE: [value kinds] Every tensor a node produces lives in the memory of a *root*:
an input (``input``), an attribute such as a parameter (``param``), or memory the
compiled function allocates. Allocated roots are ``buffer`` (an intermediate in the
reused pool) or ``fresh`` (new memory on every call, because a graph output is that
tensor or a view of it: outputs never share memory with the pool or with each other's
later calls). View ops and in-place ops make no memory (``view``, ``alias``); an op
with several outputs (``multi``) allocates each, fresh, and ``getitem`` picks one
(``alias``). Int-valued size nodes of a graph with symbolic sizes (``sym_size`` and the
int arithmetic over it) are ``size``: the generated code computes them from its inputs
on every call. Members of a fused group that nobody outside the group reads live only
in the group's block scratch (``scratch``). Geometry (sizes, strides, offset in
elements) comes from the eager rules applied to the actual roots: view rules on the
real input geometry, meta rules for allocated memory (offset 0, as eager allocates).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, field

from dynamo_lite.graph.node import Node, map_arg
from dynamo_lite.ops.core.registry import Op
from dynamo_lite.tensor.layout import prod
from dynamo_lite.tensor.meta import TensorMeta
from dynamo_lite.tensor.symint import SIZE_FUNCTIONS
from dynamo_lite.tensor.tensor import Tensor

ROOT_KINDS = ("input", "param", "buffer", "fresh")


class Unsupported(Exception):
    """The graph holds something this backend does not compile (the caller runs it eagerly)."""


@dataclass(eq=False)
class Value:
    """One tensor (or Python object) the generated code handles.

    Attributes:
        name: the variable stem in generated code.
        kind: see NOTE: [value kinds] (or ``object`` for a non-tensor input/attribute).
        root: the Value owning the memory (itself for roots).
        sizes, strides, offset: the exact geometry, in elements.
        dtype: a dynamo_lite dtype.
        node: the node producing it (None for the pieces of a ``multi`` op).
        parts: the Values of a ``multi`` op's outputs.
        readers: nodes reading this value, in graph order.
        obj: the Tensor or object of an input or attribute.
        base: for views and aliases, the Value they were made from.
        key: what names this value in every analysis of the same graph (the node's name;
            ``(node name, i)`` for the pieces of a ``multi`` op).
    """

    name: str
    kind: str
    root: "Value | None" = None
    sizes: tuple = ()
    strides: tuple = ()
    offset: int = 0
    dtype: object = None
    node: Node | None = None
    parts: tuple = ()
    readers: list = field(default_factory=list)
    obj: object = None
    base: "Value | None" = None
    key: object = None

    def __post_init__(self):
        if self.key is None:
            self.key = self.name

    @property
    def is_tensor(self) -> bool:
        return self.kind not in ("object", "size")

    @property
    def nbytes(self) -> int:
        """Bytes spanned from the root's start (allocation size for roots)."""
        extent = self.offset + 1 + sum((n - 1) * s for n, s in zip(self.sizes, self.strides))
        return extent * self.dtype.itemsize if all(self.sizes) else 0

    @property
    def byte_strides(self) -> tuple:
        return tuple(s * self.dtype.itemsize for s in self.strides)

    @property
    def numel(self) -> int:
        return prod(self.sizes)


def analyze(graph, attributes: dict, inputs: list, scratch_nodes: set) -> dict:
    """Node -> Value for every node of ``graph`` (see NOTE: [value kinds]).

    Args:
        graph: the (simplified) graph.
        attributes: qualified name -> object, for get_attr nodes.
        inputs: one example value per placeholder (their geometry is the signature).
        scratch_nodes: fused-group members read only inside their group.

    Raises:
        Unsupported: a node kind, target or value this backend does not compile.
    """
    values: dict = {}
    placeholders = iter(inputs)
    for node in graph.nodes:
        if node.op == "placeholder":
            values[node] = _external(node, next(placeholders), "input")
        elif node.op == "get_attr":
            values[node] = _external(node, attributes[node.target], "param")
        elif node.op == "call_function":
            values[node] = _computed(node, values, node in scratch_nodes)
        elif node.op != "output":
            raise Unsupported(f"{node.op} nodes are not compiled by the numpy backend")
        for arg in node.all_input_nodes:
            values[arg].readers.append(node)
    _mark_fresh(graph, values)
    return values


def _external(node, obj, kind) -> Value:
    if not isinstance(obj, Tensor):
        return Value(node.name, "object", node=node, obj=obj)
    if obj._device.type != "cpu":
        raise Unsupported("only CPU tensors are compiled by the numpy backend")
    value = Value(node.name, kind, None, obj._sizes, obj._strides, obj._offset, obj._dtype, node, obj=obj)
    value.root = value
    return value


def _computed(node, values: dict, scratch: bool) -> Value:
    target = node.target
    meta = node.meta.get("val")
    if target is operator.getitem:
        parent = values[node.args[0]]
        if parent.kind != "multi":
            raise Unsupported("getitem on a value that is not a tuple of tensors")
        part = parent.parts[node.args[1]]
        return Value(node.name, "alias", part, part.sizes, part.strides, part.offset, part.dtype, node, base=part)
    if target in SIZE_FUNCTIONS:
        if not isinstance(meta, int):
            raise Unsupported(f"{node.name}: its size is not known for these inputs")
        return Value(node.name, "size", node=node, obj=meta)
    if not isinstance(target, Op):
        raise Unsupported(f"call of {target!r}: only registry ops are compiled")
    if target.view is not None:
        parent = _tensor_arg(values, node)
        args, kwargs = map_arg((node.args[1:], node.kwargs), lambda n: _concrete(values[n]))
        sizes, strides, offset = target.view((parent.sizes, parent.strides, parent.offset), *args, **kwargs)
        dtype = meta._dtype if isinstance(meta, TensorMeta) else parent.dtype  # view_as_real changes it
        return Value(node.name, "view", parent.root, tuple(sizes), tuple(strides), offset, dtype, node, base=parent)
    if "inplace" in target.tags:
        parent = _tensor_arg(values, node)
        return Value(node.name, "alias", parent.root, parent.sizes, parent.strides, parent.offset, parent.dtype, node,
                     base=parent)
    if isinstance(meta, TensorMeta):
        return _allocated(node.name, meta, "scratch" if scratch else "buffer", node)
    if isinstance(meta, (tuple, list)) and meta and all(isinstance(m, TensorMeta) for m in meta):
        parts = tuple(_allocated(f"{node.name}_{i}", m, "fresh", None, (node.name, i)) for i, m in enumerate(meta))
        return Value(node.name, "multi", None, node=node, parts=parts)
    raise Unsupported(f"{node.name}: op {target.name} returns {type(meta).__name__}, not tensors")


def _allocated(name: str, meta: TensorMeta, kind: str, node, key=None) -> Value:
    if meta._device.type != "cpu":
        raise Unsupported("only CPU tensors are compiled by the numpy backend")
    value = Value(name, kind, None, meta._sizes, meta._strides, 0, meta._dtype, node, key=key)
    value.root = value
    return value


def _concrete(value: Value):
    """What a view rule reads for a node argument: the int of a size node (for this shape)."""
    if value.kind not in ("size", "object") or type(value.obj) is not int:
        raise Unsupported(f"{value.name}: a tensor as the argument of a view")
    return value.obj


def _tensor_arg(values: dict, node) -> Value:
    arg = node.args[0] if node.args else None
    value = values.get(arg) if isinstance(arg, Node) else None
    if value is None or not value.is_tensor or value.kind == "multi":
        raise Unsupported(f"{node.name}: the first argument of {node.target.name} is not a tensor")
    return value


def _mark_fresh(graph, values: dict) -> None:
    """Roots whose memory a graph output exposes are allocated fresh on every call."""
    out = graph.output_node
    if out is None:
        return
    for node in map_arg_nodes(out.args):
        root = values[node].root
        if root is not None and root.kind in ("buffer", "scratch"):
            root.kind = "fresh"


def map_arg_nodes(value) -> list:
    """The Nodes inside an argument structure, in order (repeats kept)."""
    found: list = []
    map_arg(value, found.append)
    return found
