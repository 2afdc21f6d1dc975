"""C expressions of pointwise ops, mirroring the NumPy templates' operation order.

NOTE: [native exactness] An op is lowered only where its registry kernel is one sequence of
IEEE operations in one compute dtype (float32 or float64; comparisons also in integer and bool
types) whose argument conversions C repeats (NOTE: [native operand types] in c_operands.py says
which, per op): then each member is the same sequence of operations as its kernel, in the same
dtype and order. Arithmetic, comparisons and selections are bit-identical (no FMA contraction,
no reassociation); transcendental functions (ours for float32 exp, tanh, sigmoid and erfc, NOTE:
[native vmath]; libm / libmvec otherwise) differ from NumPy's by a few ulp at most and keep NaN
and infinity. Everything else (integer results, half precision) stays with the NumPy backend's code.
"""
from __future__ import annotations

from dynamo_lite.graph.node import Node

from dynamo_lite.ops.pointwise.unary import GELU_TANH_K

from .c_operands import (CLAMP_BOUNDS, FLOAT_TYPES, OPERAND_TYPES, compute_dtype, dtype_of, kwargs_lowered, literal, operand,
                         output_lowered, scalar)
from .vmath import VMATH_FUNCTIONS, VMATH_SOURCE

C_TYPES = FLOAT_TYPES  # the floating types row, GEMM and image kernels compute in

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


def _scaled_binary(symbol):
    """add/sub, with ``alpha`` as a third argument when it scales a tensor (c_arguments)."""
    return lambda t, a: f"({a[0]} {symbol} {a[1]})" if len(a) == 2 else f"({a[0]} {symbol} ({a[1]} * {a[2]}))"


def _unary(symbol):
    return lambda t, a: f"({symbol}{a[0]})"


def _one(t):
    return literal(1, t)


def _sigmoid(t, a):
    # float32: dl_sigmoidf, the same formula with an exp that skips the denormal path (NOTE: [native vmath])
    if t == "float":
        return math_call("sigmoid", t, a[0])
    return f"({_one(t)} / ({_one(t)} + {math_call('exp', t, f'(-{a[0]})')}))"


def _gelu_erf(t, a):
    # x * Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2: eager's formula, with libm's erfc (NOTE: [erf]
    # in ops/pointwise/unary.py explains eager's own erfc; both are within float32 tolerance of exact).
    x = a[0]
    return f"({x} * ({_fn('erfc')(t, [f'((-{x}) * {literal(0.5 ** 0.5, t)})'])} * {literal(0.5, t)}))"


def _gelu_tanh(t, a):
    x, c = a[0], lambda v: literal(v, t)
    inner = f"((((({x} * {x}) * {c(0.044715 * GELU_TANH_K)}) + {c(GELU_TANH_K)}) * {x}))"
    return f"((({_fn('tanh')(t, [inner])} + {c(1.0)}) * {x}) * {c(0.5)})"


# op name -> expr(ctype, [argument expressions]) -> C expression of the op's result.
C_OPS = {
    "add": _scaled_binary("+"),
    "sub": _scaled_binary("-"),
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
    # lerp with a scalar weight, the kernel's formula for it: from start below |weight| 0.5, else from end
    "lerp_from_start": lambda t, a: f"({a[0]} + ({a[2]} * ({a[1]} - {a[0]})))",
    "lerp_from_end": lambda t, a: f"({a[1]} - (({a[1]} - {a[0]}) * ({_one(t)} - {a[2]})))",
    # input + (tensor1 * value) op tensor2, value last (c_arguments)
    "addcmul": lambda t, a: f"({a[0]} + (({a[1]} * {a[3]}) * {a[2]}))",
    "addcdiv": lambda t, a: f"({a[0]} + (({a[1]} * {a[3]}) / {a[2]}))",
    # bool results: C's comparisons and logical operators give int 0 or 1 (stored in one byte)
    "eq": _binary("=="), "ne": _binary("!="), "lt": _binary("<"), "le": _binary("<="), "gt": _binary(">"),
    "ge": _binary(">="),
    "logical_and": _binary("&&"), "logical_or": _binary("||"), "logical_xor": _binary("!="),
    "logical_not": _unary("!"),
    "bitwise_and": _binary("&"), "bitwise_or": _binary("|"), "bitwise_xor": _binary("^"),
    "bitwise_not": _unary("!"),  # of a bool (0 or 1): ~ would set the other bits
    "where": lambda t, a: f"({a[0]} ? {a[1]} : {a[2]})",
    # clamp's kernel: np.maximum with min, then np.minimum with max (NaN kept), for the bounds given
    "clamp_min": lambda t, a: f"dl_max_{t}({a[0]}, {a[1]})",
    "clamp_max": lambda t, a: f"dl_min_{t}({a[0]}, {a[1]})",
    "clamp_min_max": lambda t, a: f"dl_min_{t}(dl_max_{t}({a[0]}, {a[1]}), {a[2]})",
}

