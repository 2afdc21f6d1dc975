"""The symbolic stack machine: runs a frame's bytecode on variables, recording a graph."""
from __future__ import annotations

import inspect
from dataclasses import dataclass

from ..bytecode import compat
from ..errors import Unsupported, UserError
from .exceptions import enter_handler, exception_handlers, note_context
from .handlers import HANDLERS
from ..bytecode.resume import indexed_instructions
from ..tracing import trace_rules
from ..tracing.sources import BuiltinSource, ConstSource, GlobalSource, ItemSource
from ..tracing.variables import array_conversions, builder, inplace, lifted_float, ndarrays, symbolic, unbacked_scalars, user_operators
from ..tracing.variables.base import NULL, CellVariable, VariableTracker
from ..tracing.variables.containers import SEQUENCE_OPERATORS, BaseListVariable, TupleVariable
from ..tracing.variables.dicts import DICT_OPERATORS, DictVariable
from ..tracing.variables.iterators import GeneratorVariable
from ..tracing.variables.sets import SET_OPERATORS, SetVariable
from ..tracing.variables.tensor import TracedCallableVariable
from ..tracing.variables.scan_values import symbolic_unbind

MAX_INLINE_DEPTH = 24
MAX_STEPS = 200_000  # instructions per frame: unrolled loops beyond this fall back

# Generator-like code the translator cannot inline (a plain generator becomes a GeneratorVariable).
_UNSUPPORTED_FLAGS = compat.GENERATOR_FLAGS & ~inspect.CO_GENERATOR


