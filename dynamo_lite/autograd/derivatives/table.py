"""The derivative table: op name -> backward formula (torch's derivatives.yaml idea, as Python)."""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Derivative:
    """How to differentiate one op.

    Attributes:
        op: the registry op's name.
        formula: ``formula(grad, *args, **kwargs)`` called with the op's own arguments
            (the tensors it ``saves`` as they were in the forward, every other tensor
            as a TensorMeta giving only its geometry) and, if ``"result"`` is saved,
            ``result=`` the op's output. ``grad`` is the output's gradient (a tuple of
            them for an op with several outputs). Returns one gradient per positional
            argument (a list for a list of tensors, None where there is none),
            optionally followed by a dict of gradients for tensor keyword arguments. A
            gradient may have the broadcast shape or another dtype: the engine reduces
            it to the input's shape and dtype. Formulas use registered ops only, so
            they run eagerly, trace into graphs and differentiate again.
        saves: the names of the arguments (and ``"result"``) the formula reads.
        params: the formula's parameter names after ``grad``, in order.
        only_for: ``{saved argument: other argument}`` when the saved value serves only the
            other argument's gradient (``mul``'s input for its other's): it is kept only
            if that argument requires grad, so an in-place write to it is not an error
            (torch saves the same way). The formula sees a TensorMeta otherwise.
    """

    op: str
    formula: Callable
    saves: frozenset
    params: tuple
    only_for: dict


DERIVATIVES: dict[str, Derivative] = {}


def derivative(*ops: str, saves=(), only_for=None):
    """Declare ``fn`` as the backward formula of the ops named ``ops``.

    Example:
        >>> @derivative("mul", saves=("input", "other"))
        ... def mul(grad, input, other):
        ...     return grad * other, grad * input
    """
    def register(fn):
        params = tuple(p.name for p in inspect.signature(fn).parameters.values()
                       if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))[1:]
        unknown = set(saves) - set(params) - {"result"}
        if unknown:
            raise ValueError(f"derivative of {ops}: saves unknown arguments {sorted(unknown)}")
        for op in ops:
            if op in DERIVATIVES:
                raise ValueError(f"op {op!r} already has a derivative")
            DERIVATIVES[op] = Derivative(op, fn, frozenset(saves), params, dict(only_for or {}))
        return fn
    return register


#: op name -> ``decompose(*args, **kwargs)``: ops whose backward needs a value the op does
#: not return (dropout's mask) run, while recording, as registered ops that do return it.
DECOMPOSITIONS: dict[str, Callable] = {}


def decomposition(*ops: str):
    """Declare ``fn`` as what the ops named ``ops`` run as while autograd records them."""
    def register(fn):
        for op in ops:
            DECOMPOSITIONS[op] = fn
        return fn
    return register


def lookup(op_name: str, inplace: bool) -> Derivative | None:
    """The formula of ``op_name``; an in-place op ``name_`` uses ``name``'s unless it has its own."""
    found = DERIVATIVES.get(op_name)
    if found is None and inplace and op_name.endswith("_"):
        found = DERIVATIVES.get(op_name[:-1])
    return found


# Ops whose outputs carry no gradient, each with the reason. The registry test fails on
# an op that is in neither this table nor DERIVATIVES, so a new differentiable op cannot
# silently lack a formula; at run time such an op raises instead of dropping gradients.
_NO_GRADIENT_GROUPS = {
    "integer or boolean outputs": (
        "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite",
        "logical_and", "logical_or", "logical_xor", "logical_not",
        "bitwise_and", "bitwise_and_", "bitwise_or", "bitwise_or_", "bitwise_xor", "bitwise_xor_",
        "bitwise_not", "bitwise_not_", "argmax", "argmin", "all", "any", "one_hot", "randperm", "isclose",
        "searchsorted", "nonzero", "unique", "unique_consecutive", "bincount", "multinomial", "nll_class_targets",
    ),
    "factories: the output does not depend on any input's values": (
        "tensor", "empty", "zeros", "ones", "full", "empty_strided", "arange", "linspace", "eye",
        "empty_like", "zeros_like", "ones_like", "full_like",
        "rand", "randn", "randint", "rand_like", "randn_like", "randint_like",
    ),
    "detach: cuts the graph by definition": ("detach",),
    "floor_divide: piecewise constant and torch declares no derivative for it": (
        "floor_divide", "floor_divide_",
    ),
}
NOT_DIFFERENTIABLE = {name: reason for reason, names in _NO_GRADIENT_GROUPS.items() for name in names}

#: The kinds of ``derivative_rule``'s answer.
DECOMPOSE, FORMULA, NO_GRADIENT = "decompose", "formula", "no gradient"


def derivative_rule(op_name: str, inplace: bool) -> tuple:
    """How autograd records ``op_name``: the one lookup order of eager recording and joint graphs.

    Returns:
        ``(DECOMPOSE, fn)`` (the op runs as ``fn``, NOTE on ``DECOMPOSITIONS``), else
        ``(FORMULA, Derivative)``, else ``(NO_GRADIENT, reason)`` for an op without gradient.

    Raises:
        RuntimeError: the op has none of them (torch's message).

    Example:
        >>> derivative_rule("mul", False)[0] == FORMULA
        True
    """
    decompose = DECOMPOSITIONS.get(op_name)
    if decompose is not None:
        return DECOMPOSE, decompose
    formula = lookup(op_name, inplace)
    if formula is not None:
        return FORMULA, formula
    if op_name in NOT_DIFFERENTIABLE:
        return NO_GRADIENT, NOT_DIFFERENTIABLE[op_name]
    raise RuntimeError(f"the derivative for '{op_name}' is not implemented.")
