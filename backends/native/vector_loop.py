"""Vector loops of fused float32 groups: each member as AVX-512 or AVX2 intrinsics, the tail through a lane mask.

See NOTE: [vector loops] in vector_math.py for why; kernel.py emits one function per instruction
set next to the scalar loop, under ``DL_VECTOR_LOOPS``, and calls the one the CPU runs best
(NOTE: [vector ISA dispatch]). A group gets one when every member has an entry in
``VECTOR_OPS``, computes in float32 from float32 tensors and Python scalars, and every
operand is unit-stride or broadcast along the innermost dim. Each entry is the scalar
expression of ``c_ops.C_OPS`` with the same operations in the same order, so the two loops
give the same bits (NOTE: [native exactness] holds for both). A group with several exp-based
members is computed in stages over blocks (NOTE: [vector stages] in vector_stages.py).
"""
from __future__ import annotations

import numpy as np

from dynamo_lite.graph.node import Node

from dynamo_lite.ops.pointwise.unary import GELU_TANH_K

from .c_operands import dtype_of, literal, scalar
from .c_ops import c_arguments, c_op_name
from .vector_isa import AVX512, VECTOR_ISAS, VectorISA
from .vector_math import VECTOR_FUNCTIONS, VECTOR_MATH_SOURCE
from .vector_stages import BLOCK, inputs_read, scratch_read, staged

FLOAT32 = np.dtype(np.float32)
GUARD = "#ifdef DL_VECTOR_LOOPS"


def vector_preamble(sources: list) -> str:
    """The vector functions (and ``<immintrin.h>``) when one of ``sources`` has a vector loop, else nothing:
    the header alone takes gcc a few tenths of a second, which a library without vector loops should not pay."""
    return VECTOR_MATH_SOURCE if any(GUARD in source for source in sources) else ""


def _call(operation: str):
    """An intrinsic of the set (``add_ps`` -> ``_mm512_add_ps``) applied to the arguments."""
    return lambda isa, a: f"{isa.op(operation)}({', '.join(a)})"


def _function(name: str):
    """A vector math function of the set (``tanhf`` -> ``dl_v16_tanhf``) applied to the arguments."""
    return lambda isa, a: f"{isa.function(name)}({', '.join(a)})"


def _scaled(operation: str):
    """add/sub, with ``alpha`` as a third argument when it scales a tensor (c_ops._scaled_binary)."""
    return lambda isa, a: f"{isa.op(operation)}({a[0]}, {a[1]})" if len(a) == 2 else \
        f"{isa.op(operation)}({a[0]}, {isa.op('mul_ps')}({a[1]}, {a[2]}))"


def _ops(isa):
    """The set's add, sub, mul, div and its constants 1, 0.5 and 0."""
    return (isa.op("add_ps"), isa.op("sub_ps"), isa.op("mul_ps"), isa.op("div_ps"), isa.splat("1.0f"),
            isa.splat("0.5f"), isa.op("setzero_ps()"))


def _relu(isa, a):
    # c_ops: ((0 > x ? 0 : x) + 0); max_ps(p, q) is exactly (p > q ? p : q)
    add, zero = isa.op("add_ps"), isa.op("setzero_ps()")
    return f"{add}({isa.op('max_ps')}({zero}, {a[0]}), {zero})"


def _gelu_tanh(isa, a):
    # c_ops._gelu_tanh's operations: 0.5 x (1 + tanh(((x x) c1 + c2) x))
    add, _, mul, _, one, half, _ = _ops(isa)
    x, c1, c2 = a[0], isa.splat(literal(0.044715 * GELU_TANH_K, "float")), isa.splat(literal(GELU_TANH_K, "float"))
    inner = f"{mul}({add}({mul}({mul}({x}, {x}), {c1}), {c2}), {x})"
    return f"{mul}({mul}({add}({isa.function('tanhf')}({inner}), {one}), {x}), {half})"


def _rsqrt(isa, a):
    return f"{isa.op('div_ps')}({isa.splat('1.0f')}, {isa.op('sqrt_ps')}({a[0]}))"


def _lerp_from_start(isa, a):
    add, sub, mul, *_ = _ops(isa)
    return f"{add}({a[0]}, {mul}({a[2]}, {sub}({a[1]}, {a[0]})))"


def _lerp_from_end(isa, a):
    _, sub, mul, _, one, *_ = _ops(isa)
    return f"{sub}({a[1]}, {mul}({sub}({a[1]}, {a[0]}), {sub}({one}, {a[2]})))"