class InstructionTranslator:
    """Symbolic execution of one code object (the compiled frame or an inlined call).

    ``locals`` maps variable names to VariableTrackers (cell variables hold a
    CellVariable); ``stack`` is the value stack; handlers (``handlers/``) implement each
    opcode on them. ``run()`` returns the variable the code returns. ``hook`` is the frame
    hook that asked for the translation (``FrameRequest.hook``); inlined calls share it.
    Variables make new variables through ``wrap``, ``wrap_constant``, ``wrap_traced``,
    ``build_tuple`` and ``build_dict``, never by importing the builder.
    """

    def __init__(self, code, f_globals, symbolic_locals: dict, output, *, parent=None, globals_source=None,
                 allow_breaks: bool = False, hook=None):
        self.code = code
        self.hook = parent.hook if parent is not None else hook
        self.f_globals = f_globals
        self.locals = symbolic_locals
        self.output = output
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.globals_source = globals_source  # None: the compiled frame's own globals
        self.instructions, self.index_of_offset = indexed_instructions(code)
        self.exception_handlers = exception_handlers(code, self.instructions, self.index_of_offset)
        self.active_exceptions: list = []  # exceptions being handled (PUSH_EXC_INFO ... POP_EXCEPT)
        self.exception_slots: list = []  # (stack position of the exception each replaced, exception)
        self.stack: list = []
        self.pc = 0
        self.kw_names = None
        self.lineno = code.co_firstlineno
        self.returned: VariableTracker | None = None
        self.yielded: VariableTracker | None = None  # set by YIELD_VALUE (see GeneratorVariable)
        self.steps = 0
        self.handlers = HANDLERS
        self.allow_breaks = allow_breaks
        self.loop_heads: dict = {}  # GET_ITER index -> Snapshot (NOTE: [graph breaks in loops])
        self.with_heads: dict = {}  # BEFORE_WITH index -> Snapshot (contexts.context_entry)
        for name in code.co_cellvars:
            self.locals.setdefault(name, CellVariable(None, name))
            if not isinstance(self.locals[name], CellVariable):
                self.locals[name] = CellVariable(self.locals[name], name)

    # -- the loop -------------------------------------------------------------------------
    def run(self) -> VariableTracker:
        """Run to the return (a generator: to its next ``yield``, see GeneratorVariable)."""
        while self.returned is None and self.yielded is None:
            self.step()
        return self.returned

    def step(self) -> None:
        """Run one instruction (a graph break raises GraphBreak with the state before it)."""
        instruction = self.instructions[self.pc]
        index = self.pc
        self.pc += 1
        self.steps += 1
        if instruction.positions is not None and instruction.positions.lineno is not None:
            self.lineno = instruction.positions.lineno
        before = self.snapshot(index) if self.allow_breaks else None
        if before is not None and instruction.opname == "GET_ITER" and not self.active_exceptions:
            self.loop_heads.setdefault(index, before)
        if before is not None and instruction.opname == "BEFORE_WITH":
            self.with_heads[index] = before  # NOTE: [user context managers]
        try:
            if self.steps > MAX_STEPS:
                raise self.unsupported("a loop too long to unroll")
            handler = self.handlers.get(instruction.opname)
            if handler is None:
                raise self.unsupported(f"the opcode {instruction.opname} is not supported")
            try:
                handler(self, instruction)
            except UserError as error:
                note_context(self, error)
                if not enter_handler(self, error, index):  # NOTE: [try/except in the traced frame]
                    raise
        except Unsupported as exc:
            exc.located(self.code.co_filename, self.lineno)
            if before is not None:
                raise GraphBreak(exc, before) from exc
            raise

    def throw(self, error: UserError) -> None:
        """Continue this paused generator by raising ``error`` at its ``yield``
        (``gen.throw``), up to its next ``yield`` or its end."""
        if not enter_handler(self, error, self.pc - 1):
            raise error
        self.run()

    def snapshot(self, index: int) -> "Snapshot":
        """The state before instruction ``index``, to compile up to it on a graph break."""
        return Snapshot(index, list(self.stack), dict(self.locals), self.kw_names, self.output.checkpoint(), self.lineno,
                        tuple(self.exception_slots))

    def unsupported(self, reason: str, hint: str = "") -> Unsupported:
        return Unsupported(reason, self.code.co_filename, self.lineno, hint)

    # -- stack --------------------------------------------------------------------------
    def push(self, value: VariableTracker) -> None:
        self.stack.append(value)

    def push_callable(self, value: VariableTracker, with_null: bool) -> None:
        """Push a loaded callable, with the NULL a following CALL expects on the side
        this Python puts it (see compat.CALL_LAYOUT)."""
        if with_null and compat.CALL_LAYOUT == "null_first":
            self.push(NULL)
        self.push(value)
        if with_null and compat.CALL_LAYOUT == "callable_first":
            self.push(NULL)

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

    # -- making variables ---------------------------------------------------------------
    def wrap(self, value, source) -> VariableTracker:
        """The variable for ``value`` read from ``source`` (None: unguarded), guards installed."""
        return builder.wrap(self, value, source)

    def wrap_constant(self, value) -> VariableTracker:
        """The variable for a value computed from constants (no source, no guard)."""
        return builder.wrap_constant_result(value)

    def wrap_traced(self, value) -> VariableTracker:
        """The variable for what library code returned while running on proxies."""
        return builder.wrap_traced_result(self, value)

    def build_tuple(self, items: list) -> VariableTracker:
        """A new tuple of variables (what BUILD_TUPLE makes)."""
        return TupleVariable(items)

    def tensor_to_ndarray(self, tensor) -> VariableTracker:
        """``tensor.numpy()``: an array in the graph sharing the tensor's memory (NOTE: [NumPy arrays in the graph])."""
        return array_conversions.tensor_to_ndarray(self, tensor)

    def tensor_scalars(self, tensor, name: str) -> VariableTracker:
        """``tensor.item()``/``tensor.tolist()`` kept in the graph (NOTE: [scalars read from tensors])."""
        return unbacked_scalars.read_scalars(self, tensor, name)

    def symbolic_unbind(self, tensor, args: list, kwargs: dict):
        """``tensor.unbind(dim)`` kept whole when that size is symbolic (see scan_values), or None."""
        return symbolic_unbind(self, tensor, args, kwargs)

    def build_dict(self, items: dict) -> VariableTracker:
        """A new dict of variables keyed by constants (what BUILD_MAP makes)."""
        return DictVariable(items)

    # -- globals ------------------------------------------------------------------------
    def load_global(self, name: str) -> VariableTracker:
        stored = self.output.side_effects.global_value(self.f_globals, name)
        if stored is not None:
            return stored
        if name in self.f_globals:
            source = GlobalSource(name) if self.globals_source is None else ItemSource(self.globals_source, name)
            return self.wrap(self.f_globals[name], source)
        builtins_dict = self.f_globals.get("__builtins__", __builtins__)
        if not isinstance(builtins_dict, dict):
            builtins_dict = builtins_dict.__dict__
        if name in builtins_dict:
            return self.wrap(builtins_dict[name], BuiltinSource(name))
        raise self.unsupported(f"name {name!r} is not defined (raises NameError in eager)")

    # -- calls --------------------------------------------------------------------------
    def call_function(self, fn: VariableTracker, args: list, kwargs: dict) -> VariableTracker:
        return fn.call(self, args, kwargs)

    def binary_operation(self, op, left: VariableTracker, right: VariableTracker) -> VariableTracker:
        array = ndarrays.binary(self, op, left, right)  # NOTE: [NumPy arrays in the graph]
        if array is None:
            array = unbacked_scalars.binary(self, op, left, right)  # NOTE: [scalars read from tensors]
        if array is not None:
            return array
        kept_symbolic = symbolic.binary(self, op, left, right)  # NOTE: [observing a symbolic int]
        if kept_symbolic is None:
            kept_symbolic = lifted_float.binary(self, op, left, right)  # NOTE: [lifted floats]
        if kept_symbolic is not None:
            return kept_symbolic
        # Containers first: ``xs += ys`` changes xs in place (never folded on a copy).
        if isinstance(left, DictVariable) and op in DICT_OPERATORS:
            return DICT_OPERATORS[op](self, left, right)
        if isinstance(left, SetVariable) and op in SET_OPERATORS:
            return SET_OPERATORS[op](self, left, right)
        in_place = op in inplace.INPLACE_OPERATORS
        if (isinstance(left, BaseListVariable) or isinstance(right, BaseListVariable) and not in_place) \
                and op in SEQUENCE_OPERATORS:
            return SEQUENCE_OPERATORS[op](self, left, right)
        by_user_methods = user_operators.binary(self, op, left, right)  # a user class's __add__ ...
        if by_user_methods is not None:
            return by_user_methods
        eager = inplace.runs_eagerly(op, left) if in_place else None
        if eager is not None:  # NOTE: [in-place operators on objects]
            raise self.unsupported(eager)

        if left.is_python_constant() and right.is_python_constant():
            a, b = left.as_python_constant(), right.as_python_constant()
            try:
                return self.wrap_constant(op(a, b))
            except Exception as exc:
                raise self.unsupported(f"{op.__name__} of constants raised {type(exc).__name__}: {exc}")
        return TracedCallableVariable(op, op.__name__).call(self, [left, right], {})

    def inline_user_function(self, fn_var, args: list, kwargs: dict) -> VariableTracker:
        code = fn_var.code
        if self.depth >= MAX_INLINE_DEPTH:
            raise self.unsupported(f"inlining deeper than {MAX_INLINE_DEPTH} calls (recursion?)")
        if code.co_flags & _UNSUPPORTED_FLAGS:
            raise self.unsupported(f"calling generator or coroutine function {code.co_name}")
        eager = trace_rules.eager_reason(fn_var.fn) if fn_var.fn is not None else None
        if eager is not None:
            raise self.unsupported(eager)
        defaults, kwdefaults = fn_var.defaults(self)
        bound = bind_arguments(code, args, kwargs, defaults, kwdefaults)
        for cell in fn_var.closure_cells(self):
            bound[cell.name] = cell
        globals_source = None
        if fn_var.f_globals is not self.root().f_globals:
            # A function's __globals__ cannot be rebound: the dict of a guarded function (or
            # of a method found on a class) is a constant, shared by every call site.
            globals_source = ConstSource(fn_var.f_globals)
        elif self.globals_source is not None and fn_var.f_globals is self.f_globals:
            globals_source = self.globals_source
        child = InstructionTranslator(code, fn_var.f_globals, bound, self.output, parent=self,
                                      globals_source=globals_source)
        if code.co_flags & inspect.CO_GENERATOR:
            return GeneratorVariable(child, fn_var, args, kwargs)  # runs as its consumer asks
        try:
            return child.run()
        except Unsupported as exc:
            # A break inside a callee: the caller runs the call eagerly and the callee's
            # own frame is compiled by the hook (the outermost callee is the one called).
            if fn_var.fn is not None:
                exc.callee = fn_var.fn
            exc.user_stack.append((self.code.co_filename, self.lineno, self.code.co_name))
            raise

    def root(self) -> "InstructionTranslator":
        tx = self
        while tx.parent is not None:
            tx = tx.parent
        return tx




@dataclass
class Snapshot:
    """Translator state before one instruction of the compiled frame."""

    index: int
    stack: list
    locals: dict
    kw_names: object
    checkpoint: object
    lineno: int
    exception_slots: tuple = ()  # (stack position of the exception it replaced, exception being handled)


class GraphBreak(Exception):
    """The compiled frame cannot continue symbolically at ``snapshot.index``: compile
    what came before and continue eagerly from there (see translate/convert.py)."""

    def __init__(self, reason: Unsupported, snapshot: Snapshot):
        super().__init__(str(reason))
        self.reason = reason
        self.snapshot = snapshot


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
