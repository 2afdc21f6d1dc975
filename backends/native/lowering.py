"""NativeLowering: the NumPy backend's code generator with fused groups and row ops as C kernel calls.

The NumPy backend's ``generate`` asks its lowering, in schedule order, to emit each
fused group (``emit_group``) and each other node (``emit_node``); what the lowering
declines keeps the NumPy code. Before memory is planned, ``relocated`` names the fused
groups computed inside a row kernel (NOTE: [native rows]): their members count as run
at the row op's step, so the memory of their inputs stays untouched until then. One
shared object holds every kernel of a generated function (``finish``).
"""
from __future__ import annotations

import ctypes

from .c_ops import HELPERS, lowerable, math_declarations
from .kernel import group_geometry, group_source
from .row_ops import parse_row_call
from .rows import row_call, row_source

_INT64_P = ctypes.POINTER(ctypes.c_int64)
PREAMBLE = "#include <stdint.h>\n#include <math.h>\n" + math_declarations() + "\n" + HELPERS
# Leading arguments of each kind of kernel (then one pointer per operand).
GROUP_ARGS = [ctypes.c_int64, _INT64_P, _INT64_P, ctypes.c_int]
ROW_ARGS = [ctypes.c_int64, _INT64_P, ctypes.c_int64, _INT64_P, ctypes.c_int]


