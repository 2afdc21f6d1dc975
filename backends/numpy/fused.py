"""Fused pointwise groups: plan block scratch and in-place reuse, then emit the block loop.

See NOTE: [blocked evaluation] for the iteration space. Inside a block, a member that
nobody outside the group reads lives in a scratch array of the block's shape, taken
from an arena shared by all groups (they run one after another, so the same few
cache-hot arrays serve every group). A member computed by an alias-safe template
writes over the scratch of an argument it reads for the last time, so a chain of
elementwise ops runs in place in one or two arrays. Group outputs are written straight
into their block of the output array. A group too small for more than one block runs
once over whole arrays, with NumPy broadcasting instead of windows.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dynamo_lite.graph.node import Node

from . import runtime
from .blocking import DEFAULT_BLOCK_BYTES, Blocking, broadcast_strides, plan_blocking
from .memory import ALIGN
from .templates import template_for
from .values import Unsupported


@dataclass
class GroupPlan:
    """How one FusionGroup runs.

    Attributes:
        group: the FusionGroup.
        shape: the group shape for these inputs (every member's).
        blocking: its blocks, or None to run once over whole arrays.
        templates: member -> Template, or None where the kernel runs.
        scratch_dtypes: dtype of each scratch slot.
        scratch_of: member -> its scratch slot (members read only inside the group).
        zeros: dtypes of the blocks of zeros templates read.
        quiet: whether floating-point warnings are silenced around the group.
        parts: how many threads share the blocks (each a contiguous run, with its own scratch).
    """

    group: object
    shape: tuple
    blocking: Blocking | None
    templates: dict
    scratch_dtypes: list = field(default_factory=list)
    scratch_of: dict = field(default_factory=dict)
    zeros: list = field(default_factory=list)
    quiet: bool = False
    parts: int = 1

    @property
    def block_shape(self) -> tuple:
        return self.blocking.block_shape if self.blocking else self.shape

    def scratch_bytes(self) -> list:
        """Aligned byte size of each scratch slot."""
        n = _prod(self.block_shape)
        return [-(-n * np.dtype(dt).itemsize // ALIGN) * ALIGN for dt in self.scratch_dtypes]

    @property
    def group_scratch_bytes(self) -> int:
        """Scratch bytes of one thread's share."""
        return sum(self.scratch_bytes())

    @property
    def arena_bytes(self) -> int:
        return self.group_scratch_bytes * self.parts

    @property
    def zeros_bytes(self) -> int:
        n = _prod(self.block_shape)
        return max((n * np.dtype(dt).itemsize for dt in self.zeros), default=0)


# A group is split over threads only when each thread gets this many bytes and blocks,
# and blocks are this large: handing work to a thread costs tens of microseconds, and two
# threads calling NumPy on small blocks spend their time handing the GIL back and forth
# (measured in docs/performance.md).
PARALLEL_MIN_BYTES = 1 << 20
PARALLEL_MIN_BLOCKS = 4
PARALLEL_MIN_BLOCK_BYTES = 128 * 1024


def plan_group(group, values: dict, block_bytes: int = DEFAULT_BLOCK_BYTES, threads: int = 1) -> GroupPlan:
    """Decide blocking, threads, templates and scratch slots for ``group``."""
    members = group.nodes
    shape = tuple(values[group.outputs[0]].sizes)
    if any(tuple(values[m].sizes) != shape for m in members):  # grouped on sizes equal only for other inputs
        raise Unsupported(f"the members of the fused group of {members[0].name} differ in shape for these inputs")
    operands = [values[n] for n in group.inputs if values[n].is_tensor] + [values[n] for n in group.outputs]
    strides = [broadcast_strides(shape, v.sizes, v.strides) for v in operands]
    itemsize = max([v.dtype.itemsize for v in operands] + [values[n].dtype.itemsize for n in members])
    primary = broadcast_strides(shape, values[group.outputs[0]].sizes, values[group.outputs[0]].strides)
    blocking = plan_blocking(shape, primary, strides, itemsize, block_bytes)
    plan = GroupPlan(group, shape, blocking, {m: template_for(m) for m in members})
    if blocking is not None and _prod(blocking.block_shape) * itemsize >= PARALLEL_MIN_BLOCK_BYTES:
        total = _prod(shape) * itemsize
        plan.parts = max(1, min(threads, total // PARALLEL_MIN_BYTES, blocking.block_count // PARALLEL_MIN_BLOCKS))
    plan.quiet = any(t is not None and t.quiet for t in plan.templates.values())
    _assign_scratch(plan, values)
    return plan


def _assign_scratch(plan: GroupPlan, values: dict) -> None:
    members = plan.group.nodes
    position = {m: i for i, m in enumerate(members)}
    last_read = {}
    for m in members:
        for arg in m.all_input_nodes:
            if arg in position:
                last_read[arg] = position[m]
    busy_until: list = []  # slot -> position of its tenant's last reader
    for i, member in enumerate(members):
        if values[member].kind != "scratch":
            continue
        dtype = values[member].dtype.numpy
        template = plan.templates[member]
        slot = None
        if template is not None and template.alias_safe:  # compute in place over a dying argument
            for arg in member.all_input_nodes:
                if arg in plan.scratch_of and last_read[arg] == i and plan.scratch_dtypes[plan.scratch_of[arg]] == dtype:
                    slot = plan.scratch_of[arg]
                    break
        if slot is None:
            free = [s for s, end in enumerate(busy_until) if end < i and plan.scratch_dtypes[s] == dtype]
            slot = free[0] if free else None
        if slot is None:
            slot = len(busy_until)
            busy_until.append(0)
            plan.scratch_dtypes.append(dtype)
        busy_until[slot] = last_read.get(member, i)
        plan.scratch_of[member] = slot
    for member, template in plan.templates.items():
        if template is not None and member.target.name == "relu":
            dtype = values[member].dtype.numpy
            if dtype not in plan.zeros:
                plan.zeros.append(dtype)


class _TemplateContext:
    """What templates see: ufunc and constant names, and the block of zeros."""

    def __init__(self, builder, zeros: dict):
        self.builder, self._zeros = builder, zeros
        self.ufunc, self.const = builder.ufunc, builder.const

    def zeros(self, dtype) -> str:
        return self._zeros[np.dtype(dtype)]


def emit_group(builder, plan: GroupPlan) -> None:
    """Emit one fused group at the builder's current position.

    A group small enough for one block runs inline over whole arrays. A blocked group
    becomes a function of its block list and operand windows, defined beside
    ``forward``, which ``run_blocks`` calls once per thread's share of the blocks.
    """
    values, group = builder.values, plan.group
    for node in group.outputs:
        if values[node].root.kind == "fresh":
            builder.allocate_fresh(values[node])
    operands = [n for n in group.inputs if values[n].is_tensor] + list(group.outputs)
    names = [f"_s{i}" for i in range(len(plan.scratch_dtypes))]
    zero_names = {np.dtype(dt): f"_z_{np.dtype(dt).name}" for dt in plan.zeros}
    if plan.blocking is None:
        block = {node: builder.array_of(values[node]) for node in operands}
        local = names + list(zero_names.values())
        if local:
            arrays = builder.pool_entry(f"{group.nodes[0].name}_scratch", _whole_arrays_builder(group))
            builder.emit(f"{', '.join(local)}{',' if len(local) == 1 else ''} = {arrays}")
        _emit_body(builder, plan, block, names, zero_names, plan.quiet)
        return
    used = _nodes_read(group) | set(group.outputs)
    windows = {node: _window_of(builder, group, values[node]) for node in operands if node in used}
    blocks = builder.pool_entry(f"{group.nodes[0].name}_blocks", _blocks_builder(group))
    sizes = [builder.argument(n) for n in group.inputs if values[n].kind == "size"]  # locals of forward
    function = builder.fresh_name(f"_g_{group.nodes[0].name}")
    params = ["_blocks"] + list(windows.values()) + sizes
    lines = [f"def {function}({', '.join(params)}):"]
    with builder.redirect(lines, 2):
        if plan.quiet:  # in the function: NumPy's error state is per thread
            builder.emit(f"with {builder.bind(np.errstate, 'errstate')}(all='ignore'):")
            builder.indent += 1
        loop_vars = ", ".join(["_I"] + names + list(zero_names.values()))
        builder.emit(f"for {loop_vars}, in _blocks:")  # each block is a tuple, even (index,) alone
        builder.indent += 1
        block = {}
        for node, window in windows.items():
            block[node] = builder.fresh_name(f"{node.name}_b")
            builder.emit(f"{block[node]} = {window}[_I]")
        _emit_body(builder, plan, block, names, zero_names, False)
    builder.preamble += lines + [""]
    builder.emit(f"_run_blocks({function}, {blocks}, {', '.join(list(windows.values()) + sizes)})")


def _emit_body(builder, plan: GroupPlan, block: dict, names: list, zero_names: dict, quiet: bool) -> None:
    """The members' statements, under an error-state guard if ``quiet``."""
    if quiet:
        builder.emit(f"with {builder.bind(np.errstate, 'errstate')}(all='ignore'):")
        builder.indent += 1
    context = _TemplateContext(builder, zero_names)
    members = set(plan.group.nodes)
    for member in plan.group.nodes:
        out = block[member] if member in block else names[plan.scratch_of[member]]
        _emit_member(builder, context, member, out, block, plan, members, names)
    if quiet:
        builder.indent -= 1


def _emit_member(builder, context, member, out, block, plan, members, names) -> None:
    def arg_source(arg, template_dtype=None):
        if isinstance(arg, Node):
            if arg in block:
                return block[arg]
            if arg in members:
                return names[plan.scratch_of[arg]]
            return builder.argument(arg)
        if template_dtype is not None:
            return builder.const(arg, template_dtype)
        return builder.argument(arg)

    builder.comment(member)
    template = plan.templates[member]
    dtype = builder.values[member].dtype.numpy
    if template is not None:
        for line in template.emit(context, out, [arg_source(a, dtype) for a in member.args], dtype, **member.kwargs):
            builder.emit(line)
        return
    kernel = builder.bind(member.target.kernel, f"k_{member.target.name}")
    args = [builder.bind(np, "np")] + [arg_source(a) for a in member.args]
    args += [f"{k}={arg_source(v)}" for k, v in member.kwargs.items()]  # a tensor bound may be a member
    builder.emit(f"_r = {kernel}({', '.join(args)}, out={out})")
    builder.emit(f"if _r is not {out}: {out}[...] = _r")


def _nodes_read(group) -> set:
    return {arg for m in group.nodes for arg in m.all_input_nodes}


def _window_of(builder, group, value) -> str:
    """The name of ``value``'s window over the iteration space (per pool set for pool memory)."""
    np_dtype = value.dtype.numpy

    def geometry(shape):  # (iteration shape, byte offset, byte strides) for one shape's plans
        v, blocking = shape.by_key[value.key], shape.group_plans[group].blocking
        strides = blocking.strides_of(broadcast_strides(shape.group_plans[group].shape, v.sizes, v.strides))
        return blocking.shape, v.offset * v.dtype.itemsize, tuple(s * v.dtype.itemsize for s in strides)

    if value.root.kind == "buffer":
        def build(mem, key=value.key):
            buffer = mem.slots[mem.plan.slot_of[mem.shape.by_key[key].root]]
            return runtime.window(buffer, *geometry(mem.shape)[:1], np_dtype, *geometry(mem.shape)[1:])

        return builder.pool_entry(f"{value.name}_w", build)
    name = builder.fresh_name(f"{value.name}_w")
    dtype = builder.bind(np_dtype, f"dt_{np_dtype.name}")
    shape, offset, strides = (builder.per_shape(f"{value.name}_{part}", lambda sp, i=i: geometry(sp)[i])
                              for i, part in enumerate(("wshape", "woffset", "wstrides")))
    builder.emit(f"{name} = {builder.bind(runtime.window, 'window')}({builder.root_memory(value.root)}, "
                 f"{shape}, {dtype}, {offset}, {strides})")
    return name


def _carve(plan: GroupPlan, mem, shape: tuple, part: int = 0) -> list:
    """Scratch arrays (from thread ``part``'s share of the arena) and zeros (read-only, shared)."""
    arrays, offset = [], part * plan.group_scratch_bytes
    for dtype, nbytes in zip(plan.scratch_dtypes, plan.scratch_bytes()):
        arrays.append(np.ndarray(shape, dtype, mem.arena, offset))
        offset += nbytes
    for dtype in plan.zeros:
        arrays.append(np.ndarray(shape, dtype, mem.zeros, 0))
    return arrays


def _whole_arrays_builder(group):
    def build(mem):
        plan = mem.shape.group_plans[group]
        return tuple(_carve(plan, mem, plan.block_shape))

    return build


def _blocks_builder(group):
    def build(mem):
        plan = mem.shape.group_plans[group]
        blocking = plan.blocking
        rows_full = blocking.block_shape[0]
        parts = []
        for part, (start, stop) in enumerate(_split(blocking.block_count, plan.parts)):
            full = _carve(plan, mem, blocking.block_shape, part)
            blocks = []
            for index, rows in zip(blocking.indices[start:stop], blocking.rows[start:stop]):
                views = full if rows == rows_full else [a[:rows] for a in full]
                blocks.append((index, *views))
            parts.append(blocks)
        return tuple(parts)

    return build


def _split(count: int, parts: int) -> list:
    """``parts`` contiguous (start, stop) ranges covering ``range(count)`` evenly."""
    return [(count * i // parts, count * (i + 1) // parts) for i in range(parts)]


def _prod(values) -> int:
    result = 1
    for v in values:
        result *= v
    return result
