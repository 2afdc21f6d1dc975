"""Optimizer hyper-parameter floats read by the graph at run time, so an lr schedule does not recompile.

NOTE: [lifted floats] A float read from an optimizer's param group (``group["lr"]``,
``group["weight_decay"]`` ...) follows the policy of a frame's int (NOTE: [symbolic int
inputs]): guarded by value until a compile sees it changed, then *lifted* on the
recompile (from the first compile with ``dynamic=True``; never with ``False``). A lifted
float is a graph input: the call passes ``float64`` 0-dim tensor made from the group's
current value, guarded by type only. To the program it is still a float:

- ``+ - * /`` and unary minus with numbers or other lifted floats stay lifted: float64
  0-dim graph ops, exactly Python's double arithmetic (``1 - lr * weight_decay``);
- with a tensor (``update * lr``, ``param.mul_(1 - lr * wd)``, ``x.add_(eps)``, ``lerp_``)
  it enters the op as a 0-dim tensor of the tensor's dtype (of the default dtype for an
  integer tensor): the dtype a Python float gets, rounded as the float would be;
- ``float(lr)`` is the same float: still lifted;
- everything else needs its value (a branch, a comparison, ``print``, ``round``, a keyword
  like ``alpha=``, a call into other code): the value is *specialized*: every lifted
  input it came from gets a guard on its value, as without lifting (``round``/``int``
  say so next to the guard, in ``dl.explain``).

The optimizers' ``apply_update`` multiplies by the scale when compiled, so a lifted lr
reaches the update as a tensor operand rather than as ``alpha=`` (which would specialize).
Floats elsewhere (a module attribute, an argument) are not lifted (yet): they are
guarded by value.
"""
from __future__ import annotations

import operator

from ....ops.core.api import tensor as make_tensor
from ....tensor.dtype import float64, get_default_dtype
from .. import guards as G
from ..proxy import ProxyTensor
from ..sources import AttrSource, ItemSource, Source
from .base import ConstantVariable, VariableTracker
from .exceptions import RuntimeValueVariable
from .tensor import TensorVariable, TracedCallableVariable

#: Operators that keep a lifted float lifted (with a number, a lifted float or a tensor).
ARITHMETIC = frozenset({operator.add, operator.sub, operator.mul, operator.truediv,
                        operator.iadd, operator.isub, operator.imul, operator.itruediv})


def float_tensor(value: float):
    """The graph input a lifted float is passed as (a float64 0-dim tensor)."""
    return make_tensor(value, dtype=float64)


class FloatTensorSource(Source):
    """Loads a lifted float's source and passes it to the graph as ``float_tensor(value)``."""

    def __init__(self, base: Source):
        self.base = base

    def expr(self) -> str:
        return f"__dl_float_tensor({self.base.expr()})"

    def name(self) -> str:
        return self.base.name()

    def constants(self) -> dict:
        return {"__dl_float_tensor": float_tensor, **self.base.constants()}

    def reconstruct(self, cg) -> None:
        cg.call_const(float_tensor, lambda: self.base.reconstruct(cg), 1)


def is_optimizer_hyperparameter(source) -> bool:
    """``<x>.param_groups[i][key]``: a hyper-parameter of an optimizer's group."""
    return (isinstance(source, ItemSource) and isinstance(source.key, str) and source.key != "params"
            and isinstance(source.base, ItemSource) and isinstance(source.base.base, AttrSource)
            and source.base.base.attr == "param_groups")


