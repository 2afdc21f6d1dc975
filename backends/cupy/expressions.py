"""One C expression per pointwise op: the table codegen reads to fuse a group into a kernel.

Each entry is ``rule(out, args, kwargs) -> str | None``: ``out`` the node's output dtype,
``args``/``kwargs`` the node's arguments with every tensor replaced by a
:class:`Value` (a C expression in its compute type). A rule returns the C expression of
the result in ``out``'s compute type, or None when it cannot match eager for these
arguments (the node then runs eagerly). The semantics are those of the eager kernels
in ``dynamo_lite/ops``: promotion decided by the meta rule, NaN-propagating min/max,
NumPy's floor division and remainder for floats.

NOTE: [integer division stays eager] Integer ``div``/``floor_divide``/``remainder``/
``pow`` raise on a zero divisor (or a negative exponent) in eager mode; a kernel
cannot raise, so those nodes are never fused.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from dynamo_lite.tensor.dtype import bool_, result_type

from .c_types import cast, ctype, literal, math_fn


@dataclass(frozen=True)
class Value:
    """A tensor operand inside a kernel: its C expression, dtype and meta (for promotion)."""

    expr: str
    dtype: object
    meta: object


def conv(x, dtype) -> str:
    """Operand ``x`` (Value or Python scalar) as a C expression in ``dtype``'s compute type."""
    if isinstance(x, Value):
        return cast(x.expr, x.dtype, dtype)
    return literal(x, dtype)


def _promoted(*args):
    return result_type(*[a.meta if isinstance(a, Value) else a for a in args if a is not None])


def _is_float(dtype) -> bool:
    return dtype.is_floating_point


# -- rule builders ------------------------------------------------------------------------
def _binary(fmt: str, floats_only: bool = False):
    def rule(out, args, kwargs):
        if floats_only and not _is_float(out):
            return None
        a, b = args[0], args[1]
        return fmt.format(a=conv(a, out), b=conv(b, out), T=ctype(out).compute)

    return rule


def _scaled(op: str):
    """add/sub: ``a op alpha * b`` computed in the output dtype."""

    def rule(out, args, kwargs):
        a, b = conv(args[0], out), conv(args[1], out)
        alpha = kwargs.get("alpha", 1)
        if alpha != 1:
            b = f"({b} * {literal(alpha, out)})"
        if out is bool_:
            return f"(({a}) {'||' if op == '+' else '!='} ({b}))"
        return f"({a} {op} {b})"

    return rule


def _float_fn(name: str):
    """A math function of one float argument (integer inputs were promoted by the meta)."""

    def rule(out, args, kwargs):
        return f"{math_fn(name, out)}({conv(args[0], out)})"

    return rule


def _rounding(name: str):
    def rule(out, args, kwargs):
        x = conv(args[0], out)
        return f"{math_fn(name, out)}({x})" if _is_float(out) else x

    return rule


def _one(out) -> str:
    return literal(1, out)


def _div(out, args, kwargs):
    mode = kwargs.get("rounding_mode")
    if not _is_float(out):
        return None  # NOTE: [integer division stays eager]
    a, b = conv(args[0], out), conv(args[1], out)
    if mode is None:
        return f"({a} / {b})"
    if mode == "trunc":
        return f"{math_fn('trunc', out)}({a} / {b})"
    return f"dl_floor_divide({a}, {b})"


def _abs(out, args, kwargs):
    x = conv(args[0], out)
    if _is_float(out):
        return f"{math_fn('fabs', out)}({x})"
    if out is bool_:
        return x
    return f"(({x}) < 0 ? ({ctype(out).compute})(-({x})) : ({x}))"


def _sign(out, args, kwargs):
    x = conv(args[0], out)
    if out is bool_:
        return x
    return f"(({ctype(out).compute})((({x}) > 0) - (({x}) < 0)))"


def _square(out, args, kwargs):
    x = conv(args[0], out)
    return f"({x} * {x})"


def _rsqrt(out, args, kwargs):
    return f"({_one(out)} / {math_fn('sqrt', out)}({conv(args[0], out)}))"


def _sigmoid(out, args, kwargs):
    return f"({_one(out)} / ({_one(out)} + {math_fn('exp', out)}(-{conv(args[0], out)})))"


def _silu(out, args, kwargs):
    x = conv(args[0], out)
    return f"({x} / ({_one(out)} + {math_fn('exp', out)}(-{x})))"


def _reciprocal(out, args, kwargs):
    return f"({_one(out)} / {conv(args[0], out)})"


def _relu(out, args, kwargs):
    return f"dl_max({conv(args[0], out)}, {literal(0, out)})"


def _gelu(out, args, kwargs):
    x = conv(args[0], out)
    if kwargs.get("approximate", "none") == "tanh":
        k = literal(math.sqrt(2.0 / math.pi), out)
        c = literal(0.044715, out)
        inner = f"{k} * ({x} + {c} * {x} * {x} * {x})"
        return f"({literal(0.5, out)} * {x} * ({_one(out)} + {math_fn('tanh', out)}({inner})))"
    # x * Phi(x) with Phi(x) = erfc(-x / sqrt 2) / 2: no cancellation for negative x.
    return f"({x} * ({literal(0.5, out)} * {math_fn('erfc', out)}(-{x} * {literal(math.sqrt(0.5), out)})))"


