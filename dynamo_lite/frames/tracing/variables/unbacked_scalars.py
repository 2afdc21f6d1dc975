"""Python numbers read out of traced tensors (``t.item()``, ``t.tolist()``), kept in the graph.

NOTE: [scalars read from tensors] ``loss.item()`` in compiled code does not stop the
graph: the number is an *unbacked* scalar, a 0-d graph value whose Python value exists
only when the graph runs (TorchDynamo's ``capture_scalar_outputs``). As long as the
program only computes with it, it stays in the graph:

- with a tensor (``x * s``, ``x.add_(s)``) it enters the op as a 0-d tensor of the dtype a
  Python number of its kind gets there (a float with an integer tensor: the default dtype);
- with another such scalar or a Python number, ``+ - *`` and comparisons compute in
  float64/int64 0-d ops, which is Python's double (and, short of overflow, int)
  arithmetic; a division by such a scalar needs its value (Python raises on zero);
- returned, stored, printed or formatted, it is rebuilt as ``graph_output.item()``.

Anything that needs the value while tracing (a branch, ``int()``, a size, a library call)
is a graph break at that instruction; the code after it gets the number from the graph.
A float reaching a resume function that way is lifted into the next graph as an input
(NOTE: [lifted floats]), guarded by type only, so a new value does not recompile; an int
follows the frame's int policy (NOTE: [symbolic int inputs]).
"""
from __future__ import annotations

import operator

from ....tensor.dtype import bool_, float64, get_default_dtype, int64
from ...errors import Unsupported, UserError
from .. import guards as G
from ..sources import LocalSource
from .base import ConstantVariable, VariableTracker
from .containers import ListVariable
from .lifted_float import FloatTensorSource, LiftedFloatVariable, float_tensor
from .tensor import TensorVariable, TracedCallableVariable

#: Most elements ``tolist()`` unpacks into scalars in the graph (more: a graph break).
TOLIST_LIMIT = 64

ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
                        operator.pow, operator.iadd, operator.isub, operator.imul, operator.itruediv,
                        operator.ifloordiv, operator.imod, operator.ipow})
COMPARISONS = frozenset({operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne})
#: Between two scalars: operators whose Python result the 0-d ops give for every value.
SCALAR_SAFE = frozenset({operator.add, operator.sub, operator.mul, operator.iadd, operator.isub, operator.imul})
DIVISIONS = frozenset({operator.truediv, operator.itruediv, operator.floordiv, operator.ifloordiv, operator.mod,
                       operator.imod})


def scalar_item(tensor):
    """What an unbacked scalar is when the code runs (``tensor.item()`` of its graph value)."""
    return tensor.item()


def _kind(dtype) -> type:
    if dtype is bool_:
        return bool
    if dtype.is_complex:
        raise Unsupported("item() of a complex tensor in compiled code")
    return float if dtype.is_floating_point else int


class UnbackedScalarVariable(VariableTracker):
    """A Python number whose value only the running graph knows (NOTE: [scalars read from tensors])."""

    def __init__(self, proxy, kind: type, what: str = "item()"):
        self.tensor = TensorVariable(proxy)
        self.kind, self.what, self.source = kind, what, None

    @property
    def proxy(self):
        return self.tensor.proxy

    def python_type(self) -> type:
        return self.kind

    def describe(self) -> str:
        return f"the number {self.what} read from a tensor"

    def as_python_constant(self):
        raise Unsupported(f"Python code needs the value of {self.what} of a tensor (data-dependent)",
                          hint="the code after this point gets the value from the graph")

    def truth(self, tx) -> bool:
        raise Unsupported(f"a Python branch on {self.what} of a tensor (data-dependent)")

    def formats_at_run_time(self) -> bool:
        return True

    def operand(self, tx, dtype):
        """This number as a 0-d tensor operand of a ``dtype`` tensor op (what a Python number of its kind gets)."""
        if self.kind is float:
            target = dtype if (dtype.is_floating_point or dtype.is_complex) else get_default_dtype()
        elif self.kind is int:
            target = dtype if dtype is not bool_ else int64
        else:
            target = dtype
        with tx.output.tracing("scalar operand"):
            return self.proxy if self.proxy.dtype == target else self.proxy.to(target)

    def tensor_operand(self, tx, tensor: TensorVariable) -> TensorVariable:
        return TensorVariable(self.operand(tx, tensor.proxy.dtype))

    def reconstruct(self, cg) -> None:
        cg.call_const(scalar_item, lambda: cg.reconstruct(self.tensor), 1)

    def children(self) -> list:
        return [self.tensor]

    def __repr__(self) -> str:
        return f"UnbackedScalarVariable({self.proxy.node.name}, {self.kind.__name__})"


