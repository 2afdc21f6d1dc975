"""The rewritten code of a frame as readable Python source (the emitter's vocabulary read back).

The transformed code the emitter builds is made of a small vocabulary: load locals,
globals, attributes and constants, subscript, build containers, call a constant (a
compiled graph, a resume function), store temporaries, replay stores, run one original
instruction eagerly, branch once, return. Each of those instructions has a Python
spelling; this module reads the emitted instruction list with an expression stack and
writes one statement per store, eager call and return. It is not a general decompiler:
an instruction outside the vocabulary makes ``render`` say so in a comment.

Constants that have no literal spelling (compiled graphs, resume functions, helpers) are
named (``__compiled_graph_0``, ``__resume_at_66_f``) and returned as bindings, so that
``exec(source, {**f_globals, **bindings})`` defines a function that does what the
rewritten code does.
"""
from __future__ import annotations

import ast
import dis
import keyword
import types
from dataclasses import dataclass, field

from bytecode import Bytecode, Compare, Instr, Label

NULL = object()  # the NULL slot of a call (never spelled)
_BINARY = {i: symbol for i, (_, symbol) in enumerate(dis._nb_ops)} if hasattr(dis, "_nb_ops") else {}
_COMPARE = {"LT": "<", "LE": "<=", "EQ": "==", "NE": "!=", "GT": ">", "GE": ">="}  # 3.13 adds *_CAST spellings
# How a conditional jump's test reads when the jump is taken.
_JUMP_TEST = {"TRUE": "{}", "FALSE": "not {}", "NONE": "{} is None", "NOT_NONE": "{} is not None"}
_IGNORED = {"RESUME", "NOP", "PRECALL", "CACHE", "TO_BOOL", "EXTENDED_ARG", "COPY_FREE_VARS", "MAKE_CELL"}


class NotInVocabulary(Exception):
    """An instruction the emitter does not use (the view cannot spell it)."""


@dataclass
class Rewritten:
    """The Python spelling of one transformed code object.

    Attributes:
        source: ``def name(args): ...``; compiles with ``compile(source, "<rewritten>", "exec")``.
        bindings: names the source uses for constants -> the objects.
    """

    source: str
    bindings: dict = field(default_factory=dict)


class _Reader:
    def __init__(self, code, break_lines: dict):
        self.code, self.break_lines = code, break_lines
        self.bindings: dict = {}
        self.named: dict = {}  # id(constant) -> its name
        self.copies = 0

    # -- constants ---------------------------------------------------------------------------
    def constant(self, value) -> str:
        if _is_literal(value):
            return repr(value)
        name = self.named.get(id(value))
        if name is None:
            name = _binding_name(value, sum(n.startswith("__compiled_graph") for n in self.bindings))
            while name in self.bindings:
                name += "_"
            self.named[id(value)] = name
            self.bindings[name] = value
        return name

    # -- blocks ------------------------------------------------------------------------------
    def block(self, instructions: list, start: int, stack: list, indent: str) -> list:
        """Statements of ``instructions[start:]`` up to and including a return."""
        lines, pending_kw, seen_lines = [], (), set()

        def statement(text):  # a break is noted once, on the first statement running its line
            line = next((n for n in sorted(seen_lines) if n in self.break_lines), None)
            note = self.break_lines.pop(line, "")
            lines.append(indent + text + (f"  # graph break: {note}" if note else ""))
            seen_lines.clear()

        index = start
        while index < len(instructions):
            ins = instructions[index]
            index += 1
            if isinstance(ins, Label):
                continue
            if ins.lineno is not None and ins.lineno != self.code.co_firstlineno:
                seen_lines.add(ins.lineno)
            name, arg = ins.name, ins.arg
            if name in _IGNORED:
                continue
            if name == "PUSH_NULL":
                stack.append(NULL)
            elif name == "LOAD_CONST":
                stack.append(self.constant(arg))
            elif name == "RETURN_CONST":
                statement(f"return {self.constant(arg)}")
                return lines
            elif name in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_NAME"):
                stack.append(arg if isinstance(arg, str) else arg.name)
            elif name == "LOAD_GLOBAL":
                with_null, global_name = arg if isinstance(arg, tuple) else (False, arg)
                stack.append(global_name)
                if with_null:
                    stack.append(NULL)
            elif name in ("LOAD_ATTR", "LOAD_METHOD"):
                method, attr = arg if isinstance(arg, tuple) else (name == "LOAD_METHOD", arg)
                stack.append(f"{_operand(stack.pop())}.{attr}")
                if method:
                    stack.append(NULL)
            elif name == "STORE_FAST" or name == "STORE_DEREF":
                statement(f"{arg if isinstance(arg, str) else arg.name} = {stack.pop()}")
            elif name == "BINARY_SUBSCR":
                key, container = stack.pop(), stack.pop()
                stack.append(f"{_operand(container)}[{key}]")
            elif name in ("BUILD_TUPLE", "BUILD_LIST"):
                items = _pop(stack, arg)
                text = ", ".join(items)
                stack.append(f"({text},)" if name == "BUILD_TUPLE" and arg == 1 else
                             f"({text})" if name == "BUILD_TUPLE" else f"[{text}]")
            elif name == "BUILD_MAP":
                items = _pop(stack, 2 * arg)
                stack.append("{" + ", ".join(f"{k}: {v}" for k, v in zip(items[::2], items[1::2])) + "}")
            elif name == "KW_NAMES":
                pending_kw = self.code.co_consts[arg] if isinstance(arg, int) else arg
            elif name in ("CALL", "CALL_KW"):
                if name == "CALL_KW":
                    pending_kw = ast.literal_eval(stack.pop())
                arguments = _pop(stack, arg)
                upper, lower = stack.pop(), stack.pop()
                callee, receiver = (lower, upper) if upper is NULL else (upper, lower) if lower is NULL else (lower, upper)
                if receiver is not NULL:
                    arguments.insert(0, receiver)
                split = len(arguments) - len(pending_kw)
                spelled = arguments[:split] + [f"{k}={v}" for k, v in zip(pending_kw, arguments[split:])]
                stack.append(f"{_operand(callee)}({', '.join(spelled)})")
                pending_kw = ()
            elif name == "CALL_FUNCTION_EX":
                kwargs = stack.pop() if arg & 1 else None
                args = stack.pop()
                callee = [s for s in (stack.pop(), stack.pop()) if s is not NULL][0]
                spelled = [f"*{_operand(args)}"] + ([f"**{_operand(kwargs)}"] if kwargs else [])
                stack.append(f"{_operand(callee)}({', '.join(spelled)})")
            elif name == "BINARY_OP":
                right, left = stack.pop(), stack.pop()
                stack.append(f"({left} {_BINARY[int(arg)]} {right})")
            elif name == "COMPARE_OP":
                right, left = stack.pop(), stack.pop()
                stack.append(f"({left} {_COMPARE[Compare(arg).name.removesuffix('_CAST')]} {right})")
            elif name == "POP_TOP":
                value = stack.pop()
                if value is not NULL:
                    statement(value)
            elif name == "COPY":
                value = stack[-arg]
                if value is not NULL and not value.isidentifier():
                    self.copies += 1
                    statement(f"__dl_copy{self.copies} = {value}")
                    value = stack[-arg] = f"__dl_copy{self.copies}"
                stack.append(value)
            elif name == "SWAP":
                stack[-1], stack[-arg] = stack[-arg], stack[-1]
            elif name == "STORE_ATTR":
                owner, value = stack.pop(), stack.pop()
                statement(f"{_operand(owner)}.{arg} = {value}")
            elif name == "STORE_SUBSCR":
                key, container, value = stack.pop(), stack.pop(), stack.pop()
                statement(f"{_operand(container)}[{key}] = {value}")
            elif name == "DELETE_SUBSCR":
                key, container = stack.pop(), stack.pop()
                statement(f"del {_operand(container)}[{key}]")
            elif name == "DELETE_ATTR":
                statement(f"del {_operand(stack.pop())}.{arg}")
            elif name == "RETURN_VALUE":
                statement(f"return {stack.pop()}")
                return lines
            elif name == "RAISE_VARARGS":
                statement("raise" if arg == 0 else f"raise {_pop(stack, arg)[0]}")
                return lines
            elif name.startswith("POP_JUMP_") and isinstance(arg, Label):
                test = name.rpartition("_IF_")[2]
                condition = stack.pop()
                statement(f"if {_JUMP_TEST[test].format(_operand(condition))}:")
                lines += self.block(instructions, instructions.index(arg), list(stack), indent + "    ")
            else:
                raise NotInVocabulary(name)
        return lines


