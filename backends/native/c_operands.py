"""Which dtypes a fused C kernel's member reads, computes in and writes: the operand rules per op.

NOTE: [native operand types] A member is lowered when its registry kernel is one sequence of
IEEE operations in one compute dtype whose conversions C repeats exactly:

- ``same`` (the default): every tensor argument already has the output dtype (float32 or float64).
- ``cast``: the kernel converts every argument to the output dtype first (NumPy's ``dtype=out``
  with ``casting="unsafe"``: add/sub (and alpha)/mul/div, lerp, addcmul/addcdiv, maximum/minimum, where's and
  masked_fill's values), so a 0-d float64 tensor (an optimizer's bias correction), an integer or a
  bool tensor becomes ``(float)v`` before the float32 operation, as in eager.
- comparisons compute in the arguments' promoted dtype (``result_type``: a 0-d float64 tensor
  against a float32 tensor compares in float32, an integer tensor against 0.5 in float32) and
  write a bool; integer operands are read as their own C integer types.
- ``truth``: logical_and/or/xor/not read each argument as ``x != 0`` (NaN is true, -0.0 false).
- ``mask``: the argument must be a bool tensor (where's condition, masked_fill's mask, and the
  bitwise ops, which on bools are the logical ones).

Bools are one byte holding 0 or 1 (``unsigned char``), so a comparison's C ``int`` stores exactly.
Outputs are float32/float64, or bool for comparisons, logical ops and selections of bools; integer
results (wrap-around, division rules) stay with the NumPy backend's code.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import math

import numpy as np

from dynamo_lite.graph.node import Node
from dynamo_lite.tensor.dtype import result_type

FLOAT_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
BOOL = np.dtype(np.bool_)
INTEGER_TYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.int16): "int16_t", np.dtype(np.int32): "int32_t",
                 np.dtype(np.int64): "int64_t", np.dtype(np.uint8): "uint8_t"}
# The element types kernels read operands as.
BOOL_TYPE = "unsigned char"
OPERAND_TYPES = {**FLOAT_TYPES, BOOL: BOOL_TYPE, **INTEGER_TYPES}
FLOATS = tuple(FLOAT_TYPES)
SCALAR = "any bool, int or float"  # a keyword argument that may take any Python scalar

SAME, CAST, TRUTH, MASK = "same", "cast", "truth", "mask"
CLAMP_BOUNDS = ("min", "max")  # clamp's keywords, either of which may be None (that bound is not applied)


@dataclass(frozen=True)
class Signature:
    """What an op's C lowering accepts (see NOTE: [native operand types]).

    Attributes:
        outputs: the output dtypes it computes.
        reads: how a tensor argument meets the compute dtype (SAME, CAST, TRUTH or MASK).
        positions: per-position exceptions to ``reads``.
        compares: computes in the arguments' promoted dtype (else in the output dtype).
        scalars: positions that must hold Python scalars (lerp's weight picks its formula).
        kwargs: keyword -> the values lowered (a tuple), or SCALAR.
    """

    outputs: tuple = FLOATS
    reads: str = SAME
    positions: dict = field(default_factory=dict)
    compares: bool = False
    scalars: tuple = ()
    kwargs: dict = field(default_factory=dict)


_CAST = Signature(reads=CAST)
_ADD = Signature(reads=CAST, kwargs={"alpha": SCALAR})
_COMPARE = Signature(outputs=(BOOL,), reads=CAST, compares=True)
_LOGICAL = Signature(outputs=(BOOL,), reads=TRUTH)
_BITWISE = Signature(outputs=(BOOL,), reads=MASK)
_ADDC = Signature(reads=CAST, kwargs={"value": SCALAR})
SIGNATURES = {
    "add": _ADD, "sub": _ADD, "mul": _CAST, "maximum": _CAST, "minimum": _CAST,
    "div": Signature(reads=CAST, kwargs={"rounding_mode": (None,)}),
    "lerp": Signature(reads=CAST, scalars=(2,)),
    "addcmul": _ADDC, "addcdiv": _ADDC,
    "eq": _COMPARE, "ne": _COMPARE, "lt": _COMPARE, "le": _COMPARE, "gt": _COMPARE, "ge": _COMPARE,
    "logical_and": _LOGICAL, "logical_or": _LOGICAL, "logical_xor": _LOGICAL, "logical_not": _LOGICAL,
    "bitwise_and": _BITWISE, "bitwise_or": _BITWISE, "bitwise_xor": _BITWISE, "bitwise_not": _BITWISE,
    "where": Signature(outputs=FLOATS + (BOOL,), reads=CAST, positions={0: MASK}),
    "masked_fill": Signature(outputs=FLOATS + (BOOL,), positions={1: MASK, 2: CAST}),
    "gelu": Signature(kwargs={"approximate": ("none", "tanh")}),
    "clamp": Signature(reads=CAST, kwargs={"min": SCALAR, "max": SCALAR}),  # scalar bounds (a None one is left out)
}
DEFAULT = Signature()


def dtype_of(value):
    """The NumPy dtype of a node's (or TensorMeta's) value, or None for anything else."""
    meta = value.meta.get("val") if isinstance(value, Node) else value
    return getattr(getattr(meta, "_dtype", None), "numpy", None)


def compute_dtype(node):
    """The dtype ``node``'s kernel computes in: its arguments' promoted dtype for comparisons, else its output's."""
    if not SIGNATURES.get(node.target.name, DEFAULT).compares:
        return dtype_of(node)
    operands = [a.meta.get("val") if isinstance(a, Node) else a for a in node.args]
    return result_type(*operands).numpy