# op name (c_ops.c_op_name) -> expr(isa, [argument vector expressions]) -> the vector expression of its result.
VECTOR_OPS = {
    "add": _scaled("add_ps"),
    "sub": _scaled("sub_ps"),
    "mul": _call("mul_ps"),
    "div": _call("div_ps"),
    "neg": _function("neg"),
    "abs": _function("abs"),
    "square": lambda isa, a: f"{isa.op('mul_ps')}({a[0]}, {a[0]})",
    "sqrt": _call("sqrt_ps"),
    "rsqrt": _rsqrt,
    "reciprocal": lambda isa, a: f"{isa.op('div_ps')}({isa.splat('1.0f')}, {a[0]})",
    **{name: _function(function) for name, function in VECTOR_FUNCTIONS.items()},
    "silu": lambda isa, a: f"{isa.op('mul_ps')}({isa.function('sigmoidf')}({a[0]}), {a[0]})",
    "relu": _relu,
    "gelu_tanh": _gelu_tanh,
    "maximum": _function("max"),
    "minimum": _function("min"),
    "lerp_from_start": _lerp_from_start,
    "lerp_from_end": _lerp_from_end,
    "addcmul": lambda isa, a: f"{isa.op('add_ps')}({a[0]}, {isa.op('mul_ps')}({isa.op('mul_ps')}({a[1]}, {a[3]}), {a[2]}))",
    "addcdiv": lambda isa, a: f"{isa.op('add_ps')}({a[0]}, {isa.op('div_ps')}({isa.op('mul_ps')}({a[1]}, {a[3]}), {a[2]}))",
}


def _arguments(node, index: dict, isa: VectorISA) -> list | None:
    """The vector expressions of ``node``'s arguments, or None when one is not a float32 operand."""
    expressions = []
    for position, arg in enumerate(c_arguments(node)):
        if isinstance(arg, Node):
            if dtype_of(arg) != FLOAT32 or arg not in index:
                return None
            expressions.append(index[arg])
        else:
            value = scalar(node, position, arg, "float")
            if value is None:
                return None
            expressions.append(isa.splat(value))
    return expressions


def vector_member_lines(members: list, index: dict, isa: VectorISA = AVX512, suffix: str = "") -> tuple | None:
    """``(lines, index)``: lines of ``isa``'s vectors computing ``members`` (``w0``, ``w1``, ... each followed by
    ``suffix``) and ``index`` (a node's vector expression) with each member's added; None when one has no vector
    form."""
    index, lines = dict(index), []
    for j, member in enumerate(members):
        name = c_op_name(member)
        args = _arguments(member, index, isa) if name in VECTOR_OPS and dtype_of(member) == FLOAT32 else None
        if args is None:
            return None
        lines.append(f"const {isa.vtype} w{j}{suffix} = {VECTOR_OPS[name](isa, args)};  /* {member.name} */")
        index[member] = f"w{j}{suffix}"
    return lines, index


def _tail_mask(isa: VectorISA, left: str = "n - i") -> tuple:
    """(the line making ``lanes``, the first ``left`` of them set, the masked load of ``p``, the masked store of
    ``v`` at ``p``) of ``isa``."""
    if isa.lanes == 16:
        return (f"const __mmask16 lanes = (__mmask16)((1u << ({left})) - 1);",
                lambda p: f"_mm512_maskz_loadu_ps(lanes, {p})", lambda p, v: f"_mm512_mask_storeu_ps({p}, lanes, {v});")
    return (f"const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)({left})), "
            "_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));",
            lambda p: f"_mm256_maskload_ps({p}, lanes)", lambda p, v: f"_mm256_maskstore_ps({p}, lanes, {v});")


def _chunk_function(name: str, isa: VectorISA, members: list, inputs: list, outputs: list,
                    inner_strides: list) -> list:
    operands = inputs + outputs
    broadcast = [k for k in range(len(inputs)) if inner_strides[k] == 0]
    parameters = ["int64_t n"] + [f"float* a{k}" for k in range(len(operands))] + [f"float b{k}" for k in broadcast]
    plan = staged(members)
    if plan is not None:
        return _staged_function(name, isa, plan, inputs, outputs, inner_strides, parameters)
    body, index = vector_member_lines(members, {node: f"x{k}" for k, node in enumerate(inputs)}, isa)
    loaded = [k for k in range(len(inputs)) if inner_strides[k] == 1]
    stored = [(k, index[node]) for k, node in enumerate(outputs, start=len(inputs))]
    make_lanes, masked_load, masked_store = _tail_mask(isa)
    lines = [f"#if {isa.guard}", f"static {isa.attribute} void {name}_{isa.name}({', '.join(parameters)}) {{"]
    lines += [f"  const {isa.vtype} x{k} = {isa.splat(f'b{k}')};" for k in broadcast]
    # whole vectors, then the tail through a lane mask: a mask on every load and store costs a tenth more
    lines += ["  int64_t i = 0;"]
    lines += [f"  for (; i + {isa.lanes} <= n; i += {isa.lanes}) {{"]
    lines += [f"    const {isa.vtype} x{k} = {isa.op('loadu_ps')}(a{k} + i);" for k in loaded]
    lines += ["    " + line for line in body]
    lines += [f"    {isa.op('storeu_ps')}(a{k} + i, {value});" for k, value in stored]
    lines += ["  }", "  if (i < n) {", "    " + make_lanes]
    lines += [f"    const {isa.vtype} x{k} = {masked_load(f'a{k} + i')};" for k in loaded]
    lines += ["    " + line for line in body]
    lines += ["    " + masked_store(f"a{k} + i", value) for k, value in stored]
    lines += ["  }", "}", "#endif"]
    return lines