class NativeLowering:
    """Emits lowerable fused groups and row ops as C kernel calls; builds one library per function.

    Args:
        build: ``build(source) -> ctypes.CDLL`` (the toolchain's cached build).
        threads: a ``ThreadSetting`` whose ``value`` each call passes to the kernel.
    """

    def __init__(self, build, threads):
        self._build, self.threads = build, threads
        self.functions: list = []  # (C name, global name, argtypes) of the function being generated
        self.sources: list = []
        self.prologues: dict = {}  # id(FusionGroup) -> the row op computing it per element
        self._prologue_plans: dict = {}  # row op -> the GroupPlan of its prologue
        self._pool_pointers: dict = {}  # pool Value -> the expression of its address
        self.built_source = ""  # the C source of the last function built (shown by debug mode)

    # -- hooks called by the NumPy backend's generate ------------------------------------------
    def relocated(self, groups: list, values: dict) -> dict:
        """``{member: row op}`` for every fused group a row kernel computes as its prologue."""
        self.prologues, self._prologue_plans = {}, {}
        graph_mutates = any("inplace" in getattr(n.target, "tags", ()) for n in values if n.op == "call_function")
        if graph_mutates:  # the group would run later than scheduled: a mutation in between would show
            return {}
        moved = {}
        for group in groups:
            reader = _prologue_reader(group, values)
            if reader is not None:
                self.prologues[id(group)] = reader
                moved.update({member: reader for member in group.nodes})
        return moved

    def fused_nodes(self, group) -> list:
        """The nodes one kernel computes for ``group``: its members, and the row op it feeds if it is a prologue."""
        reader = self.prologues.get(id(group))
        return list(group.nodes) + ([reader] if reader is not None else [])

    def emit_group(self, builder, plan) -> bool:
        """Emit ``plan``'s group as a C kernel call; False if some member has no exact lowering."""
        group, values = plan.group, builder.values
        reader = self.prologues.get(id(group))
        if reader is not None:
            self._prologue_plans[reader] = plan
            builder.emit(f"# {', '.join(m.name for m in group.nodes)}: computed inside {reader.name}'s row kernel")
            return True
        if not all(lowerable(m) for m in group.nodes) or any(not values[n].is_tensor for n in group.inputs):
            return False
        for node in group.outputs:
            if values[node].root.kind == "fresh":
                builder.allocate_fresh(values[node])
        operands, sizes, strides = group_geometry(plan, values)
        names = self._add(builder, group.nodes, lambda name: group_source(name, plan, operands, [s[-1] for s in strides]),
                          "group", GROUP_ARGS, len(operands))
        flat = [s for per_operand in strides for s in per_operand]
        self._emit_call(builder, names, group.nodes, [len(sizes), self._ints(builder, sizes, "sizes"),
                                                      self._ints(builder, flat, "strides")], operands)
        return True

    def emit_node(self, builder, node) -> bool:
        """Emit a reduction or normalization as a C row kernel; False to keep the NumPy code."""
        spec = parse_row_call(node)
        if spec is None:
            return False
        prologue = self._prologue_plans.pop(node, None)
        call = row_call(node, spec, builder.values, prologue)
        if call is None:
            if prologue is not None:
                raise AssertionError(f"{node.name}: its prologue was planned but its kernel was refused")
            return False
        value = builder.values[node]
        if value.root.kind == "fresh":
            builder.allocate_fresh(value)
        members = (prologue.group.nodes if prologue else []) + [node]
        names = self._add(builder, members, lambda name: row_source(name, call), "row", ROW_ARGS, len(call.operands))
        flat = [s for per_operand in call.strides for s in per_operand]
        self._emit_call(builder, names, members, [len(call.sizes), self._ints(builder, call.sizes, "sizes"), call.row,
                                                  self._ints(builder, flat, "strides")], call.operands)
        return True

    def finish(self, builder) -> None:
        """Build the library of the emitted kernels and bind them (raises BuildError); the
        next generated function (another signature) starts a new library."""
        functions, source = self.functions, self.source
        self.functions, self.sources, self._pool_pointers = [], [], {}
        if not functions:
            return
        library = self._build(source)
        self.built_source = source
        for c_name, global_name, argtypes in functions:
            function = getattr(library, c_name)
            function.restype = None
            function.argtypes = argtypes
            builder.globals[global_name] = function

    @property
    def source(self) -> str:
        """The C source of every kernel emitted so far."""
        return PREAMBLE + "\n\n" + "\n\n".join(self.sources) + "\n"

    # -- helpers ------------------------------------------------------------------------------
    def _add(self, builder, members: list, make_source, kind: str, leading: list, operand_count: int) -> tuple:
        """Add a kernel to the library being generated: ``(C name, global name of its binding)``."""
        c_name = f"dl_{kind}{len(self.functions)}"
        function = builder.fresh_name(f"_native_{members[0].name}")
        self.sources.append(make_source(c_name))
        self.functions.append((c_name, function, leading + [ctypes.c_void_p] * operand_count))
        return c_name, function

    @staticmethod
    def _ints(builder, values, base: str) -> str:
        return builder.bind((ctypes.c_int64 * max(len(values), 1))(*values), base)

    def _pointer(self, builder, value) -> str:
        """The address of ``value``'s first element: computed once per pool set for pool memory
        (it never moves; the entry holds the array too, which keeps the memory alive), per call
        for inputs and fresh outputs."""
        if value.root.kind != "buffer":
            return f"{builder.array_of(value)}.ctypes.data"
        if value not in self._pool_pointers:
            def pinned(mem, v=value):
                array = mem.array(v)
                return array, array.ctypes.data

            self._pool_pointers[value] = builder.pool_entry(f"{value.name}_p", pinned) + "[1]"
        return self._pool_pointers[value]

    def _emit_call(self, builder, names: tuple, members: list, leading: list, operands: list) -> None:
        c_name, function = names
        pointers = [self._pointer(builder, builder.values[n]) for n in operands]
        settings = builder.bind(self.threads, "threads")
        builder.emit(f"# native kernel {c_name}: {', '.join(m.name for m in members)}")
        arguments = [str(a) for a in leading] + [f"{settings}.value"] + pointers
        builder.emit(f"{function}({', '.join(arguments)})")


def _prologue_reader(group, values: dict):
    """The row op computing ``group`` per element, when its one output feeds only that op."""
    if len(group.outputs) != 1 or not all(lowerable(m) for m in group.nodes):
        return None
    output = group.outputs[0]
    readers = list(output.users)
    if len(readers) != 1:
        return None
    reader = readers[0]
    spec = parse_row_call(reader)
    if spec is None or reader.args[0] is not output or output in spec.extras:
        return None
    return reader if row_call(reader, spec, values, _GroupOnly(group)) is not None else None


class _GroupOnly:
    """A stand-in GroupPlan (``row_call`` reads only the group) for planning before groups are planned."""

    def __init__(self, group):
        self.group = group
