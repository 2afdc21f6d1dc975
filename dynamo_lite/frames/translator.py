"""The symbolic stack machine: runs a frame's bytecode on variables, recording a graph."""
from __future__ import annotations

import dis
import inspect

from . import version_tables as V
from .errors import Unsupported
from .handlers import load_all
from .sources import AttrSource, BuiltinSource, GlobalSource, ItemSource
from .variables.base import CellVariable, ConstantVariable, VariableTracker
from .variables.containers import DictVariable, TupleVariable

MAX_INLINE_DEPTH = 24
MAX_STEPS = 200_000  # instructions per frame: unrolled loops beyond this fall back

_UNSUPPORTED_FLAGS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


class InstructionTranslator:
    """Symbolic execution of one code object (the compiled frame or an inlined call).

    ``locals`` maps variable names to VariableTrackers (cell variables hold a
    CellVariable); ``stack`` is the value stack; handlers (``handlers/``) implement each
    opcode on them. ``run()`` returns the variable the code returns.
    """

    def __init__(self, code, f_globals, symbolic_locals: dict, output, *, parent=None, globals_source=None):
        self.code = code
        self.f_globals = f_globals
        self.locals = symbolic_locals
        self.output = output
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.globals_source = globals_source  # None: the compiled frame's own globals
        self.instructions = list(dis.get_instructions(code))
        self.index_of_offset = {ins.offset: i for i, ins in enumerate(self.instructions)}
        self.guarded_indices = _try_block_indices(code, self.instructions, self.index_of_offset)
        self.stack: list = []
        self.pc = 0
        self.kw_names = None
        self.lineno = code.co_firstlineno
        self.returned: VariableTracker | None = None
        self.handlers = load_all()
        for name in code.co_cellvars:
            self.locals.setdefault(name, CellVariable(None, name))
            if not isinstance(self.locals[name], CellVariable):
                self.locals[name] = CellVariable(self.locals[name], name)

    # -- the loop -------------------------------------------------------------------------
    def run(self) -> VariableTracker:
        steps = 0
        while self.returned is None:
            instruction = self.instructions[self.pc]
            index = self.pc
            self.pc += 1
            steps += 1
            if steps > MAX_STEPS:
                raise self.unsupported("a loop too long to unroll")
            if instruction.positions is not None and instruction.positions.lineno is not None:
                self.lineno = instruction.positions.lineno
            if index in self.guarded_indices:
                raise self.unsupported("code inside a try/except block")
            handler = self.handlers.get(instruction.opname)
            if handler is None:
                raise self.unsupported(f"the opcode {instruction.opname} is not supported")
            try:
                handler(self, instruction)
            except Unsupported as exc:
                raise exc.located(self.code.co_filename, self.lineno)
        return self.returned

    def unsupported(self, reason: str, hint: str = "") -> Unsupported:
        return Unsupported(reason, self.code.co_filename, self.lineno, hint)

    # -- stack --------------------------------------------------------------------------
    def push(self, value: VariableTracker) -> None:
        self.stack.append(value)

    def pop(self) -> VariableTracker:
        return self.stack.pop()

    def popn(self, n: int) -> list:
        if n == 0:
            return []
        values = self.stack[-n:]
        del self.stack[-n:]
        return values

    def jump_to(self, offset: int) -> None:
        self.pc = self.index_of_offset[offset]

    # -- globals ------------------------------------------------------------------------
    def load_global(self, name: str) -> VariableTracker:
        from .variables.builder import wrap

        if name in self.f_globals:
            source = GlobalSource(name) if self.globals_source is None else ItemSource(self.globals_source, name)
            return wrap(self, self.f_globals[name], source)
        builtins_dict = self.f_globals.get("__builtins__", __builtins__)
        if not isinstance(builtins_dict, dict):
            builtins_dict = builtins_dict.__dict__
        if name in builtins_dict:
            return wrap(self, builtins_dict[name], BuiltinSource(name))
        raise self.unsupported(f"name {name!r} is not defined (raises NameError in eager)")

    # -- calls --------------------------------------------------------------------------
    def call_function(self, fn: VariableTracker, args: list, kwargs: dict) -> VariableTracker:
        return fn.call(self, args, kwargs)

    def binary_operation(self, op, left: VariableTracker, right: VariableTracker) -> VariableTracker:
        from .variables.tensor import TracedCallableVariable

        if left.is_python_constant() and right.is_python_constant():
            a, b = left.as_python_constant(), right.as_python_constant()
            try:
                return _wrap_constant(op(a, b))
            except Exception as exc:
                raise self.unsupported(f"{op.__name__} of constants raised {type(exc).__name__}: {exc}")
        return TracedCallableVariable(op, op.__name__).call(self, [left, right], {})

    def inline_user_function(self, fn_var, args: list, kwargs: dict) -> VariableTracker:
        code = fn_var.code
        if self.depth >= MAX_INLINE_DEPTH:
            raise self.unsupported(f"inlining deeper than {MAX_INLINE_DEPTH} calls (recursion?)")
        if code.co_flags & _UNSUPPORTED_FLAGS:
            raise self.unsupported(f"calling generator or coroutine function {code.co_name}")
        defaults, kwdefaults = fn_var.defaults(self)
        bound = bind_arguments(code, args, kwargs, defaults, kwdefaults)
        for cell in fn_var.closure_cells(self):
            bound[cell.name] = cell
        globals_source = None
        if fn_var.f_globals is not self.root().f_globals:
            if fn_var.source is None:
                raise self.unsupported(f"inlining {code.co_name} whose globals are unknown")
            globals_source = AttrSource(fn_var.source, "__globals__")
        elif self.globals_source is not None and fn_var.f_globals is self.f_globals:
            globals_source = self.globals_source
        child = InstructionTranslator(code, fn_var.f_globals, bound, self.output, parent=self,
                                      globals_source=globals_source)
        return child.run()

    def root(self) -> "InstructionTranslator":
        tx = self
        while tx.parent is not None:
            tx = tx.parent
        return tx