def operand(node, position: int, expression: str, arg_dtype, ctype: str) -> str | None:
    """The C expression of tensor argument ``position`` (``expression``, of ``arg_dtype``) as
    ``node`` computes with it in ``ctype``, or None when that conversion is not lowered."""
    signature = SIGNATURES.get(node.target.name, DEFAULT)
    rule = signature.positions.get(position, signature.reads)
    if arg_dtype not in OPERAND_TYPES or position in signature.scalars:
        return None
    if rule == MASK:
        return expression if arg_dtype == BOOL else None
    if OPERAND_TYPES[arg_dtype] == ctype:
        return expression
    if rule == TRUTH or (rule == CAST and ctype == BOOL_TYPE):  # to bool: nonzero is true, as NumPy casts
        return f"({expression} != 0)"
    return f"(({ctype}){expression})" if rule == CAST else None


def scalar(node, position: int, value, ctype: str) -> str | None:
    """The C expression of the Python scalar ``value`` at ``position`` as ``node`` computes with it
    in ``ctype``, or None when that conversion is not lowered."""
    signature = SIGNATURES.get(node.target.name, DEFAULT)
    rule = signature.positions.get(position, signature.reads)
    if type(value) not in (bool, int, float) or rule == MASK:  # a condition or mask must be a tensor
        return None
    if rule == TRUTH or ctype == BOOL_TYPE:
        return literal(bool(value), ctype)
    if ctype in INTEGER_TYPES.values() and not (type(value) in (bool, int) and -2**63 <= value < 2**63):
        return None  # fit_scalar wraps an int64 into a narrower type, as the C cast does; no further
    return literal(value, ctype)


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


def kwargs_lowered(node) -> bool:
    """Whether every keyword argument of ``node`` has a value its lowering computes."""
    allowed = SIGNATURES.get(node.target.name, DEFAULT).kwargs
    for key, value in node.kwargs.items():
        if key not in allowed:
            return False
        if allowed[key] == SCALAR:
            if type(value) not in (bool, int, float) and not (value is None and key in CLAMP_BOUNDS):
                return False
        elif value not in allowed[key]:
            return False
    return True


def output_lowered(node) -> bool:
    """Whether ``node``'s output dtype is one its lowering writes."""
    return dtype_of(node) in SIGNATURES.get(node.target.name, DEFAULT).outputs