def _predicate(kind: str):
    def rule(out, args, kwargs):
        x = args[0]
        if not isinstance(x, Value) or not _is_float(x.dtype):
            return "true" if kind == "isfinite" else "false"
        e = x.expr
        inf = literal(math.inf, x.dtype)
        return {
            "isnan": f"(({e}) != ({e}))",
            "isinf": f"({math_fn('fabs', x.dtype)}({e}) == {inf})",
            "isfinite": f"(({e}) == ({e}) && {math_fn('fabs', x.dtype)}({e}) != {inf})",
        }[kind]

    return rule


def _compare(op: str):
    """Compare in the operands' promoted dtype (a float16 tensor vs a scalar stays float16)."""

    def rule(out, args, kwargs):
        dt = _promoted(args[0], args[1])
        return f"({conv(args[0], dt)} {op} {conv(args[1], dt)})"

    return rule


def _logical(op: str):
    def rule(out, args, kwargs):
        a, b = (conv(x, bool_) for x in args[:2])
        return f"(({a}) {op} ({b}))"

    return rule


def _logical_not(out, args, kwargs):
    return f"(!({conv(args[0], bool_)}))"


def _bitwise(op: str):
    def rule(out, args, kwargs):
        a, b = conv(args[0], out), conv(args[1], out)
        return f"(({ctype(out).compute})({a} {op} {b}))"

    return rule


def _bitwise_not(out, args, kwargs):
    x = conv(args[0], out)
    return f"(!({x}))" if out is bool_ else f"(({ctype(out).compute})(~({x})))"


def _extremum(fn: str):
    def rule(out, args, kwargs):
        return f"{fn}({conv(args[0], out)}, {conv(args[1], out)})"

    return rule


def _where(out, args, kwargs):
    cond, a, b = args[:3]
    return f"({conv(cond, bool_)} ? {conv(a, out)} : {conv(b, out)})"


def _clamp(out, args, kwargs):
    x = conv(args[0], out)
    if kwargs.get("min") is not None:
        x = f"dl_max({x}, {conv(kwargs['min'], out)})"
    if kwargs.get("max") is not None:
        x = f"dl_min({x}, {conv(kwargs['max'], out)})"
    return x


def _masked_fill(out, args, kwargs):
    x, mask, value = args[:3]
    return f"({conv(mask, bool_)} ? {conv(value, out)} : {conv(x, out)})"


def _pow(out, args, kwargs):
    if not _is_float(out):
        return None  # NOTE: [integer division stays eager]
    return f"{math_fn('pow', out)}({conv(args[0], out)}, {conv(args[1], out)})"


def _copy(out, args, kwargs):
    return conv(args[0], out)


EXPRESSIONS = {
    "add": _scaled("+"),
    "sub": _scaled("-"),
    "mul": _binary("({a} * {b})"),
    "div": _div,
    "floor_divide": _binary("dl_floor_divide({a}, {b})", floats_only=True),
    "remainder": _binary("dl_remainder({a}, {b})", floats_only=True),
    "pow": _pow,
    "neg": lambda out, args, kwargs: f"(-{conv(args[0], out)})",
    "abs": _abs,
    "sign": _sign,
    "square": _square,
    "exp": _float_fn("exp"),
    "log": _float_fn("log"),
    "log1p": _float_fn("log1p"),
    "log2": _float_fn("log2"),
    "expm1": _float_fn("expm1"),
    "sqrt": _float_fn("sqrt"),
    "rsqrt": _rsqrt,
    "sin": _float_fn("sin"),
    "cos": _float_fn("cos"),
    "tan": _float_fn("tan"),
    "tanh": _float_fn("tanh"),
    "erf": _float_fn("erf"),
    "sigmoid": _sigmoid,
    "reciprocal": _reciprocal,
    "floor": _rounding("floor"),
    "ceil": _rounding("ceil"),
    "round": _rounding("rint"),  # half to even, as torch.round
    "trunc": _rounding("trunc"),
    "relu": _relu,
    "gelu": _gelu,
    "silu": _silu,
    "isnan": _predicate("isnan"),
    "isinf": _predicate("isinf"),
    "isfinite": _predicate("isfinite"),
    "eq": _compare("=="),
    "ne": _compare("!="),
    "lt": _compare("<"),
    "le": _compare("<="),
    "gt": _compare(">"),
    "ge": _compare(">="),
    "logical_and": _logical("&&"),
    "logical_or": _logical("||"),
    "logical_xor": _logical("!="),
    "logical_not": _logical_not,
    "bitwise_and": _bitwise("&"),
    "bitwise_or": _bitwise("|"),
    "bitwise_xor": _bitwise("^"),
    "bitwise_not": _bitwise_not,
    "minimum": _extremum("dl_min"),
    "maximum": _extremum("dl_max"),
    "where": _where,
    "clamp": _clamp,
    "masked_fill": _masked_fill,
    # Not tagged pointwise (they are copies), but a copy is a one-node pointwise kernel.
    "clone": _copy,
    "_to_copy": _copy,
}
