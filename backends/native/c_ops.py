"""C expressions of pointwise ops, mirroring the NumPy templates' operation order.

NOTE: [native exactness] An op is lowered only where the NumPy templates apply (float32
or float64 output, every tensor argument already of that dtype but masked_fill's bool
mask, scalars converted to it, no keyword arguments except gelu's ``approximate``): then each member is the
same sequence of IEEE operations as its kernel, in the same dtype. Arithmetic is
bit-identical (no FMA contraction, no reassociation); transcendental functions (ours for
float32 exp and tanh, NOTE: [native vmath]; libm / libmvec otherwise) differ from NumPy's
by a few ulp at most and keep NaN and infinity. Everything else (integer
wrap-around, promotion, half precision) stays with the NumPy backend's code.
"""
from __future__ import annotations

import math

import numpy as np

from dynamo_lite.graph.node import Node

from dynamo_lite.ops.unary import GELU_TANH_K

from .vmath import VMATH_FUNCTIONS, VMATH_SOURCE

C_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
BOOL = np.dtype(np.bool_)
# The element types kernels read operands as (a bool is one byte holding 0 or 1).
OPERAND_TYPES = {**C_TYPES, BOOL: "unsigned char"}

# Math functions called inside loops: declared "omp declare simd" so that gcc calls
# glibc's vector variants (libmvec) when they exist (see toolchain.VECTOR_MATH_LIBS).
MATH_FUNCTIONS = ("exp", "log", "log1p", "log2", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "erfc")


def math_declarations() -> str:
    """The ``declare simd`` redeclarations of ``MATH_FUNCTIONS`` (float and double)."""
    lines = ["#ifndef DL_NO_VECTOR_MATH"]
    for name in MATH_FUNCTIONS:
        if name == "sqrt":
            continue  # a single instruction, vectorized without a library
        lines += ["#pragma omp declare simd notinbranch", f"float {name}f(float);",
                  "#pragma omp declare simd notinbranch", f"double {name}(double);"]
    lines.append("#endif")
    return "\n".join(lines)


def literal(value, ctype: str) -> str:
    """``value`` (a Python bool/int/float) converted to ``ctype`` as NumPy converts it."""
    if isinstance(value, bool):
        return f"(({ctype}){int(value)})"
    if isinstance(value, int):
        return f"(({ctype}){value}LL)" if -2**63 <= value < 2**63 else f"(({ctype}){float(value).hex()})"
    if math.isnan(value):
        return f"(({ctype})NAN)"
    if math.isinf(value):
        return f"(({ctype}){'-' if value < 0 else ''}INFINITY)"
    return f"(({ctype}){value.hex()})"  # double -> float rounds to nearest, as NumPy does


def math_call(name: str, t: str, argument: str) -> str:
    """C call of math function ``name`` in type ``t``: our vectorizable float32 version (NOTE:
    [native vmath]) where there is one, else libm's (``expf``, ``exp``)."""
    if t == "float" and name in VMATH_FUNCTIONS:
        return f"{VMATH_FUNCTIONS[name]}({argument})"
    return f"{name}{'f' if t == 'float' else ''}({argument})"


def _fn(name):
    return lambda t, a: math_call(name, t, a[0])


def _binary(symbol):
    return lambda t, a: f"({a[0]} {symbol} {a[1]})"


def _one(t):
    return literal(1, t)


def _sigmoid(t, a):
    # float32: dl_sigmoidf, the same formula with an exp that skips the denormal path (NOTE: [native vmath])
    if t == "float":
        return math_call("sigmoid", t, a[0])
    return f"({_one(t)} / ({_one(t)} + {math_call('exp', t, f'(-{a[0]})')}))"


def _gelu_erf(t, a):
    # x * Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2: eager's formula, with libm's erfc (NOTE: [erf]
    # in ops/unary.py explains eager's own erfc; both are within float32 tolerance of exact).
    x = a[0]
    return f"({x} * ({_fn('erfc')(t, [f'((-{x}) * {literal(0.5 ** 0.5, t)})'])} * {literal(0.5, t)}))"


def _gelu_tanh(t, a):
    x, c = a[0], lambda v: literal(v, t)
    inner = f"((((({x} * {x}) * {c(0.044715 * GELU_TANH_K)}) + {c(GELU_TANH_K)}) * {x}))"
    return f"((({_fn('tanh')(t, [inner])} + {c(1.0)}) * {x}) * {c(0.5)})"


