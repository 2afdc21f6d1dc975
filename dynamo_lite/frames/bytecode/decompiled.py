"""The rewritten code of a frame as readable Python source, written from the emitter's steps.

The builder of the transformed code records what it emits as steps (NOTE: [emitted
steps] in steps.py): the graph call, values rebuilt once, side effects replayed, the
break's eager work and the resume call, the return. This module spells each step as one
Python statement; nothing is read back from the finished instructions.

Constants that have no literal spelling (compiled graphs, resume functions, helpers) are
named (``__compiled_graph_0``, ``__resume_at_66_f``) and returned as bindings, so that
``exec(source, {**f_globals, **bindings})`` defines a function that does what the
rewritten code does.
"""
from __future__ import annotations

import keyword
import types
from dataclasses import dataclass, field

from .steps import Attr, Build, Call, Const, Item, Name, Operation

_PHASE_COMMENTS = {"rebuild": "values rebuilt once, before the replay", "replay": "side effects replayed"}


@dataclass
class Rewritten:
    """The Python spelling of one transformed code object.

    Attributes:
        source: ``def name(args): ...``; compiles with ``compile(source, "<rewritten>", "exec")``.
        bindings: names the source uses for constants -> the objects.
    """

    source: str
    bindings: dict = field(default_factory=dict)


class _Speller:
    """Spells expressions, naming the constants it meets (``bindings``)."""

    def __init__(self):
        self.bindings: dict = {}
        self.named: dict = {}  # id(constant) -> its name
        self.graphs = 0

    def constant(self, value) -> str:
        if _is_literal(value):
            return repr(value)
        name = self.named.get(id(value))
        if name is None:
            name = _binding_name(value, self.graphs)
            self.graphs += name.startswith("__compiled_graph")
            while name in self.bindings:
                name += "_"
            self.named[id(value)] = name
            self.bindings[name] = value
        return name

    def spell(self, expression) -> str:
        return _SPELLINGS[type(expression)](self, expression)

    def operand(self, expression) -> str:
        """``expression`` safe to put before ``.attr``, ``[key]`` or ``(args)``."""
        text = self.spell(expression)
        return text if not isinstance(expression, Const) or text.isidentifier() else f"({text})"

    def key(self, expression) -> str:
        value = getattr(expression, "value", None)
        if isinstance(expression, Const) and type(value) is slice and all(map(_is_literal, (value.start, value.stop, value.step))):
            parts = ["" if part is None else repr(part) for part in (value.start, value.stop, value.step)]
            return ":".join(parts[:2] if value.step is None else parts)
        return self.spell(expression)

    def call(self, call: Call) -> str:
        arguments = [self.spell(a) for a in call.args] + [f"{k}={self.spell(v)}" for k, v in call.keywords]
        if call.star is not None:
            arguments.append(f"*{self.operand(call.star)}")
        if call.double_star is not None:
            arguments.append(f"**{self.operand(call.double_star)}")
        return f"{self.operand(call.fn)}({', '.join(arguments)})"

    def build(self, build: Build) -> str:
        items = [self.spell(item) for item in build.items]
        if build.kind is dict:
            return "{" + ", ".join(f"{k}: {v}" for k, v in zip(items[::2], items[1::2])) + "}"
        if build.kind is set:
            return "{" + ", ".join(items) + "}" if items else "set()"
        if build.kind is list:
            return f"[{', '.join(items)}]"
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


_SPELLINGS = {
    Name: lambda speller, e: e.id,
    Const: lambda speller, e: speller.constant(e.value),
    Attr: lambda speller, e: f"{speller.operand(e.base)}.{e.attr}",
    Item: lambda speller, e: f"{speller.operand(e.base)}[{speller.key(e.key)}]",
    Build: _Speller.build,
    Call: _Speller.call,
    Operation: lambda speller, e: "(" + e.template.format(*(speller.spell(o) for o in e.operands)) + ")",
}

