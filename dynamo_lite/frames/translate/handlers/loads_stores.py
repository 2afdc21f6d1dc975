"""Loads and stores of locals, cells, globals, constants and attributes; stack shuffles."""
from __future__ import annotations

import sys

from ...bytecode import compat
from ...errors import Unsupported
from ...tracing.side_effects import DELETED
from ...tracing.sources import ConstSource
from ...tracing.variables.base import NULL, CellVariable, ConstantVariable
from ...tracing.variables.objects import ObjectVariable, PythonModuleVariable
from ...tracing.variables.tensor import TensorVariable
from .registry import handles


@handles(*(name for name in compat.NO_OPS if name != "MAKE_CELL"), "PRECALL")
def nop(tx, ins):
    pass


@handles("MAKE_CELL")
def make_cell(tx, ins):
    # In the frame's setup the translator has made its cells already. Inside the body
    # (3.12+ inlined comprehensions whose variable a closure captures) it boxes the
    # variable in a new cell, after LOAD_FAST_AND_CLEAR took the outer one away.
    current = tx.locals.get(ins.argval)
    if not isinstance(current, CellVariable):
        tx.locals[ins.argval] = CellVariable(current, ins.argval)


def _load_fast(tx, name):
    if name not in tx.locals or tx.locals[name] is None:
        raise Unsupported(f"local variable {name!r} referenced before assignment (raises in eager)")
    tx.push(tx.locals[name])


@handles("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CLOSURE")
def load_fast(tx, ins):
    _load_fast(tx, ins.argval)


@handles("LOAD_FAST_AND_CLEAR")
def load_fast_and_clear(tx, ins):
    # 3.12+ inlined comprehensions save the outer value of their loop variable (NULL:
    # unbound, which the STORE_FAST putting it back restores).
    tx.push(tx.locals.pop(ins.argval, None) or NULL)


def _store_fast(tx, name):
    value = tx.pop()
    tx.locals[name] = None if value is NULL else value


@handles("STORE_FAST")
def store_fast(tx, ins):
    _store_fast(tx, ins.argval)


@handles("DELETE_FAST")
def delete_fast(tx, ins):
    tx.locals.pop(ins.argval, None)


_PARTS = {"LOAD_FAST": _load_fast, "STORE_FAST": _store_fast}


@handles(*compat.SUPERINSTRUCTIONS)
def superinstruction(tx, ins):
    for part, name in zip(compat.SUPERINSTRUCTIONS[ins.opname], ins.argval):
        _PARTS[part](tx, name)


@handles("LOAD_CONST")
def load_const(tx, ins):
    tx.push(ConstantVariable(ins.argval))


@handles("RETURN_VALUE")
def return_value(tx, ins):
    tx.returned = tx.pop()


@handles("RETURN_CONST")
def return_const(tx, ins):
    tx.returned = ConstantVariable(ins.argval)


@handles("LOAD_GLOBAL")
def load_global(tx, ins):
    tx.push_callable(tx.load_global(ins.argval), bool(ins.arg & 1))


@handles("STORE_GLOBAL")
def store_global(tx, ins):
    tx.output.side_effects.store_global(tx.f_globals, ins.argval, tx.pop(), tx.globals_source)


def _cell(tx, name) -> CellVariable:
    cell = tx.locals.get(name)
    if not isinstance(cell, CellVariable):
        raise Unsupported(f"closure variable {name!r} is not available")
    return cell


@handles("LOAD_DEREF")
def load_deref(tx, ins):
    cell = _cell(tx, ins.argval)
    if cell.contents is None:
        raise Unsupported(f"free variable {ins.argval!r} referenced before assignment (raises in eager)")
    tx.push(cell.contents)


@handles("STORE_DEREF")
def store_deref(tx, ins):
    cell = _cell(tx, ins.argval)
    value = tx.pop()
    if cell.external:  # a cell that outlives the frame: the write is replayed
        tx.output.side_effects.store_cell(cell, value)
        return
    tx.output.side_effects.journal_state(cell)
    cell.contents = value


@handles("LOAD_ATTR")
def load_attr(tx, ins):
    obj = tx.pop()
    method_form = compat.LOAD_ATTR_METHOD_FLAG and bool(ins.arg & 1)
    tx.push_callable(obj.var_getattr(tx, ins.argval), method_form)


@handles("LOAD_METHOD")
def load_method(tx, ins):
    obj = tx.pop()
    tx.push_callable(obj.var_getattr(tx, ins.argval), True)


@handles("STORE_ATTR")
def store_attr(tx, ins):
    target = tx.pop()
    value = tx.pop()
    if not isinstance(target, (ObjectVariable, TensorVariable)) or isinstance(target.value, type):
        raise Unsupported(f"assignment to attribute {ins.argval!r} of {target.describe()}")
    target.store_attribute(tx, ins.argval, value)


@handles("DELETE_ATTR")
def delete_attr(tx, ins):
    target = tx.pop()
    if not isinstance(target, ObjectVariable) or isinstance(target.value, type):
        raise Unsupported(f"del of attribute {ins.argval!r} of {target.describe()}")
    target.var_getattr(tx, ins.argval)  # raises AttributeError as eager does when it is missing
    target.store_attribute(tx, ins.argval, DELETED)


@handles("PUSH_NULL")
def push_null(tx, ins):
    tx.push(NULL)


@handles("POP_TOP")
def pop_top(tx, ins):
    tx.pop()


@handles("COPY")
def copy(tx, ins):
    tx.push(tx.stack[-ins.arg])


@handles("SWAP")
def swap(tx, ins):
    stack = tx.stack
    stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]


@handles("IMPORT_NAME")
def import_name(tx, ins):
    """``import m`` / ``from m import x`` of a module already imported: no effect but the
    lookup (a first import runs module code: the graph breaks and eager imports it)."""


    fromlist = tx.pop().as_python_constant()
    level = tx.pop().as_python_constant()
    name = ins.argval
    if level != 0 or name not in sys.modules:
        raise Unsupported(f"import of {name!r}, not imported yet or relative (runs eagerly)")
    top = name if fromlist else name.partition(".")[0]
    module = sys.modules.get(top)
    if module is None:
        raise Unsupported(f"import of {name!r}")
    tx.push(PythonModuleVariable(module, ConstSource(module, f"<module {top}>")))


@handles("IMPORT_FROM")
def import_from(tx, ins):
    tx.push(tx.stack[-1].var_getattr(tx, ins.argval))
