"""Calls (CALL, CALL_KW, CALL_FUNCTION_EX), function creation and super()."""
from __future__ import annotations

from ...bytecode import compat
from ...errors import Unsupported
from ...tracing.variables.base import CellVariable, ConstantVariable, NullVariable, VariableTracker
from ...tracing.variables.containers import TupleVariable
from ...tracing.variables.dicts import DictVariable
from ...tracing.variables.exceptions import ExceptionVariable
from ...tracing.variables.functions import NestedFunctionVariable, SuperVariable
from .registry import HANDLERS, handles


@handles("KW_NAMES")
def kw_names(tx, ins):
    tx.kw_names = tx.code.co_consts[ins.arg]  # 3.11's dis leaves argval unresolved


def _split_kwargs(args: list, names) -> tuple:
    if not names:
        return args, {}
    n = len(names)
    return args[:-n], dict(zip(names, args[-n:]))


def _callable_and_args(tx, argc: int):
    """Pop CALL's operands per the version's layout; returns (callable, positional args)."""
    args = tx.popn(argc)
    second = tx.pop()
    first = tx.pop()
    if compat.CALL_LAYOUT == "null_first":
        if isinstance(first, NullVariable):
            return second, args
        return first, [second, *args]
    if isinstance(second, NullVariable):
        return first, args
    return first, [second, *args]


def _do_call(tx, argc: int, names) -> None:
    fn, args = _callable_and_args(tx, argc)
    args, kwargs = _split_kwargs(args, names)
    tx.push(tx.call_function(fn, args, kwargs))


@handles("CALL")
def call(tx, ins):
    names, tx.kw_names = tx.kw_names, None
    _do_call(tx, ins.arg, names)


@handles("CALL_KW")
def call_kw(tx, ins):
    names = tx.pop().as_python_constant()
    _do_call(tx, ins.arg, names)


@handles("CALL_FUNCTION_EX")
def call_function_ex(tx, ins):
    kwargs_var = tx.pop() if ins.arg & 1 else DictVariable({})
    args_var = tx.pop()
    second = tx.pop()
    first = tx.pop()
    fn = second if isinstance(first, NullVariable) else first
    if not isinstance(kwargs_var, DictVariable):
        raise Unsupported("**kwargs that is not a dict")
    tx.push(tx.call_function(fn, args_var.unpack(tx), dict(kwargs_var.items)))


@handles("CALL_INTRINSIC_1")
def call_intrinsic_1(tx, ins):
    name = compat.INTRINSIC_1.get(ins.arg)
    if name == "LIST_TO_TUPLE":
        tx.push(TupleVariable(tx.pop().unpack(tx)))
    elif name == "UNARY_POSITIVE":
        HANDLERS["UNARY_POSITIVE"](tx, ins)  # 3.11's opcode of the same meaning
    elif name == "STOPITERATION_ERROR":
        # A generator's outermost handler: another exception leaves the generator as it is.
        # PEP 479: a StopIteration leaving it becomes a RuntimeError (what the handler re-raises).
        leaving = tx.stack[-1].python_type()
        if issubclass(leaving, (StopIteration, StopAsyncIteration)):
            message = "generator raised StopIteration" if issubclass(leaving, StopIteration) \
                else "async generator raised StopAsyncIteration"
            replaced = ExceptionVariable(RuntimeError, [ConstantVariable(message)])
            replaced.context = tx.stack[-1]
            tx.stack[-1] = replaced
    else:
        raise Unsupported(f"CALL_INTRINSIC_1 {ins.argrepr}")


# MAKE_FUNCTION flag bits: what the interpreter pops besides the code object.
_FUNCTION_ATTRIBUTES = {0x01: "defaults", 0x02: "kwdefaults", 0x04: "annotations", 0x08: "closure"}


def _make_function(tx, code, attributes: dict) -> VariableTracker:
    defaults = attributes.get("defaults")
    kwdefaults = attributes.get("kwdefaults")
    closure = attributes.get("closure")
    cells = closure.unpack(tx) if closure is not None else []
    for cell in cells:
        if not isinstance(cell, CellVariable):
            raise Unsupported("a closure over something that is not a cell")
    return NestedFunctionVariable(
        code, tx.f_globals, code.co_name,
        defaults.unpack(tx) if defaults is not None else (),
        dict(kwdefaults.items) if isinstance(kwdefaults, DictVariable) else {},
        cells,
    )


@handles("MAKE_FUNCTION")
def make_function(tx, ins):
    code_var = tx.pop()
    attributes = {}
    for bit in (0x08, 0x04, 0x02, 0x01):  # 3.13 sets these with SET_FUNCTION_ATTRIBUTE instead
        if (ins.arg or 0) & bit:
            attributes[_FUNCTION_ATTRIBUTES[bit]] = tx.pop()
    tx.push(_make_function(tx, code_var.as_python_constant(), attributes))


@handles("SET_FUNCTION_ATTRIBUTE")
def set_function_attribute(tx, ins):
    fn = tx.pop()
    value = tx.pop()
    name = _FUNCTION_ATTRIBUTES[ins.arg]
    if name == "closure":
        fn._closure = value.unpack(tx)
    elif name == "defaults":
        fn._defaults = tuple(value.unpack(tx))
    elif name == "kwdefaults":
        fn._kwdefaults = dict(value.items)
    tx.push(fn)


@handles("LOAD_SUPER_ATTR")
def load_super_attr(tx, ins):
    self_var = tx.pop()
    cls = tx.pop()
    tx.pop()  # the global `super`
    value = SuperVariable(cls.as_python_constant(), self_var).var_getattr(tx, ins.argval)
    tx.push_callable(value, bool(ins.arg & 1))
