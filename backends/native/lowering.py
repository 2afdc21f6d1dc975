"""NativeLowering: the NumPy backend's code generator with fused groups and row ops as C kernel calls.

The NumPy backend's ``generate`` asks its lowering, in schedule order, to emit each
fused group (``emit_group``) and each other node (``emit_node``); what the lowering
declines keeps the NumPy code. Before memory is planned, ``relocated`` names the fused
groups computed inside a row or pooling kernel (NOTE: [native rows]): their members count as run
at the row op's step, so the memory of their inputs stays untouched until then. One
shared object holds every kernel of a generated function (``finish``).

Kernel calls, their argument blocks and chains of kernels called as one: NOTE: [native calls]
in calls.py.
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .c_ops import HELPERS, lowerable, math_declarations
from .calls import KernelCalls
from .conv_direct import direct_source
from .conv_fusion import conv_epilogues, direct_call, direct_words
from .conv_ops import conv2d_product
from .conv_transpose import transpose_call, transpose_source
from .copies import copy_call, copy_source
from .gemm import addmm_call, gemm_source, linear_call, matmul_call
from .image_avg_pool import avg_pool_call, avg_pool_source
from .image_grads import IMAGE_OPS, image_call, image_source
from .image_resample import resample_call, resample_source
from .kernel import group_geometry, group_source
from .row_ops import parse_row_call
from .rows import row_call, row_source
from .vector_loop import vector_preamble

# Kernel source per library unit (NOTE: [native build units]): gcc's time grows faster than the
# source, and units build in parallel and are cached one by one.
MAX_UNIT_BYTES = 96 << 10
BUILD_WORKERS = max(1, min(8, os.cpu_count() or 1))
PREAMBLE = "#include <stdint.h>\n#include <math.h>\n" + math_declarations() + "\n" + HELPERS
# Ops computed by one C kernel each, by target name:
# (the call at some values or None, its C source, its kind in calls.LEADING).
NODE_KERNELS = {"linear": (linear_call, gemm_source, "gemm"), "matmul": (matmul_call, gemm_source, "gemm"),
                "mm": (matmul_call, gemm_source, "gemm"), "bmm": (matmul_call, gemm_source, "gemm"),
                "addmm": (addmm_call, gemm_source, "gemm"), "clone": (copy_call, copy_source, "group"),
                "conv_transpose2d": (transpose_call, transpose_source, "image"),
                "upsample_nearest": (resample_call, resample_source, "image"),
                "upsample_bilinear2d": (resample_call, resample_source, "image"),
                "avg_pool2d": (avg_pool_call, avg_pool_source, "image")}


class NativeLowering:
    """Emits lowerable fused groups and row ops as C kernel calls; builds one library per function.

    Args:
        build: ``build(source) -> ctypes.CDLL`` (the toolchain's cached build).
        threads: a ``ThreadSetting`` whose ``value`` each call passes to the kernel.
    """

    def __init__(self, build, threads):
        self._build, self.threads = build, threads
        self.calls = KernelCalls(threads, MAX_UNIT_BYTES)  # of the function being generated
        self.prologues: dict = {}  # id(FusionGroup) -> the row op or max_pool2d computing it per element
        self._prologue_plans: dict = {}  # that op -> the GroupPlan of its prologue
        self.epilogues: dict = {}  # conv2d run as a direct convolution -> its ConvEpilogue (NOTE: [conv2d epilogues])
        self._epilogue_of: dict = {}  # a node of an epilogue -> its conv2d
        self.built_source = ""  # the C source of the last function built (shown by debug mode)
        self.build_units: list = []  # (distinct kernels, seconds) of each library unit built (NOTE: [native build units])

    # -- hooks called by the NumPy backend's generate ------------------------------------------
    def relocated(self, groups: list, values: dict) -> dict:
        """``{member: row op}`` for every fused group a row kernel computes as its prologue, and ``{node:
        conv2d}`` for the relu and max_pool2d a direct conv2d kernel computes (NOTE: [conv2d epilogues])."""
        self.prologues, self._prologue_plans = {}, {}
        graph_mutates = any("inplace" in getattr(n.target, "tags", ()) for n in values if n.op == "call_function")
        self.epilogues = conv_epilogues(groups, values, fuse=not graph_mutates)
        self._epilogue_of = {n: conv for conv, epilogue in self.epilogues.items() for n in epilogue.nodes}
        moved = dict(self._epilogue_of)
        if graph_mutates:  # the group would run later than scheduled: a mutation in between would show
            return moved
        for group in groups:
            if group.nodes[0] in moved:
                continue
            reader = _prologue_reader(group, values)
            if reader is not None:
                self.prologues[id(group)] = reader
                moved.update({member: reader for member in group.nodes})
        return moved

    def structure(self, groups: list, values: dict) -> dict:
        """What the C code depends on at this shape (after ``relocated``): per fused group and
        row op the lowering emits, its kernel's source (see NOTE: [native calls])."""
        kernels = {}
        for group in groups:
            reader = self.prologues.get(id(group))
            if group.nodes[0] in self._epilogue_of:
                kernels[group] = ("epilogue of", self._epilogue_of[group.nodes[0]].name)
            elif reader is not None:
                kernels[group] = ("prologue of", reader.name)
            elif self._lowers(group, values):
                plan = _GroupOnly(group, values)
                operands, _, strides = group_geometry(plan, values)
                kernels[group] = group_source("k", plan, operands, [s[-1] for s in strides])
        relocated = {reader: group for group in groups for reader in [self.prologues.get(id(group))] if reader}
        for node in values:
            if node in self._epilogue_of:
                kernels[node] = ("epilogue of", self._epilogue_of[node].name)
                continue
            if node in self.epilogues:
                kernels[node] = direct_source("k", direct_call(node, values, self.epilogues[node]))
                continue
            kernel = NODE_KERNELS.get(getattr(node.target, "name", None)) if node.op == "call_function" else None
            if kernel is not None:
                call = kernel[0](node, values)
                kernels[node] = None if call is None else kernel[1]("k", call)
                continue
            if node.op == "call_function" and getattr(node.target, "name", None) in IMAGE_OPS:
                call = image_call(node, values, relocated.get(node))
                kernels[node] = None if call is None else image_source("k", call)
                continue
            spec = parse_row_call(node) if node.op == "call_function" else None
            if spec is not None:
                group = relocated.get(node)
                call = row_call(node, spec, values, _GroupOnly(group, values) if group is not None else None)
                kernels[node] = None if call is None else row_source("k", call)
        return kernels

    def fused_nodes(self, group) -> list:
        """The nodes one kernel computes for ``group``: its members, and the row op it feeds if it is a prologue."""
        reader = self.prologues.get(id(group))
        return list(group.nodes) + ([reader] if reader is not None else [])

    def emit_group(self, builder, plan) -> bool:
        """Emit ``plan``'s group as a C kernel call; False if some member has no exact lowering."""
        return self._emitting(builder, self._emit_group, plan)

    def emit_node(self, builder, node) -> bool:
        """Emit a reduction, normalization, linear or image op as a C kernel; False to keep the NumPy code."""
        return self._emitting(builder, self._emit_node, node)

    def _emitting(self, builder, emit, item) -> bool:
        """``emit(builder, item)``, telling the calls when the lowering emits (NOTE: [native calls])."""
        self.calls.enter(builder)
        emitted = emit(builder, item)
        if emitted:
            self.calls.leave(builder)
        return emitted

    def _emit_group(self, builder, plan) -> bool:
        group, values = plan.group, builder.values
        if group.nodes[0] in self._epilogue_of:
            return self._computed_by_conv(builder, group.nodes)
        reader = self.prologues.get(id(group))
        if reader is not None:
            self._prologue_plans[reader] = plan
            builder.emit(f"# {', '.join(m.name for m in group.nodes)}: computed inside {reader.name}'s kernel")
            return True
        if not self._lowers(group, values):
            return False
        _allocate(builder, [values[node] for node in group.outputs])
        operands, _, strides = group_geometry(plan, values)

        def geometry(shape):
            _, sizes, strides = group_geometry(shape.group_plans[group], shape.values)
            return [len(sizes), *sizes, *(s for per_operand in strides for s in per_operand)]

        source = lambda name: group_source(name, plan, operands, [s[-1] for s in strides])  # noqa: E731
        self.calls.add(builder, "group", source, group.nodes, operands, geometry)
        return True

    def _emit_node(self, builder, node) -> bool:
        name = getattr(node.target, "name", None)  # size arithmetic nodes call plain functions
        if node in self._epilogue_of:
            return self._computed_by_conv(builder, [node])
        if node in self.epilogues:
            return self._emit_direct_conv(builder, node)
        if name in NODE_KERNELS:
            return self._emit_node_kernel(builder, node, *NODE_KERNELS[name])
        if name in IMAGE_OPS:
            return self._emit_image(builder, node)
        spec = parse_row_call(node)
        if spec is None:
            return False
        prologue = self._prologue_plans.pop(node, None)
        call = row_call(node, spec, builder.values, prologue)
        if _refused(node, call, prologue):
            return False
        _allocate(builder, [builder.values[node]])
        group = prologue.group if prologue is not None else None

        def geometry(shape):
            call = row_call(node, spec, shape.values, shape.group_plans[group] if group is not None else None)
            return [len(call.sizes), call.row, *call.sizes, *(s for per_operand in call.strides for s in per_operand)]

        members = (list(group.nodes) if group is not None else []) + [node]
        self.calls.add(builder, "row", lambda name: row_source(name, call), members, call.operands, geometry)
        return True

    def _emit_node_kernel(self, builder, node, parse, make_source, kind: str) -> bool:
        """One node as one C kernel (``NODE_KERNELS``); False to keep the NumPy code."""
        call = parse(node, builder.values)
        if call is None:
            return False
        _allocate(builder, [builder.values[node]])
        scratch = None if not hasattr(call, "scratch") else lambda shape: parse(node, shape.values).scratch()
        self.calls.add(builder, kind, lambda name: make_source(name, call), [node], call.operands,
                        lambda shape: parse(node, shape.values).words, scratch)
        return True

    def _emit_image(self, builder, node) -> bool:
        """max_pool2d as one kernel; conv2d as one kernel calling eager's gemm (NOTE: [gemm from C]), or
        else as the gather kernel, then eager's product (NOTE: [native image ops])."""
        prologue = self._prologue_plans.pop(node, None)
        group = prologue.group if prologue is not None else None
        call = image_call(node, builder.values, group)
        if _refused(node, call, prologue):
            return False
        value = builder.values[node]
        _allocate(builder, [value])
        cols = None
        if call.cols_shape is not None:
            dtype = value.dtype.numpy
            cols = lambda shape: np.empty(image_call(node, shape.values).cols_shape, dtype)  # noqa: E731
        members = (list(group.nodes) if group is not None else []) + [node]
        block, index = self.calls.add(builder, "image", lambda name: image_source(name, call), members, call.operands,
                                      lambda shape: image_call(node, shape.values, group).words, cols)
        if call.product_in_python:
            weight, bias = node.args[1], (node.args[2] if len(node.args) > 2 else None)
            arrays = [builder.argument(a) for a in (weight, bias)]
            out = builder.array_of(value)
            builder.emit(f"{builder.bind(conv2d_product, 'conv2d_product')}({block}[2][{index}], {', '.join(arrays)}, {out})")
            self.calls.close()
        return True

    def _computed_by_conv(self, builder, nodes: list) -> bool:
        builder.emit(f"# {', '.join(n.name for n in nodes)}: computed inside {self._epilogue_of[nodes[0]].name}'s kernel")
        return True

    def _emit_direct_conv(self, builder, node) -> bool:
        """A conv2d and its epilogue as one direct convolution kernel (NOTE: [conv2d epilogues])."""
        epilogue = self.epilogues[node]
        call = direct_call(node, builder.values, epilogue)
        written = [builder.values[n] for n in call.operands[-2 if call.keep else -1:]]
        _allocate(builder, written)
        dtype = written[0].dtype.numpy

        def scratch(shape):
            n, _, h, w = shape.values[node.args[0]].sizes
            return np.empty(call.scratch_elements(n, h, w), dtype)

        self.calls.add(builder, "image", lambda name: direct_source(name, call), [node] + epilogue.nodes, call.operands,
                       lambda shape: direct_words(call, shape.values), scratch)
        return True

    def finish(self, builder) -> None:
        """Build the library of the emitted kernels and bind them (raises BuildError); the
        next generated function (another signature) starts a new library."""
        calls, self.calls = self.calls, KernelCalls(self.threads, MAX_UNIT_BYTES)
        if not calls.chains:
            return
        units = calls.units(MAX_UNIT_BYTES)  # NOTE: [native build units]
        sources = [calls.unit_source(PREAMBLE + vector_preamble(calls.unit_kernel_sources(unit)), unit)
                   for unit in units]
        built = _build_all(self._build, sources)
        self.built_source = "\n".join(sources)
        self.build_units += [(len(calls.unit_kernel_sources(unit)), seconds) for unit, (_, seconds) in zip(units, built)]
        for unit, (library, _) in zip(units, built):
            calls.bind(library, builder, unit)

    # -- helpers ------------------------------------------------------------------------------
    @staticmethod
    def _lowers(group, values: dict) -> bool:
        return all(lowerable(m) for m in group.nodes) and all(values[n].is_tensor for n in group.inputs)


def _build_all(build, sources: list) -> list:
    """``[(library, seconds)]`` of each source, built in parallel (the compiler runs as a subprocess, so
    threads overlap its runs); raises the first BuildError."""
    def timed(source):
        started = time.perf_counter()
        library = build(source)
        return library, time.perf_counter() - started

    if len(sources) == 1:
        return [timed(sources[0])]
    with ThreadPoolExecutor(max_workers=min(len(sources), BUILD_WORKERS)) as pool:
        return list(pool.map(timed, sources))


def _prologue_reader(group, values: dict):
    """The row op or max_pool2d computing ``group`` per element, when its one output feeds only that op and
    every input has the op's dtype (a bool mask read in each pass over the row made a masked
    softmax slower than a separate masked_fill kernel: 123 vs 78 us on (4, 4, 32, 32))."""
    if len(group.outputs) != 1 or not all(lowerable(m) for m in group.nodes):
        return None
    output = group.outputs[0]
    if any(values[n].dtype is not values[output].dtype for n in group.inputs if values[n].is_tensor):
        return None
    readers = list(output.users)
    if len(readers) != 1:
        return None
    reader = readers[0]
    if getattr(reader.target, "name", None) == "max_pool2d":
        return reader if reader.args[0] is output and image_call(reader, values, group) is not None else None
    spec = parse_row_call(reader)
    if spec is None or reader.args[0] is not output or output in spec.extras:
        return None
    return reader if row_call(reader, spec, values, _GroupOnly(group, values)) is not None else None


class _GroupOnly:
    """A stand-in GroupPlan (the group and its shape for ``values``) for planning before groups are planned."""

    def __init__(self, group, values: dict):
        self.group, self.shape = group, tuple(values[group.outputs[0]].sizes)


def _allocate(builder, values) -> None:
    """Allocate the output buffers among ``values`` that the kernel writes fresh (not views of others)."""
    for value in values:
        if value.root.kind == "fresh":
            builder.allocate_fresh(value)


def _refused(node, call, prologue) -> bool:
    """Whether ``node``'s kernel was refused (``call`` None); one whose prologue group was already planned
    inside it must not be (that group's code was left out)."""
    if call is None and prologue is not None:
        raise AssertionError(f"{node.name}: its prologue was planned but its kernel was refused")
    return call is None
