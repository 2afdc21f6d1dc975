"""BINARY_OP, COMPARE_OP, unary operators, subscripts and slices."""
from __future__ import annotations

import operator

from ...bytecode import compat
from ...errors import Unsupported
from ...tracing.variables import lifted_float, ndarrays, symbolic, unbacked_scalars, user_protocols
from ...tracing.variables.objects import UserObjectVariable
from ...tracing.variables.base import ConstantVariable, SymIntVariable
from ...tracing.variables.containers import BaseListVariable
from ...tracing.variables.identity_keys import contains_by_identity, identity_key
from ...tracing.variables.tensor import TensorVariable, TracedCallableVariable
from ...tracing.variables.scan_values import symbolic_int_subscript
from ...tracing.variables.typing_aliases import fold_typing_subscript
from .registry import handles

#: BINARY_OP's argument -> operator.
BINARY_OPS = {index: function for index, (_, function) in compat.BINARY_OPERATORS.items()}

COMPARE_OPS = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
    ">": operator.gt, ">=": operator.ge,
}


@handles("BINARY_OP")
def binary_op(tx, ins):
    right = tx.pop()
    left = tx.pop()
    tx.push(tx.binary_operation(BINARY_OPS[ins.arg], left, right))


@handles("COMPARE_OP")
def compare_op(tx, ins):
    symbol = ins.argval
    if symbol.startswith("bool("):  # 3.13 marks comparisons feeding a branch
        symbol = symbol[5:-1]
    right = tx.pop()
    left = tx.pop()
    tx.push(tx.binary_operation(COMPARE_OPS[symbol], left, right))


def _python_type(variable):
    try:
        return variable.python_type()
    except Exception:  # a variable that does not know its type
        return None


def _identity(left, right) -> bool:
    if isinstance(left, SymIntVariable) != isinstance(right, SymIntVariable):
        other = right if isinstance(left, SymIntVariable) else left
        if other.is_python_constant() and type(other.as_python_constant()) is not int:
            return False  # ``n is None``: no int is, whatever its value (no guard)
    if left.is_python_constant() and right.is_python_constant():
        return left.as_python_constant() is right.as_python_constant()
    if isinstance(left, TensorVariable) and isinstance(right, TensorVariable):
        return left.proxy is right.proxy
    if isinstance(left, TensorVariable) or isinstance(right, TensorVariable):
        return False  # a tensor is never a constant
    arrays = [v for v in (left, right) if isinstance(v, ndarrays.NDArrayVariable)]
    if len(arrays) == 2 or (arrays and (left.is_python_constant() or right.is_python_constant())):
        return left is right  # one variable per array object (NOTE: [NumPy arrays in the graph])
    if any(isinstance(v, unbacked_scalars.UnbackedScalarVariable) for v in (left, right)) and any(
            v.is_python_constant() and v.as_python_constant() is None for v in (left, right)):
        return False  # a number is never None
    if left is right:
        return True
    if _python_type(left) is not _python_type(right) and None not in (_python_type(left), _python_type(right)):
        return False  # objects of different types are different objects
    if hasattr(left, "value") and hasattr(right, "value") and left.source is not None and right.source is not None:
        return left.value is right.value  # objects read from the frame: guarded by type and identity
    raise Unsupported("'is' between values whose identity is unknown while tracing")


@handles("IS_OP")
def is_op(tx, ins):
    right = tx.pop()
    left = tx.pop()
    same = _identity(left, right)
    if getattr(left, "source", None) is not None and getattr(right, "source", None) is not None:
        for variable in (left, right):  # two values from the frame: a call aliasing them (or not) recompiles
            identity_key(tx, variable, any_hash=True)
    tx.push(ConstantVariable(same != bool(ins.arg)))


@handles("CONTAINS_OP")
def contains_op(tx, ins):
    container = tx.pop()
    item = tx.pop()
    if hasattr(container, "contains"):
        found = container.contains(tx, item)
    elif container.is_python_constant() and item.is_python_constant():
        found = item.as_python_constant() in container.as_python_constant()
    elif isinstance(container, BaseListVariable):
        # Python tests each element in order, ``v is item or v == item``: identity decides for
        # objects and a tensor met itself; a tensor compared with another value is data-dependent.
        found = contains_by_identity(tx, item, container.items)
    else:
        raise Unsupported("'in' test on values that are not constants")
    tx.push(ConstantVariable(found != bool(ins.arg)))