def _staged_function(name: str, isa: VectorISA, plan: tuple, inputs: list, outputs: list, inner_strides: list,
                     parameters: list) -> list:
    """The function of a staged group (NOTE: [vector stages]): per block of ``BLOCK`` elements, each stage's loop
    over the block, whole vectors then a masked tail, handing values on through the stack arrays ``s0``, ``s1``..."""
    parts, handed = plan
    make_lanes, masked_load, masked_store = _tail_mask(isa, "m - i")
    loads = (lambda p: f"{isa.op('loadu_ps')}({p})", masked_load)
    stores = (lambda p, v: f"{isa.op('storeu_ps')}({p}, {v});", masked_store)
    lines = [f"#if {isa.guard}", f"static {isa.attribute} void {name}_{isa.name}({', '.join(parameters)}) {{"]
    lines += [f"  const {isa.vtype} x{k} = {isa.splat(f'b{k}')};" for k in range(len(inputs)) if inner_strides[k] == 0]
    lines += [f"  float s{t}[{BLOCK}] __attribute__((aligned(64)));" for t in range(len(handed))]
    lines += [f"  for (int64_t at = 0; at < n; at += {BLOCK}) {{",
              f"    const int64_t m = n - at < {BLOCK} ? n - at : {BLOCK};"]
    for s, part in enumerate(parts):
        read = [k for k in inputs_read(part, inputs) if inner_strides[k] == 1]
        scratch = scratch_read(part, handed)
        index = {node: f"x{k}" for k, node in enumerate(inputs)} | {handed[t]: f"y{t}" for t in scratch}
        body, index = vector_member_lines(part, index, isa, f"_{s}")
        written = [(f"s{t}", index[node]) for t, node in enumerate(handed) if node in part]
        written += [(f"a{k} + at", index[node]) for k, node in enumerate(outputs, start=len(inputs)) if node in part]
        lines += [f"    int64_t i{s} = 0;"]
        for whole in (True, False):
            load, store = loads[0 if whole else 1], stores[0 if whole else 1]
            lines += [f"    for (; i{s} + {isa.lanes} <= m; i{s} += {isa.lanes}) {{" if whole else f"    if (i{s} < m) {{",
                      f"      const int64_t i = i{s};"]
            if not whole:
                lines += ["      " + make_lanes]
            lines += [f"      const {isa.vtype} x{k} = {load(f'a{k} + at + i')};" for k in read]
            lines += [f"      const {isa.vtype} y{t} = {load(f's{t} + i')};" for t in scratch]
            lines += ["      " + line for line in body]
            lines += ["      " + store(f"{p} + i", value) for p, value in written]
            lines += ["    }"]
    lines += ["  }", "}", "#endif"]
    return lines


def vector_loop(name: str, members: list, inputs: list, outputs: list, inner_strides: list) -> tuple | None:
    """``(functions, calls)`` of a group whose operand ``k`` is the pointer ``a{k}`` (a broadcast input's
    element already in ``b{k}``), or None when it has no vector form: ``functions`` define one function per
    instruction set computing ``n`` elements from the pointers on (NOTE: [vector ISA dispatch]), ``calls``
    the lines that run the best one the CPU has for ``stop - start`` elements and ``continue``."""
    operands = inputs + outputs
    if any(dtype_of(node) != FLOAT32 for node in operands) or any(s not in (0, 1) for s in inner_strides) \
            or 0 in inner_strides[len(inputs):]:  # an output is written lane by lane
        return None
    functions, calls = [GUARD], [GUARD]
    arguments = ", ".join(["stop - start"] + [f"a{k}" for k in range(len(operands))]
                          + [f"b{k}" for k in range(len(inputs)) if inner_strides[k] == 0])
    for isa in VECTOR_ISAS:
        if vector_member_lines(members, {node: f"x{k}" for k, node in enumerate(inputs)}, isa) is None:
            return None
        functions += _chunk_function(name, isa, members, inputs, outputs, inner_strides)
        calls += [f"#if {isa.guard}",
                  f"if (isa >= {isa.level}) {{ {name}_{isa.name}({arguments}); continue; }}", "#endif"]
    return functions + ["#endif"], calls + ["#endif"]