# op name -> expr(ctype, [argument expressions]) -> C expression of the op's result.
C_OPS = {
    "add": _binary("+"),
    "sub": _binary("-"),
    "mul": _binary("*"),
    "div": _binary("/"),
    "neg": lambda t, a: f"(-{a[0]})",
    "abs": _fn("fabs"),
    "square": lambda t, a: f"({a[0]} * {a[0]})",
    "exp": _fn("exp"),
    "log": _fn("log"),
    "log1p": _fn("log1p"),
    "log2": _fn("log2"),
    "expm1": _fn("expm1"),
    "sqrt": _fn("sqrt"),
    "rsqrt": lambda t, a: f"({_one(t)} / {_fn('sqrt')(t, a)})",
    "sin": _fn("sin"),
    "cos": _fn("cos"),
    "tan": _fn("tan"),
    "tanh": _fn("tanh"),
    "reciprocal": lambda t, a: f"({_one(t)} / {a[0]})",
    "sigmoid": _sigmoid,
    "silu": lambda t, a: f"({_sigmoid(t, a)} * {a[0]})",
    # np.maximum(x, 0): NaN propagates, -0 gives +0. "0 > x ? 0 : x" is one max instruction (it returns x for
    # NaN and -0), and adding +0 turns -0 into +0 and leaves every other value as it is.
    "relu": lambda t, a: f"((({t})0 > {a[0]} ? ({t})0 : {a[0]}) + ({t})0)",
    "gelu": _gelu_erf,
    "gelu_tanh": _gelu_tanh,
    "maximum": lambda t, a: f"dl_max_{t}({a[0]}, {a[1]})",
    "masked_fill": lambda t, a: f"({a[1]} ? {a[2]} : {a[0]})",  # the mask is a bool tensor
    "minimum": lambda t, a: f"dl_min_{t}({a[0]}, {a[1]})",
}

HELPERS = """
#define DL_MINMAX(T) \\
static inline T dl_max_##T(T a, T b) { return a != a ? a : (b != b ? b : (a >= b ? a : b)); } \\
static inline T dl_min_##T(T a, T b) { return a != a ? a : (b != b ? b : (a <= b ? a : b)); }
DL_MINMAX(float)
DL_MINMAX(double)
""" + VMATH_SOURCE


def c_op_name(node) -> str:
    """The ``C_OPS`` key of a lowerable node (gelu's tanh approximation has its own)."""
    name = node.target.name
    return "gelu_tanh" if name == "gelu" and node.kwargs.get("approximate") == "tanh" else name


def member_lines(members: list, index: dict) -> list:
    """C lines computing ``members`` in order (``m0``, ``m1``, ...); ``index`` maps a node to the C
    expression of its element and gains each member's."""
    lines = []
    for j, member in enumerate(members):
        ctype = C_TYPES[member.meta["val"]._dtype.numpy]
        args = [index[a] if isinstance(a, Node) else literal(a, ctype) for a in member.args]
        lines.append(f"const {ctype} m{j} = {C_OPS[c_op_name(member)](ctype, args)};  /* {member.name} */")
        index[member] = f"m{j}"
    return lines


def lowerable(node) -> bool:
    """Whether ``node`` has an exact C lowering (see NOTE: [native exactness])."""
    if node.target.name not in C_OPS:
        return False
    meta = node.meta.get("val")
    dtype = getattr(getattr(meta, "_dtype", None), "numpy", None)
    if dtype not in C_TYPES:
        return False
    if node.kwargs and not (node.target.name == "gelu" and set(node.kwargs) == {"approximate"}
                            and node.kwargs["approximate"] in ("none", "tanh")):
        return False
    for position, arg in enumerate(node.args):
        arg_meta = getattr(arg, "meta", {}).get("val") if hasattr(arg, "meta") else None
        if arg_meta is not None:
            expected = BOOL if (node.target.name, position) == ("masked_fill", 1) else dtype
            if getattr(getattr(arg_meta, "_dtype", None), "numpy", None) != expected:
                return False
        elif type(arg) not in (bool, int, float):
            return False
    return True