def read_scalars(tx, tensor: TensorVariable, name: str) -> VariableTracker:
    """``tensor.item()`` / ``tensor.tolist()`` as unbacked scalars (a list of them)."""
    proxy = tensor.proxy
    kind = _kind(proxy.dtype)
    sizes = tuple(proxy.shape)
    if not all(type(s) is int for s in sizes):
        raise Unsupported(f"{name}() of a tensor with symbolic sizes (data-dependent)")
    count = 1
    for size in sizes:
        count *= size
    if name == "item":
        if count != 1:
            raise UserError(RuntimeError(f"a Tensor with {count} elements cannot be converted to Scalar"))
        with tx.output.tracing("Tensor.item"):
            return UnbackedScalarVariable(proxy.reshape(()).clone(), kind)  # a copy: later writes don't show
    if count > TOLIST_LIMIT:
        raise Unsupported(f"tolist() of a tensor of {count} elements (more than {TOLIST_LIMIT}) in compiled code")
    with tx.output.tracing("Tensor.tolist"):
        return _nested(proxy, kind)


def _nested(proxy, kind):
    if proxy.ndim == 0:
        return UnbackedScalarVariable(proxy.clone(), kind, "tolist()")
    return ListVariable([_nested(proxy[i], kind) for i in range(proxy.shape[0])])


def _number(variable) -> bool:
    return isinstance(variable, ConstantVariable) and type(variable.value) in (int, float, bool)


def binary(tx, op, left, right):
    """``left <op> right`` with an unbacked scalar kept in the graph, or None when neither is one."""
    if not (isinstance(left, UnbackedScalarVariable) or isinstance(right, UnbackedScalarVariable)):
        return None
    if op not in ARITHMETIC and op not in COMPARISONS:
        raise Unsupported(f"the operator {op.__name__} on {left.describe() if isinstance(left, UnbackedScalarVariable) else right.describe()} (data-dependent)")
    tensors = [v for v in (left, right) if isinstance(v, TensorVariable)]
    if tensors:
        dtype = tensors[0].proxy.dtype
        operands = [TensorVariable(v.operand(tx, dtype)) if isinstance(v, UnbackedScalarVariable) else v
                    for v in (left, right)]
        return TracedCallableVariable(op, op.__name__).call(tx, operands, {})
    if not all(isinstance(v, UnbackedScalarVariable) or _number(v) for v in (left, right)):
        return None
    return _scalar_binary(tx, op, left, right)


def _scalar_binary(tx, op, left, right):
    divisor_known = _number(right) and right.value != 0
    if op not in SCALAR_SAFE and op not in COMPARISONS and not (op in DIVISIONS and divisor_known):
        raise Unsupported(f"the operator {op.__name__} between numbers read from tensors needs their values "
                          "(data-dependent)")
    kinds = [v.kind if isinstance(v, UnbackedScalarVariable) else type(v.value) for v in (left, right)]
    samples = [{float: 1.5, int: 3, bool: True}[k] for k in kinds]
    result_kind = type(op(*samples)) if op not in DIVISIONS else type(op(samples[0], 2))
    computes_in = float64 if float in kinds or result_kind is float else int64
    with tx.output.tracing(f"scalar {op.__name__}"):
        values = [v.proxy.to(computes_in) if isinstance(v, UnbackedScalarVariable) else v.value for v in (left, right)]
        result = op(*values)
        target = {float: float64, int: int64, bool: bool_}[result_kind]
        if result.dtype != target:
            result = result.to(target)
    return UnbackedScalarVariable(result, result_kind)


def unary(tx, op, value):
    """``-s``/``+s`` of an unbacked scalar (kept in the graph), else None."""
    if not isinstance(value, UnbackedScalarVariable) or op not in (operator.neg, operator.pos):
        return None
    kind = int if value.kind is bool else value.kind  # -True is -1
    with tx.output.tracing(f"scalar {op.__name__}"):
        operand = value.proxy.to(int64) if value.kind is bool else value.proxy
        return UnbackedScalarVariable(op(operand) if op is operator.neg else operand.clone(), kind)


def lift_resumed_float(tx, value: float, source):
    """A float a resume function receives (a number read from a tensor before the break, most
    often): lifted into the graph (NOTE: [scalars read from tensors]), or None."""
    if not isinstance(source, LocalSource) or tx.parent is not None or "<resume@" not in tx.code.co_qualname:
        return None
    if getattr(tx.output.dynamic_dims, "mode", None) is False:
        return None
    output = tx.output
    output.guards.add(source, G.TYPE_MATCH, float)
    proxy = output.float_input(FloatTensorSource(source), float_tensor(value))
    return ResumedFloatVariable(proxy, value, ((source, value),), output, source)


class ResumedFloatVariable(LiftedFloatVariable):
    """A lifted float that is an argument of a resume function: rebuilt by reloading that argument
    (the transformed code never rebinds it), so returning it does not specialize it."""

    def reconstruct(self, cg) -> None:
        self.source.reconstruct(cg)
