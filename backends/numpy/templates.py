"""Ufunc templates: straight NumPy calls for common float pointwise ops, mirroring their kernels.

A fused block calls each member's registry kernel unless a template here covers it.
A template emits the very ufunc sequence the op's kernel runs (same operation order,
same compute dtype, so results are bit-identical to eager) without the kernel's Python
overhead: no dtype resolution per call, positional ``out``, scalars prepared once as
0-d arrays of the compute dtype (NumPy converts a Python scalar on every call).

NOTE: [template exactness] Templates apply only to floating outputs whose tensor inputs
already have the output dtype; everything else (integer wrap-around, promotion, half
precision computed in float32, ``alpha=``) runs the kernel. Two substitutions are exact
by IEEE 754: ``reciprocal(x)`` is ``1 / x`` (one correctly rounded division), and
``maximum(x, 0)`` takes a block of zeros instead of the scalar 0 (NumPy's vector loop
only runs for array operands). ``tests/backends/test_numpy_backend.py`` checks every
template against its kernel bit for bit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from dynamo_lite.ops.pointwise.unary import GELU_TANH_K
from dynamo_lite.tensor.meta import TensorMeta

FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))
WIDE_FLOATS = FLOATS[1:]  # kernels wrapped in half_as_float compute float16 in float32


@dataclass(frozen=True)
class Template:
    """How to emit one op inside a fused block.

    Attributes:
        emit: ``emit(ctx, out, args, dtype, **node.kwargs) -> [lines]``; ``args`` are source
            expressions of the op's positional arguments (tensors as block arrays, scalars
            bound as 0-d constants of ``dtype``).
        alias_safe: the output may share memory with a tensor argument (every element is
            read before it is written), so the planner may compute in place.
        quiet: the kernel silences floating-point warnings; the block does too.
        dtypes: output dtypes the template covers.
    """

    emit: Callable
    alias_safe: bool = True
    quiet: bool = False
    dtypes: tuple = FLOATS


# NumPy deprecates a positional ``out`` for these two (they accept more than two inputs).
_KEYWORD_OUT = ("maximum", "minimum")


def _ufunc(name: str):
    out_arg = "out=" if name in _KEYWORD_OUT else ""

    def emit(ctx, out, args, dtype):
        return [f"{ctx.ufunc(name)}({', '.join(args)}, {out_arg}{out})"]

    return emit


def _sigmoid_lines(ctx, out, x, dtype):
    one = ctx.const(1, dtype)
    return [
        f"{ctx.ufunc('negative')}({x}, {out})",
        f"{ctx.ufunc('exp')}({out}, {out})",
        f"{ctx.ufunc('add')}({out}, {one}, {out})",
        f"{ctx.ufunc('divide')}({one}, {out}, {out})",  # reciprocal, see NOTE: [template exactness]
    ]


def _sigmoid(ctx, out, args, dtype):
    return _sigmoid_lines(ctx, out, args[0], dtype)


def _silu(ctx, out, args, dtype):
    return _sigmoid_lines(ctx, out, args[0], dtype) + [f"{ctx.ufunc('multiply')}({out}, {args[0]}, {out})"]


def _reciprocal(ctx, out, args, dtype):
    return [f"{ctx.ufunc('divide')}({ctx.const(1, dtype)}, {args[0]}, {out})"]


def _relu(ctx, out, args, dtype):
    return [f"{ctx.ufunc('maximum')}({args[0]}, {ctx.zeros(dtype)}, out={out})"]


def _rsqrt(ctx, out, args, dtype):
    return [f"{ctx.ufunc('sqrt')}({args[0]}, {out})", f"{ctx.ufunc('divide')}({ctx.const(1, dtype)}, {out}, {out})"]


def _gelu_tanh(ctx, out, args, dtype):
    # The kernel's sequence: 0.5 * x * (1 + tanh(k * (x + 0.044715 x^3))), all in ``out``.
    x = args[0]
    mul, add = ctx.ufunc("multiply"), ctx.ufunc("add")
    c = ctx.const
    return [
        f"{mul}({x}, {x}, {out})",
        f"{mul}({out}, {c(0.044715 * GELU_TANH_K, dtype)}, {out})",
        f"{add}({out}, {c(GELU_TANH_K, dtype)}, {out})",
        f"{mul}({out}, {x}, {out})",
        f"{ctx.ufunc('tanh')}({out}, {out})",
        f"{add}({out}, {c(1.0, dtype)}, {out})",
        f"{mul}({out}, {x}, {out})",
        f"{mul}({out}, {c(0.5, dtype)}, {out})",
    ]


def _gelu(ctx, out, args, dtype, approximate="tanh"):
    return _gelu_tanh(ctx, out, args, dtype)  # template_for admits only approximate="tanh"


# op name -> Template. Ops not listed (or not matching the conditions) run their kernel.
TEMPLATES = {
    "add": Template(_ufunc("add"), quiet=True),  # overflow gives inf silently, as in torch
    "sub": Template(_ufunc("subtract"), quiet=True),
    "mul": Template(_ufunc("multiply"), quiet=True),
    "div": Template(_ufunc("true_divide"), quiet=True),
    "neg": Template(_ufunc("negative")),
    "abs": Template(_ufunc("absolute")),
    "square": Template(_ufunc("square"), quiet=True),
    "exp": Template(_ufunc("exp"), quiet=True),
    "log": Template(_ufunc("log"), quiet=True),
    "log1p": Template(_ufunc("log1p"), quiet=True),
    "log2": Template(_ufunc("log2"), quiet=True),
    "expm1": Template(_ufunc("expm1"), quiet=True),
    "sqrt": Template(_ufunc("sqrt"), quiet=True),
    "rsqrt": Template(_rsqrt, quiet=True),
    "sin": Template(_ufunc("sin"), quiet=True),
    "cos": Template(_ufunc("cos"), quiet=True),
    "tan": Template(_ufunc("tan"), quiet=True),
    "sinh": Template(_ufunc("sinh"), quiet=True),
    "cosh": Template(_ufunc("cosh"), quiet=True),
    "tanh": Template(_ufunc("tanh"), quiet=True),
    "reciprocal": Template(_reciprocal, quiet=True),
    "sigmoid": Template(_sigmoid, quiet=True, dtypes=WIDE_FLOATS),
    "silu": Template(_silu, alias_safe=False, quiet=True, dtypes=WIDE_FLOATS),
    "relu": Template(_relu),
    "gelu": Template(_gelu, alias_safe=False, quiet=True, dtypes=WIDE_FLOATS),
    "maximum": Template(_ufunc("maximum")),
    "minimum": Template(_ufunc("minimum")),
}


def template_for(node):
    """The Template that computes ``node`` exactly, or None (then its kernel runs).

    See NOTE: [template exactness] for the conditions.
    """
    template = TEMPLATES.get(node.target.name)
    if template is None:
        return None
    meta = node.meta.get("val")
    dtype = meta._dtype.numpy
    if dtype not in template.dtypes:
        return None
    if not _kwargs_covered(node):
        return None
    for arg in node.args:
        value = getattr(arg, "meta", {}).get("val") if hasattr(arg, "meta") else None
        if isinstance(value, TensorMeta):
            if value._dtype.numpy != dtype:
                return None
        elif type(arg) not in (bool, int, float):
            return None
    return template


def _kwargs_covered(node) -> bool:
    """Whether the template computes the op with these keyword arguments: none, except
    gelu, whose template is the tanh approximation (exact gelu runs its kernel)."""
    if node.target.name == "gelu":
        return node.kwargs == {"approximate": "tanh"}
    return not node.kwargs