# Step kind -> its statement (a branch is spelled by _statements itself).
_STATEMENTS = {
    "assign": lambda s, step: f"{s.spell(step.target)} = {s.spell(step.value)}",
    "assign_global": lambda s, step: f"{s.spell(step.target)} = {s.spell(step.value)}",
    "delete": lambda s, step: f"del {s.spell(step.target)}",
    "evaluate": lambda s, step: s.spell(step.value),
    "return": lambda s, step: f"return {s.spell(step.value)}",
    "branch": lambda s, step: f"if {step.test.format(s.operand(step.value))}:",
}


def _statements(speller: _Speller, steps: list, indent: str, notes: dict) -> list:
    """The lines of ``steps``; ``notes['break']`` goes on the first statement of the break."""
    lines, phase = [], None
    for step in steps:
        if step.phase != phase and step.phase in _PHASE_COMMENTS:
            lines.append(f"{indent}# {_PHASE_COMMENTS[step.phase]}")
        phase = step.phase
        text = indent + _STATEMENTS[step.kind](speller, step)
        note = notes.pop("break", None) if step.phase == "break" else None
        lines.append(text + (f"  # graph break: {note}" if note else ""))
        if step.kind == "branch":
            lines += _statements(speller, step.taken, indent + "    ", notes)
    return lines


def _globals_assigned(steps: list) -> list:
    names, pending = [], list(steps)
    while pending:
        step = pending.pop(0)
        if step.kind == "assign_global" and step.target.id not in names:
            names.append(step.target.id)
        pending.extend(step.taken)
    return names


def render(code: types.CodeType, emitted, break_reasons=()) -> Rewritten:
    """The Python spelling of the transformed ``code`` from the steps that emitted it.

    Args:
        code: a transformed code object (``TranslationReport.transformed_code``): its name
            and arguments make the ``def`` line.
        emitted: the steps its builder recorded (``TranslationReport.emitted``).
        break_reasons: the translation's BreakReasons; the first statement of the break's
            eager work (or its resume call) is annotated with the reason and ``file:line``.

    Example:
        >>> view = render(report.transformed_code, report.emitted, report.break_reasons)
        >>> exec(view.source, {**fn.__globals__, **view.bindings})
    """
    name = code.co_name if code.co_name.isidentifier() and not keyword.iskeyword(code.co_name) else "rewritten"
    if emitted is None or emitted.failure is not None:
        why = emitted.failure if emitted is not None else "no steps were recorded"
        return Rewritten(f"# the rewritten code of {name} cannot be spelled as Python ({why})\n")
    arguments = ", ".join(code.co_varnames[:code.co_argcount])
    header = f"def {name}({arguments}):  # rewritten by dynamo_lite: {getattr(code, 'co_qualname', code.co_name)}"
    notes = {"break": f"{r.reason} ({r.filename}:{r.lineno})" for r in break_reasons[:1] if r.lineno}
    speller = _Speller()
    body = _statements(speller, emitted.steps, "    ", notes)
    declared = _globals_assigned(emitted.steps)
    if declared:
        body.insert(0, f"    global {', '.join(declared)}")
    return Rewritten("\n".join([header, *body]) + "\n", speller.bindings)


def _is_literal(value) -> bool:
    if type(value) in (int, float, complex) and value == value and abs(value) != float("inf"):
        return True
    if type(value) in (str, bytes, bool, type(None)):
        return True
    return type(value) is tuple and all(_is_literal(v) for v in value)


def _binding_name(value, graphs: int) -> str:
    """``__resume_at_66_f`` for a function, ``__compiled_graph_<graphs>`` for a graph ..."""
    if hasattr(value, "graph_module"):  # a compiled graph (AutogradAwareGraph)
        return f"__compiled_graph_{graphs}"
    name = getattr(value, "__name__", None)
    if isinstance(name, str) and name.isidentifier():  # functions, builtins, classes
        return name if name.startswith("__") else f"__{name.lstrip('_')}"
    return f"__const_{id(value):x}"