def _unary(op, name):
    def handler(tx, ins):
        value = tx.pop()
        kept_symbolic = ndarrays.unary(tx, op, value)  # NOTE: [NumPy arrays in the graph]
        if kept_symbolic is None:
            kept_symbolic = unbacked_scalars.unary(tx, op, value)  # NOTE: [scalars read from tensors]
        if kept_symbolic is None:
            kept_symbolic = symbolic.unary(op, value)
        if kept_symbolic is None:
            kept_symbolic = lifted_float.unary(tx, op, value)  # NOTE: [lifted floats]
        if kept_symbolic is not None:
            tx.push(kept_symbolic)
        elif value.is_python_constant():
            tx.push(ConstantVariable(op(value.as_python_constant())))
        else:
            tx.push(TracedCallableVariable(op, name).call(tx, [value], {}))

    return handler


handles("UNARY_NEGATIVE")(_unary(operator.neg, "neg"))
handles("UNARY_INVERT")(_unary(operator.invert, "invert"))
handles("UNARY_POSITIVE")(_unary(operator.pos, "pos"))


@handles("UNARY_NOT")
def unary_not(tx, ins):
    tx.push(ConstantVariable(not tx.pop().truth(tx)))


@handles("TO_BOOL")
def to_bool(tx, ins):
    value = tx.pop()
    # A tensor stays a tensor: the branch that follows decides (and breaks) on it.
    tx.push(value if isinstance(value, TensorVariable) else ConstantVariable(value.truth(tx)))


def subscript(tx, container, key):
    """``container[key]`` on variables."""
    if isinstance(container, TensorVariable):
        kept_symbolic = symbolic_int_subscript(tx, container, key)  # x[t] in a scanned loop
        if kept_symbolic is not None:
            return kept_symbolic
        return TracedCallableVariable(operator.getitem, "Tensor.__getitem__").call(tx, [container, key], {})
    if hasattr(container, "getitem"):
        return container.getitem(tx, key)
    if container.is_python_constant() and key.is_python_constant():
        try:
            value = container.as_python_constant()[key.as_python_constant()]
        except Exception as exc:
            raise Unsupported(f"subscript raised {type(exc).__name__}: {exc}") from None
        return tx.wrap_constant(value)
    folded = fold_typing_subscript(tx, container, key)  # List[Tensor] in an annotation
    if folded is not None:
        return folded
    if isinstance(container, UserObjectVariable):
        return user_protocols.getitem(tx, container, key)  # the class's Python __getitem__
    raise Unsupported(f"subscript of {container.describe()}")


@handles("BINARY_SUBSCR")
def binary_subscr(tx, ins):
    key = tx.pop()
    container = tx.pop()
    tx.push(subscript(tx, container, key))


def _slice(start, stop, step=None):
    values = [v.as_traceable() for v in (start, stop) + ((step,) if step is not None else ())]
    return ConstantVariable(slice(*values))


@handles("BUILD_SLICE")
def build_slice(tx, ins):
    parts = tx.popn(ins.arg)
    for part in parts:
        if not part.is_python_constant():
            raise Unsupported("a slice bound that is not a Python constant")
    tx.push(_slice(*parts))


@handles("BINARY_SLICE")
def binary_slice(tx, ins):
    stop = tx.pop()
    start = tx.pop()
    container = tx.pop()
    tx.push(subscript(tx, container, _slice(start, stop)))


def store_subscript(tx, container, key, value):
    if isinstance(container, TensorVariable):
        TracedCallableVariable(operator.setitem, "Tensor.__setitem__").call(tx, [container, key, value], {})
        return
    if hasattr(container, "store_item"):
        container.store_item(tx, key, value)
        return
    raise Unsupported(f"item assignment to {container.describe()}")


@handles("DELETE_SUBSCR")
def delete_subscr(tx, ins):
    key = tx.pop()
    container = tx.pop()
    if not hasattr(container, "delete_item"):
        raise Unsupported(f"del of an item of {container.describe()}")
    container.delete_item(tx, key)


@handles("DELETE_SLICE")
def delete_slice(tx, ins):
    stop = tx.pop()
    start = tx.pop()
    container = tx.pop()
    if not hasattr(container, "delete_item"):
        raise Unsupported(f"del of a slice of {container.describe()}")
    container.delete_item(tx, _slice(start, stop))


@handles("STORE_SUBSCR")
def store_subscr(tx, ins):
    key = tx.pop()
    container = tx.pop()
    value = tx.pop()
    store_subscript(tx, container, key, value)


@handles("STORE_SLICE")
def store_slice(tx, ins):
    stop = tx.pop()
    start = tx.pop()
    container = tx.pop()
    value = tx.pop()
    store_subscript(tx, container, _slice(start, stop), value)