class LiftedFloatVariable(VariableTracker):
    """A float the graph reads at run time (NOTE: [lifted floats]).

    Attributes:
        proxy: the float64 0-dim graph value.
        value: the float of the traced call.
        origins: ``(source, value)`` of the lifted inputs it was computed from.
    """

    def __init__(self, proxy, value: float, origins: tuple, output, source=None):
        self.proxy, self.value, self.origins, self.source = proxy, value, origins, source
        self._output = output
        self.guarded = False

    def python_type(self) -> type:
        return float

    def is_python_constant(self) -> bool:
        return False  # asking must not specialize it: only a use of the value does

    def as_python_constant(self, why: str = ""):
        """Its value, specialized: each lifted input it came from is guarded by value
        (``why``: the use that needs it, shown with the guard)."""
        if not self.guarded:
            self.guarded = True
            for source, value in self.origins:
                self._output.guards.add(source, G.CONSTANT_MATCH, value, why)
        return self.value

    def reconstruct(self, cg) -> None:
        # Specialized: its source may hold another float by the time the code rebuilds it.
        cg.load_const(self.as_python_constant())

    def formats_at_run_time(self) -> bool:
        return True  # f"{lr:.4f}", str(lr): text made from the graph's value, not guarded

    def run_time_operand(self) -> VariableTracker:
        """The float the graph computed, read when the code runs (``float()`` of its 0-dim
        float64 output: exactly the Python float the eager code has)."""
        return RuntimeValueVariable(float, [TensorVariable(self.proxy)], float)

    def operand(self, tx, dtype) -> ProxyTensor:
        """This float as a 0-dim tensor operand of a ``dtype`` tensor op (a Python float's dtype)."""
        target = dtype if (dtype.is_floating_point or dtype.is_complex) else get_default_dtype()
        with tx.output.tracing("float operand"):
            return self.proxy if target is float64 else self.proxy.to(dtype=target)

    def tensor_operand(self, tx, tensor: TensorVariable) -> TensorVariable:
        """This float as the scalar operand of a method of ``tensor`` (``param.mul_(1 - lr * wd)``)."""
        return TensorVariable(self.operand(tx, tensor.proxy.dtype))

    def __repr__(self) -> str:
        return f"LiftedFloatVariable({self.value!r})"


def lift(tx, value: float, source) -> VariableTracker | None:
    """The variable of an optimizer's float at ``source``, lifted when the policy says so, else None."""
    decide = getattr(tx.output.dynamic_dims, "float_is_dynamic", None)
    if not is_optimizer_hyperparameter(source) or decide is None or not decide(source, value):
        return None
    output = tx.output
    output.guards.add(source, G.TYPE_MATCH, float)
    proxy = output.float_input(FloatTensorSource(source), float_tensor(value))
    return LiftedFloatVariable(proxy, value, ((source, value),), output, source)


def _number(variable) -> bool:
    return isinstance(variable, ConstantVariable) and type(variable.value) in (int, float)


def binary(tx, op, left: VariableTracker, right: VariableTracker):
    """``op(left, right)`` with a lifted float kept in the graph, or None (then it specializes)."""
    if op not in ARITHMETIC or not (isinstance(left, LiftedFloatVariable) or isinstance(right, LiftedFloatVariable)):
        return None
    tensors = [v for v in (left, right) if isinstance(v, TensorVariable)]
    if tensors:
        dtype = tensors[0].proxy.dtype
        operands = [TensorVariable(v.operand(tx, dtype)) if isinstance(v, LiftedFloatVariable) else v
                    for v in (left, right)]
        return TracedCallableVariable(op, op.__name__).call(tx, operands, {})
    if not all(isinstance(v, LiftedFloatVariable) or _number(v) for v in (left, right)):
        return None
    values = [v.value for v in (left, right)]
    try:
        value = op(*values)
    except ArithmeticError:
        return None  # raised by the specialized float, as eagerly
    with tx.output.tracing(f"float {op.__name__}"):
        proxy = op(*[v.proxy if isinstance(v, LiftedFloatVariable) else v.value for v in (left, right)])
    origins = tuple(dict.fromkeys(o for v in (left, right) if isinstance(v, LiftedFloatVariable) for o in v.origins))
    return LiftedFloatVariable(proxy, value, origins, tx.output)


def unary(tx, op, value: VariableTracker):
    """``-x`` / ``+x`` of a lifted float, kept lifted, or None."""
    if not isinstance(value, LiftedFloatVariable) or op not in (operator.neg, operator.pos):
        return None
    with tx.output.tracing(f"float {op.__name__}"):
        proxy = op(value.proxy)
    return LiftedFloatVariable(proxy, op(value.value), value.origins, tx.output)


#: Builtins of one lifted float that need its value: specialized, saying why (NOTE: [lifted floats]).
_NEEDS_VALUE = (round, int, abs, bool)


def builtin_call(fn, args, kwargs):
    """``fn(*args, **kwargs)`` for a builtin ``fn`` whose first argument is a lifted float:
    ``float(lr)`` is ``lr``; ``round(lr, n)`` and the like specialize it, with the reason
    next to its guard. None for other calls."""
    if not args or not isinstance(args[0], LiftedFloatVariable):
        return None
    if fn is float and len(args) == 1 and not kwargs:
        return args[0]
    if fn in _NEEDS_VALUE and all(a.is_python_constant() for a in [*args[1:], *kwargs.values()]):
        value = args[0].as_python_constant(f"{fn.__name__}() of a lifted float needs its value")
        return ConstantVariable(fn(value, *(a.as_python_constant() for a in args[1:]),
                                   **{k: v.as_python_constant() for k, v in kwargs.items()}))
    return None
