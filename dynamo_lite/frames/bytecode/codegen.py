"""Emit the transformed code object: reload graph inputs, call the graph, rebuild results."""
from __future__ import annotations

import inspect
import types

from bytecode import Bytecode, Instr, Label, TryBegin, TryEnd

from . import compat
from .steps import Attr, Build, Const, Item, Name, StepRecorder
from ..errors import Unsupported

GRAPH_OUT = "__dl_graph_out"
TEMP_PREFIX = "__dl_tmp"
_NO_ARG = object()  # emit()'s "instruction without an argument" (None is a valid constant)


class TransformedCodeBuilder:
    """Collects instructions for a transformed frame; ``Source``/variable ``reconstruct``
    methods call its small vocabulary (``load_fast``, ``load_attr``, ``build`` ...).

    ``emitted`` records what it emitted as Python-level steps (NOTE: [emitted steps]);
    instructions others append to ``instructions`` directly (a graph break's original
    instructions, its branch) are recorded when the builder next emits or is read.
    """

    def __init__(self, original: types.CodeType, argnames: tuple):
        self.original = original
        self.argnames = tuple(argnames)
        self.instructions: list = []
        self.graph_output_index: dict = {}  # graph node -> index in the graph's output tuple
        self.temps: dict = {}  # id(variable) -> (temporary holding its value, the variable)
        self.symbolic_node = None  # SymInt -> its graph node (set with the graph's outputs)
        self.lineno = original.co_firstlineno
        self.recorder = StepRecorder()
        self._recorded = 0  # instructions recorded so far

    @property
    def emitted(self) -> StepRecorder:
        """What was emitted so far, as steps (NOTE: [emitted steps])."""
        self._record_appended()
        return self.recorder

    def begin(self, phase: str) -> None:
        """The steps emitted from here on belong to ``phase`` (``replay``, ``break`` ...)."""
        self._record_appended()
        self.recorder.phase = phase

    def emit(self, name: str, arg=_NO_ARG) -> None:
        """Emit one instruction the vocabulary below has no method for (a store replayed,
        a return ...)."""
        self._append(Instr(name, lineno=self.lineno) if arg is _NO_ARG else Instr(name, arg, lineno=self.lineno),
                     lambda: self.recorder.instruction(name, None if arg is _NO_ARG else arg))

    def _append(self, instruction, record) -> None:
        self._record_appended()
        self.instructions.append(instruction)
        self._recorded += 1
        self._record(record)

    def _record(self, record) -> None:
        if self.recorder.failure is None:
            try:
                record()
            except (KeyError, IndexError, AttributeError, TypeError) as exc:  # the code is fine; its view is not
                self.recorder.failure = f"{type(exc).__name__}: {exc}"

    def _record_appended(self) -> None:
        """Record the instructions appended to ``instructions`` by others since the last one
        recorded: original instructions a graph break runs eagerly and its branch."""
        for item in self.instructions[self._recorded:]:
            if isinstance(item, Label):
                self._record(lambda label=item: self.recorder.label(label))
            else:
                self._record(lambda ins=item: self.recorder.instruction(ins.name, ins.arg))
        self._recorded = len(self.instructions)

    # -- vocabulary used by sources and variables ------------------------------------------
    def load_fast(self, name: str) -> None:
        self._append(Instr("LOAD_FAST", name, lineno=self.lineno), lambda: self.recorder.push(Name(name)))

    def store_fast(self, name: str) -> None:
        self._append(Instr("STORE_FAST", name, lineno=self.lineno), lambda: self.recorder.store(name))

    def load_global(self, name: str) -> None:
        self._append(Instr("LOAD_GLOBAL", (False, name), lineno=self.lineno), lambda: self.recorder.push(Name(name)))

    def load_attr(self, name: str) -> None:
        self._append(compat.load_attr(name), lambda: self.recorder.push(Attr(self.recorder.pop(), name)))

    def load_const(self, value) -> None:
        self._append(Instr("LOAD_CONST", value, lineno=self.lineno), lambda: self.recorder.push(Const(value)))

    def binary_subscr(self) -> None:
        self.emit("BINARY_SUBSCR")

    def push_null(self) -> None:
        self.emit("PUSH_NULL")

    def build(self, container_type: type, count: int) -> None:
        opname = {tuple: "BUILD_TUPLE", list: "BUILD_LIST", set: "BUILD_SET", dict: "BUILD_MAP"}[container_type]
        width = 2 * count if container_type is dict else count
        self._append(Instr(opname, count, lineno=self.lineno),
                     lambda: self.recorder.push(Build(container_type, self.recorder.pop_many(width))))

    def call_const(self, fn, emit_args, nargs: int) -> None:
        """Call the constant ``fn`` with the ``nargs`` values that ``emit_args()`` pushes."""
        self._record_appended()
        start = len(self.instructions)
        emit_args()
        self._record_appended()
        arg_instructions = self.instructions[start:]
        del self.instructions[start:]
        self.instructions.extend(compat.call_const(fn, arg_instructions, nargs))
        self._recorded = len(self.instructions)
        self._record(lambda: self.recorder.call(fn, nargs))

    def call_pushed(self, emit_callee, emit_args, nargs: int) -> None:
        """Call the value ``emit_callee()`` pushes (a function made at run time) with the
        ``nargs`` values that ``emit_args()`` pushes."""
        self._record_appended()
        start = len(self.instructions)
        emit_callee()
        self._record_appended()
        middle = len(self.instructions)
        emit_args()
        self._record_appended()
        callee, arg_instructions = self.instructions[start:middle], self.instructions[middle:]
        del self.instructions[start:]
        self.instructions.extend(compat.call_pushed(callee, arg_instructions, nargs))
        self._recorded = len(self.instructions)
        self._record(lambda: self.recorder.call_pushed(nargs))

    def call_const_on(self, fn, variables) -> None:
        """Call the constant ``fn`` with the values of ``variables`` (each reconstructed)."""
        variables = list(variables)

        def emit_args():
            for variable in variables:
                self.reconstruct(variable)

        self.call_const(fn, emit_args, len(variables))

    def load_graph_value(self, variable) -> None:
        self._load_output(variable.node)

    def _load_output(self, node) -> None:
        index = self.graph_output_index.get(node)
        if index is None:
            raise Unsupported("a value the graph does not output is needed after it")
        self.load_fast(GRAPH_OUT)
        self.load_const(index)
        self.binary_subscr()

    # -- exception-table entries (NOTE: [breaks inside try/except]) -----------------------
    def route_exceptions(self) -> None:
        """What follows routes exceptions (NOTE: [breaks inside try/except]): the view has
        no try statement to show it with, and says so."""
        self._record_appended()
        if self.recorder.failure is None:
            self.recorder.failure = "a graph break inside a try or with block (its exception routing is in the dis view)"

    def begin_try(self, handler: Label) -> TryBegin:
        """Open an exception-table entry whose exceptions go to ``handler``."""
        self.route_exceptions()
        return self._append_marker(TryBegin(handler, push_lasti=False))

    def end_try(self, entry: TryBegin) -> None:
        self._append_marker(TryEnd(entry))

    def place_label(self, label: Label) -> None:
        self._append_marker(label)

    def _append_marker(self, marker):
        self._record_appended()
        self.instructions.append(marker)
        self._recorded = len(self.instructions)
        return marker

    def stash(self, variables) -> None:
        """Rebuild each of ``variables`` into a temporary now, also those otherwise rebuilt
        at each use (a grad-mode block's ``__exit__`` enters the block when rebuilt)."""
        for variable in variables:
            if id(variable) not in self.temps:
                variable.reconstruct(self)
                name = f"{TEMP_PREFIX}{len(self.temps)}"
                self.store_fast(name)
                self.temps[id(variable)] = (name, variable)

    # -- rebuilding values once (NOTE: [rebuild once, before the replay]) -----------------
    def reconstruct(self, variable) -> None:
        """Push ``variable``'s value: its temporary once materialized, else rebuild it."""
        known = self.temps.get(id(variable))
        if known is not None:
            self.load_fast(known[0])
            return
        variable.reconstruct(self)

    def materialize(self, variables) -> None:
        """Rebuild each of ``variables`` (and what they are built from) once, into a
        temporary, so every later use is the same object.

        NOTE: [rebuild once, before the replay] Sourced values are reloaded here, before
        any side effect is replayed: a value read before a store is the value from before
        it (the store may overwrite its source). Objects made in the frame are built
        once, so a list returned twice, kept in two locals or passed to a resume
        function is one list, as in the eager run.
        """
        self.begin("rebuild")
        order, state, fills, pending = [], {}, [], [(v, False) for v in reversed(list(variables))]
        while pending:
            variable, children_done = pending.pop()
            key = id(variable)
            if children_done:
                state[key] = "done"
                order.append(variable)
                continue
            if state.get(key) == "done" or not _needs_temporary(variable):
                continue
            if state.get(key) == "visiting":
                raise Unsupported("rebuilding a container that contains itself")
            state[key] = "visiting"
            pending.append((variable, True))
            if variable.source is None:  # a sourced value is reloaded, not rebuilt
                later = variable.filled_later()
                if later:  # built after it, as roots of their own: a cycle through it is no cycle
                    fills.append(variable)
                    pending[:0] = [(child, False) for child in later]
                pending.extend((child, False) for child in reversed(variable.children())
                               if not any(child is c for c in later))
        filled = {id(v) for v in fills}
        for variable in order:
            if id(variable) in self.temps:
                continue
            if id(variable) in filled:
                variable.reconstruct_unfilled(self)
            else:
                variable.reconstruct(self)
            name = f"{TEMP_PREFIX}{len(self.temps)}"
            self.store_fast(name)
            self.temps[id(variable)] = (name, variable)
        for variable in fills:
            variable.fill(self, lambda v=variable: self.load_fast(self.temps[id(v)][0]))

    def load_symbolic(self, value) -> None:
        """A size known only at run time (a SymInt), or a tuple/list/Size holding some:
        each symbolic size is a graph output (``symbolic_node`` maps it to its node)."""
        if not isinstance(value, (tuple, list)):
            node = self.symbolic_node(value)
            return self.load_const(node) if isinstance(node, int) else self._load_output(node)
        if type(value) in (tuple, list):
            for item in value:
                if isinstance(item, int):
                    self.load_const(item)
                else:
                    self.load_symbolic(item)
            return self.build(type(value), len(value))
        self.call_const(type(value), lambda: self.load_symbolic(tuple(value)), 1)  # dl.Size and friends

    # -- the whole frame -------------------------------------------------------------------------
    def emit_graph_call(self, compiled_graph, input_variables) -> None:
        self.begin("graph")

        def load_inputs():
            for variable in input_variables:
                variable.source.reconstruct(self)

        self.call_const(compiled_graph, load_inputs, len(input_variables))
        self.store_fast(GRAPH_OUT)

    def emit_return(self, variable) -> None:
        self.begin("return")
        self.reconstruct(variable)
        self.emit("RETURN_VALUE")

    def build_function(self, f_globals: dict) -> types.FunctionType:
        self._record_appended()
        code = Bytecode([Instr("RESUME", 0, lineno=self.lineno), *self.instructions])
        code.argnames = list(self.argnames)
        code.argcount = len(self.argnames)
        code.name = self.original.co_name
        code.qualname = getattr(self.original, "co_qualname", self.original.co_name)
        code.filename = self.original.co_filename
        code.first_lineno = self.original.co_firstlineno
        code.flags = inspect.CO_OPTIMIZED | inspect.CO_NEWLOCALS
        return types.FunctionType(code.to_code(), f_globals, self.original.co_name)


def _needs_temporary(variable) -> bool:
    """Constants, NULL and tensors the graph returns are the same object on every load
    (``rebuilt_once`` False); everything else is loaded or built once."""
    return variable.rebuilt_once