# np.maximum / np.minimum: NaN from either side (a's when both), else b unless a is strictly larger
# (smaller): maximum(-0.0, +0.0) is +0.0 and maximum(+0.0, -0.0) is -0.0, as NumPy's loops give.
HELPERS = """
#define DL_MINMAX(T) \\
static inline T dl_max_##T(T a, T b) { return a > b ? a : (a != a ? a : b); } \\
static inline T dl_min_##T(T a, T b) { return a < b ? a : (a != a ? a : b); }
DL_MINMAX(float)
DL_MINMAX(double)
""" + VMATH_SOURCE


def c_op_name(node) -> str:
    """The ``C_OPS`` key of a lowerable node (gelu's tanh approximation and lerp's two formulas have their own)."""
    name = node.target.name
    if name == "gelu" and node.kwargs.get("approximate") == "tanh":
        return "gelu_tanh"
    if name == "lerp" and type(node.args[2]) in (bool, int, float):  # a tensor weight is not lowered
        return "lerp_from_start" if abs(node.args[2]) < 0.5 else "lerp_from_end"
    if name == "clamp":
        bounds = [key for key in CLAMP_BOUNDS if node.kwargs.get(key) is not None]
        return "_".join(["clamp", *bounds]) if bounds else name
    return name


def c_arguments(node) -> list:
    """``node``'s arguments as its C expression reads them: the positional ones, then addcmul's and
    addcdiv's ``value`` (1 when not given); add's and sub's ``alpha`` as their kernel applies it (none
    when 1, a scalar ``other`` multiplied in Python, a tensor one in the compute dtype)."""
    name, args = node.target.name, list(node.args)
    if name in ("addcmul", "addcdiv"):
        return [*args, node.kwargs.get("value", 1)]
    alpha = node.kwargs.get("alpha", 1)
    if name in ("add", "sub") and alpha != 1:
        return [args[0], args[1], alpha] if isinstance(args[1], Node) else [args[0], args[1] * alpha]
    if name == "clamp":
        return [*args, *(node.kwargs[key] for key in CLAMP_BOUNDS if node.kwargs.get(key) is not None)]
    return args


def _operands(node, expression_of) -> list | None:
    """The C expressions of ``node``'s arguments, converted as its kernel converts them (NOTE: [native
    operand types]); ``expression_of(arg)`` gives a tensor argument's. None if some is not lowered."""
    ctype = OPERAND_TYPES.get(compute_dtype(node))
    if ctype is None:
        return None
    expressions = []
    for position, arg in enumerate(c_arguments(node)):
        if isinstance(arg, Node):
            expression = operand(node, position, expression_of(arg), dtype_of(arg), ctype)
        else:
            expression = scalar(node, position, arg, ctype)
        if expression is None:
            return None
        expressions.append(expression)
    return expressions


def member_lines(members: list, index: dict) -> list:
    """C lines computing ``members`` in order (``m0``, ``m1``, ...); ``index`` maps a node to the C
    expression of its element and gains each member's."""
    lines = []
    for j, member in enumerate(members):
        ctype = OPERAND_TYPES[dtype_of(member)]
        args = _operands(member, index.__getitem__)
        lines.append(f"const {ctype} m{j} = {C_OPS[c_op_name(member)](ctype, args)};  /* {member.name} */")
        index[member] = f"m{j}"
    return lines


def lowerable(node) -> bool:
    """Whether ``node`` has an exact C lowering (see NOTE: [native exactness])."""
    if c_op_name(node) not in C_OPS or not output_lowered(node) or not kwargs_lowered(node):
        return False
    return _operands(node, lambda arg: "x") is not None
