"""AVX-512 loops of fused float32 groups: each member as intrinsics on 16 lanes, the tail through a lane mask.

See NOTE: [vector loops] in vector_math.py for why; kernel.py emits the loop next to the scalar
one, under ``DL_VECTOR_LOOPS``. A group gets one when every member has an entry in
``VECTOR_OPS``, computes in float32 from float32 tensors and Python scalars, and every
operand is unit-stride or broadcast along the innermost dim. Each entry is the scalar
expression of ``c_ops.C_OPS`` with the same operations in the same order, so the two loops
give the same bits (NOTE: [native exactness] holds for both).
"""
from __future__ import annotations

import numpy as np

from dynamo_lite.graph.node import Node

from dynamo_lite.ops.pointwise.unary import GELU_TANH_K

from .c_operands import dtype_of, literal, scalar
from .c_ops import c_arguments, c_op_name
from .vector_math import VECTOR_FUNCTIONS, VECTOR_MATH_SOURCE

FLOAT32 = np.dtype(np.float32)
LANES = 16
GUARD = "#ifdef DL_VECTOR_LOOPS"


def vector_preamble(sources: list) -> str:
    """The vector functions (and ``<immintrin.h>``) when one of ``sources`` has a vector loop, else nothing:
    the header alone takes gcc a few tenths of a second, which a library without vector loops should not pay."""
    return VECTOR_MATH_SOURCE if any(GUARD in source for source in sources) else ""


def _call(function: str):
    return lambda a: f"{function}({', '.join(a)})"


def _scaled(function: str):
    """add/sub, with ``alpha`` as a third argument when it scales a tensor (c_ops._scaled_binary)."""
    return lambda a: f"{function}({a[0]}, {a[1]})" if len(a) == 2 else \
        f"{function}({a[0]}, _mm512_mul_ps({a[1]}, {a[2]}))"


ONE, HALF, ZERO = "_mm512_set1_ps(1.0f)", "_mm512_set1_ps(0.5f)", "_mm512_setzero_ps()"
ADD, SUB, MUL, DIV = "_mm512_add_ps", "_mm512_sub_ps", "_mm512_mul_ps", "_mm512_div_ps"


def _relu(a):
    # c_ops: ((0 > x ? 0 : x) + 0); _mm512_max_ps(p, q) is exactly (p > q ? p : q)
    return f"{ADD}(_mm512_max_ps({ZERO}, {a[0]}), {ZERO})"


def _splat(value: float) -> str:
    return f"_mm512_set1_ps({literal(value, 'float')})"


def _gelu_tanh(a):
    # c_ops._gelu_tanh's operations: 0.5 x (1 + tanh(((x x) c1 + c2) x))
    x, c1, c2 = a[0], _splat(0.044715 * GELU_TANH_K), _splat(GELU_TANH_K)
    inner = f"{MUL}({ADD}({MUL}({MUL}({x}, {x}), {c1}), {c2}), {x})"
    return f"{MUL}({MUL}({ADD}(dl_v_tanhf({inner}), {ONE}), {x}), {HALF})"


# op name (c_ops.c_op_name) -> expr([argument vector expressions]) -> the __m512 expression of its result.
VECTOR_OPS = {
    "add": _scaled(ADD),
    "sub": _scaled(SUB),
    "mul": _call(MUL),
    "div": _call(DIV),
    "neg": _call("dl_v_neg"),
    "abs": _call("_mm512_abs_ps"),
    "square": lambda a: f"{MUL}({a[0]}, {a[0]})",
    "sqrt": _call("_mm512_sqrt_ps"),
    "rsqrt": lambda a: f"{DIV}({ONE}, _mm512_sqrt_ps({a[0]}))",
    "reciprocal": lambda a: f"{DIV}({ONE}, {a[0]})",
    **{name: _call(function) for name, function in VECTOR_FUNCTIONS.items()},
    "silu": lambda a: f"{MUL}(dl_v_sigmoidf({a[0]}), {a[0]})",
    "relu": _relu,
    "gelu_tanh": _gelu_tanh,
    "maximum": _call("dl_v_max"),
    "minimum": _call("dl_v_min"),
    "lerp_from_start": lambda a: f"{ADD}({a[0]}, {MUL}({a[2]}, {SUB}({a[1]}, {a[0]})))",
    "lerp_from_end": lambda a: f"{SUB}({a[1]}, {MUL}({SUB}({a[1]}, {a[0]}), {SUB}({ONE}, {a[2]})))",
    "addcmul": lambda a: f"{ADD}({a[0]}, {MUL}({MUL}({a[1]}, {a[3]}), {a[2]}))",
    "addcdiv": lambda a: f"{ADD}({a[0]}, {DIV}({MUL}({a[1]}, {a[3]}), {a[2]}))",
}


def _arguments(node, index: dict) -> list | None:
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
            expressions.append(f"_mm512_set1_ps({value})")
    return expressions


def vector_member_lines(members: list, index: dict) -> tuple | None:
    """``(lines, index)``: ``__m512`` lines computing ``members`` (``w0``, ``w1``, ...) and ``index`` (a node's
    vector expression) with each member's added; None when one has no vector form."""
    index, lines = dict(index), []
    for j, member in enumerate(members):
        name = c_op_name(member)
        args = _arguments(member, index) if name in VECTOR_OPS and dtype_of(member) == FLOAT32 else None
        if args is None:
            return None
        lines.append(f"const __m512 w{j} = {VECTOR_OPS[name](args)};  /* {member.name} */")
        index[member] = f"w{j}"
    return lines, index


def vector_loop(members: list, inputs: list, outputs: list, inner_strides: list) -> list | None:
    """The lines of the AVX-512 loop over ``i`` in [0, stop - start) of a group whose operand ``k`` is the
    pointer ``a{k}`` (a broadcast input's element already in ``b{k}``), or None when it has none."""
    operands = inputs + outputs
    if any(dtype_of(node) != FLOAT32 for node in operands) or any(s not in (0, 1) for s in inner_strides) \
            or 0 in inner_strides[len(inputs):]:  # an output is written lane by lane
        return None
    index = {node: f"x{k}" for k, node in enumerate(inputs)}
    computed = vector_member_lines(members, index)
    if computed is None:
        return None
    body, index = computed
    lines = [f"const __m512 x{k} = _mm512_set1_ps(b{k});" for k in range(len(inputs)) if inner_strides[k] == 0]
    loaded = [k for k in range(len(inputs)) if inner_strides[k] == 1]
    stored = [(k, index[node]) for k, node in enumerate(outputs, start=len(inputs))]
    # whole vectors, then the tail through a lane mask: a mask on every load and store costs a tenth more
    lines += ["int64_t i = 0;", f"for (; i + {LANES} <= stop - start; i += {LANES}) {{"]
    lines += [f"  const __m512 x{k} = _mm512_loadu_ps(a{k} + i);" for k in loaded]
    lines += ["  " + line for line in body]
    lines += [f"  _mm512_storeu_ps(a{k} + i, {value});" for k, value in stored]
    lines += ["}", "if (i < stop - start) {",
              "  const __mmask16 lanes = (__mmask16)((1u << (stop - start - i)) - 1);"]
    lines += [f"  const __m512 x{k} = _mm512_maskz_loadu_ps(lanes, a{k} + i);" for k in loaded]
    lines += ["  " + line for line in body]
    lines += [f"  _mm512_mask_storeu_ps(a{k} + i, lanes, {value});" for k, value in stored]
    lines.append("}")
    return lines