def _wrap_constant(value) -> VariableTracker:
    from .variables.builder import wrap_constant_result

    return wrap_constant_result(value)


def bind_arguments(code, args: list, kwargs: dict, defaults: tuple, kwdefaults: dict) -> dict:
    """Bind call arguments to a code object's parameters like CPython does.

    Raises Unsupported for a call that would raise TypeError (the eager run raises it).
    """
    nargs = code.co_argcount
    nkwonly = code.co_kwonlyargcount
    names = code.co_varnames
    positional = list(names[:nargs])
    kwonly = list(names[nargs:nargs + nkwonly])
    flags = code.co_flags
    index = nargs + nkwonly
    varargs_name = names[index] if flags & inspect.CO_VARARGS else None
    index += bool(flags & inspect.CO_VARARGS)
    varkw_name = names[index] if flags & inspect.CO_VARKEYWORDS else None
    bound: dict = {}
    for name, value in zip(positional, args):
        bound[name] = value
    extra = args[nargs:]
    if extra and varargs_name is None:
        raise Unsupported(f"{code.co_name}() takes {nargs} positional arguments but {len(args)} were given")
    if varargs_name is not None:
        bound[varargs_name] = TupleVariable(extra)
    extra_kwargs = {}
    posonly = set(positional[:code.co_posonlyargcount])
    for key, value in kwargs.items():
        if key in bound and key in positional:
            raise Unsupported(f"{code.co_name}() got multiple values for argument {key!r}")
        if (key in positional and key not in posonly) or key in kwonly:
            bound[key] = value
        elif varkw_name is not None:
            extra_kwargs[key] = value
        else:
            raise Unsupported(f"{code.co_name}() got an unexpected keyword argument {key!r}")
    first_default = nargs - len(defaults)
    for i, name in enumerate(positional):
        if name not in bound:
            if i >= first_default:
                bound[name] = defaults[i - first_default]
            else:
                raise Unsupported(f"{code.co_name}() missing required argument {name!r}")
    for name in kwonly:
        if name not in bound:
            if name in kwdefaults:
                bound[name] = kwdefaults[name]
            else:
                raise Unsupported(f"{code.co_name}() missing required keyword-only argument {name!r}")
    if varkw_name is not None:
        bound[varkw_name] = DictVariable(extra_kwargs)
    return bound


def _try_block_indices(code, instructions, index_of_offset) -> set:
    """Indices of instructions protected by a try/except (not by a with block's cleanup).

    A handler that starts with PUSH_EXC_INFO then WITH_EXCEPT_START belongs to a ``with``
    statement, whose context managers the translator only accepts when they do nothing;
    other PUSH_EXC_INFO handlers are real ``except``/``finally`` clauses.
    """
    protected = set()
    for entry in _exception_entries(code):
        target = index_of_offset.get(entry.target)
        if target is None or instructions[target].opname != "PUSH_EXC_INFO":
            continue
        following = instructions[target + 1].opname if target + 1 < len(instructions) else ""
        if following == "WITH_EXCEPT_START":
            continue
        for offset in range(entry.start, entry.end, 2):
            if offset in index_of_offset:
                protected.add(index_of_offset[offset])
    return protected


def _exception_entries(code):
    return dis.Bytecode(code).exception_entries


__all__ = ["InstructionTranslator", "bind_arguments", "ConstantVariable", "V"]