def render(code: types.CodeType, break_reasons=()) -> Rewritten:
    """The Python spelling of the transformed ``code``.

    Args:
        code: a transformed code object (``TranslationReport.transformed_code``).
        break_reasons: the translation's BreakReasons; the statement running a break's
            line eagerly is annotated with its reason and ``file:line``.

    Example:
        >>> view = render(report.transformed_code, report.break_reasons)
        >>> exec(view.source, {**fn.__globals__, **view.bindings})
    """
    break_lines = {r.lineno: f"{r.reason} ({r.filename}:{r.lineno})" for r in break_reasons if r.lineno}
    reader = _Reader(code, break_lines)
    name = code.co_name if code.co_name.isidentifier() and not keyword.iskeyword(code.co_name) else "rewritten"
    arguments = ", ".join(code.co_varnames[:code.co_argcount])
    header = f"def {name}({arguments}):  # rewritten by dynamo_lite: {getattr(code, 'co_qualname', code.co_name)}"
    try:
        body = reader.block(list(Bytecode.from_code(code)), 0, [], "    ")
    except NotInVocabulary as exc:
        return Rewritten(f"# the rewritten code of {code.co_name} uses {exc}, which this view cannot spell\n")
    return Rewritten("\n".join([header, *body]) + "\n", reader.bindings)


def _pop(stack: list, count: int) -> list:
    items = stack[len(stack) - count:] if count else []
    del stack[len(stack) - count:]
    return items


def _operand(text: str) -> str:
    """``text`` safe to put before ``.attr``, ``[key]`` or ``(args)``."""
    if text.isidentifier() or text[-1:] in ")]" or "." in text and text.replace(".", "").isidentifier():
        return text
    return f"({text})"


def _is_literal(value) -> bool:
    if type(value) in (int, float, complex) and value == value and abs(value) != float("inf"):
        return True
    if type(value) in (str, bytes, bool, type(None)):
        return True
    return type(value) is tuple and all(_is_literal(v) for v in value)


def _binding_name(value, graphs: int) -> str:
    """``__resume_at_66_f`` for a function, ``__compiled_graph_<graphs>`` for a graph ..."""
    name = getattr(value, "__name__", None)
    if isinstance(value, types.FunctionType) and name and name.isidentifier():
        return name if name.startswith("__") else f"__{name}"
    if hasattr(value, "graph_module"):  # a compiled graph (AutogradAwareGraph)
        return f"__compiled_graph_{graphs}"
    if isinstance(value, type):
        return f"__{value.__name__}"
    return f"__const_{id(value):x}"
