"""Fused pointwise kernels: a group of elementwise nodes becomes one loop over its shape.

NOTE: [sizes as kernel arguments] Every generated kernel takes its geometry as ``long
long`` arguments (``SizeParam``, collected by ``SizeArguments``): a pointwise kernel its
element count and every size and stride of its iteration space other than 0 and 1; a
row kernel (rows.py, normalization.py) also its row count and row length, and the
threads per row chosen at launch (NOTE: [rows per block]). A source depends only on the
structure of its loops (how many coalesced dims, which operands broadcast or step by
one, the index type), never on the sizes. A graph with symbolic sizes is lowered again
for each shape it meets (see NOTE: [backends and symbolic sizes] in
backends/per_shape.py; lowering is Python string work), and every shape with the same
structure reuses the one compiled kernel with new argument values: one NVRTC compile
per kernel for all sizes (tests/backends/test_cupy_dynamic.py).
"""
from __future__ import annotations

from dynamo_lite.graph.node import Node, map_aggregate
from dynamo_lite.ops.core.registry import Op
from dynamo_lite.tensor.meta import TensorMeta

from .c_types import C_TYPES, ctype
from .expressions import EXPRESSIONS, Value
from .indexing import broadcast_strides, make_space, offset_code
from .kernel import ELEMENTWISE, Param, SizeArguments, make_kernel


def tensor_meta(node) -> TensorMeta | None:
    value = node.meta.get("val") if isinstance(node, Node) else None
    return value if isinstance(value, TensorMeta) and value._dtype in C_TYPES else None


def _operands_ok(node: Node) -> bool:
    ok = []

    def check(value):
        if isinstance(value, Node):
            ok.append(tensor_meta(value) is not None)
        elif isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
            ok.append(abs(value) < 2**63 or isinstance(value, float))

    map_aggregate((node.args, node.kwargs), check)
    return all(ok)


def expressible(node: Node) -> bool:
    """True if ``node`` has a C expression matching its eager result (see expressions.py)."""
    if node.op != "call_function" or not isinstance(node.target, Op):
        return False
    rule = EXPRESSIONS.get(node.target.name)
    meta = tensor_meta(node)
    if rule is None or meta is None or not _operands_ok(node):
        return False
    if node.target.name == "_to_copy":
        source = tensor_meta(node.args[0]) if node.args else None
        if source is None or source._device != meta._device:
            return False  # a device transfer is a copy between memories, not a kernel
    values = {n: Value(n.name, tensor_meta(n)._dtype, tensor_meta(n)) for n in node.all_input_nodes}
    return _apply(node, values) is not None


def _apply(node: Node, values: dict):
    args = map_aggregate(node.args, lambda v: values[v] if isinstance(v, Node) else v)
    kwargs = map_aggregate(node.kwargs, lambda v: values[v] if isinstance(v, Node) else v)
    return EXPRESSIONS[node.target.name](node.meta["val"]._dtype, list(args), kwargs)


def member_statements(members: list, values: dict, prefix: str = "") -> list:
    """``const T v<i> = <expr>;`` for each member; fills ``values`` with their Values.

    Variables are numbered, not named after nodes, so equal computations in different
    graphs give equal sources (and share one compiled kernel).
    """
    lines = []
    for index, node in enumerate(members):
        meta = node.meta["val"]
        var = f"{prefix}v{index}"
        lines.append(f"const {ctype(meta._dtype).compute} {var} = {_apply(node, values)};")
        values[node] = Value(var, meta._dtype, meta)
    return lines


def load_statement(node: Node, param: str, offset: str, prefix: str = "") -> tuple:
    """``(line, Value)`` loading one element of input ``node`` from pointer ``param``."""
    meta = node.meta["val"]
    ct = ctype(meta._dtype)
    var = f"{prefix}x_{param}"
    return f"const {ct.compute} {var} = {ct.load.format(f'{param}[{offset}]')};", Value(var, meta._dtype, meta)


def input_params(inputs: list) -> list:
    return [Param(f"in{i}", n.meta["val"]._dtype, False) for i, n in enumerate(inputs)]


def operand_strides(shape: tuple, node: Node) -> tuple:
    meta = node.meta["val"]
    return broadcast_strides(shape, meta._sizes, meta._strides)


def build_pointwise(members: list, inputs: list, outputs: list, shape: tuple):
    """The kernel computing ``outputs`` of a fusion group over ``shape``.

    Args:
        members: the group's nodes in topological order (all ``expressible``).
        inputs: nodes outside the group the members read (tensors broadcasting to ``shape``).
        outputs: members whose values leave the group; each gets a fresh tensor with
            the strides of its TensorMeta.
        shape: the group's output shape.

    Example:
        >>> k = build_pointwise(group.nodes, group.inputs, group.outputs, group.shape)
        >>> k.params[0].declaration()
        'const float* __restrict__ in0'
    """
    params = input_params(inputs) + [Param(f"out{i}", n.meta["val"]._dtype, True) for i, n in enumerate(outputs)]
    out_strides = [tuple(n.meta["val"]._strides) for n in outputs]
    strides = out_strides + [operand_strides(shape, n) for n in inputs]
    space = make_space(tuple(shape), strides, order_by=0)
    itype = space.index_type()
    names = [p.name for p in params[len(inputs):]] + [p.name for p in params[:len(inputs)]]
    sizes = SizeArguments(itype)
    numel = sizes("numel", space.numel)
    lines, offsets = offset_code(space, "i", names, itype, "", sizes)
    params += sizes.params()
    out_offsets, in_offsets = offsets[:len(outputs)], offsets[len(outputs):]
    body = [f"for ({itype} i = ({itype})(blockIdx.x * blockDim.x + threadIdx.x); i < {numel}; "
            f"i += ({itype})(blockDim.x * gridDim.x)) {{"]
    inner = list(lines)
    values: dict = {}
    for node, param, offset in zip(inputs, params, in_offsets):
        line, values[node] = load_statement(node, param.name, offset)
        inner.append(line)
    inner += member_statements(members, values)
    for i, (node, offset) in enumerate(zip(outputs, out_offsets)):
        ct = ctype(node.meta["val"]._dtype)
        inner.append(f"out{i}[{offset}] = {ct.store.format(values[node].expr)};")
    body += ["  " + line for line in inner] + ["}"]
    return make_kernel("pointwise", params, body, launch=ELEMENTWISE, work=space.numel,
                       inputs=tuple(inputs), outputs=tuple(outputs), nodes=tuple(members),
                       size_args=sizes.values())
