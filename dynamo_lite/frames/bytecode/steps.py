"""What the emitter emitted, as structured steps (the decompiled view is written from them).

NOTE: [emitted steps] The transformed-code builder emits from a small vocabulary: load a
local, global, attribute or constant, subscript, build a container, call a constant (a
compiled graph, a resume function, a helper), store, replay a store, return. A graph
break adds original instructions that run eagerly (a call, an operator, a store) or one
conditional jump. As the builder emits, a ``StepRecorder`` keeps the Python expression
each stack slot holds and turns every store, discarded value, return and branch into a
``Step``, tagged with the phase that emitted it (``graph``: the graph call; ``rebuild``:
values rebuilt once; ``replay``: side effects; ``break``: the break's eager work and the
resume call; ``return``). The decompiled view (``decompiled.py``) renders the steps; it
never reads the finished instructions back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bytecode import Compare, Label

from . import compat

# -- expressions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """A local or global read by name."""

    id: str


@dataclass(frozen=True)
class Const:
    """A constant the code loads (named in the view when it has no literal spelling)."""

    value: object


@dataclass(frozen=True)
class Attr:
    base: object
    attr: str


@dataclass(frozen=True)
class Item:
    base: object
    key: object


@dataclass(frozen=True)
class Build:
    """A new container: ``kind`` is tuple, list, set or dict (items are key, value, ...)."""

    kind: type
    items: tuple


@dataclass(frozen=True)
class Call:
    """``fn(*args, **keywords)``; ``star``/``double_star`` are unpacked arguments."""

    fn: object
    args: tuple = ()
    keywords: tuple = ()  # (name, expression) pairs
    star: object = None
    double_star: object = None


@dataclass(frozen=True)
class Operation:
    """An operator applied to operands: ``template`` is ``"{} + {}"``, ``"not {}"`` ..."""

    template: str
    operands: tuple


NULL = Name("<NULL>")  # the NULL slot of a call: never spelled

# -- steps ---------------------------------------------------------------------------------


@dataclass
class Step:
    """One statement of the transformed code.

    Attributes:
        kind: ``assign`` (``target = value``), ``assign_global`` (the same, ``target`` a
            global), ``delete`` (``del target``), ``evaluate``
            (``value`` for its effect), ``return`` or ``branch`` (``if`` the
            ``test`` of ``value`` holds, run ``taken``, which ends by returning).
        phase: what emitted it (see NOTE: [emitted steps]).
    """

    kind: str
    phase: str
    value: object = None
    target: object = None
    test: str = "{}"
    taken: list = field(default_factory=list)


# How a conditional jump's test reads when the jump is taken (CONDITIONAL_JUMPS' second column).
_JUMP_TESTS = {"truthy": "{}", "falsy": "not {}", "none": "{} is None", "not_none": "{} is not None"}
_COMPARISONS = {"LT": "{} < {}", "LE": "{} <= {}", "EQ": "{} == {}", "NE": "{} != {}", "GT": "{} > {}", "GE": "{} >= {}"}
_UNARY = {"UNARY_NEGATIVE": "-{}", "UNARY_INVERT": "~{}", "UNARY_NOT": "not {}"}
_CONVERSIONS = {0: None, 1: "str", 2: "repr", 3: "ascii"}  # FORMAT_VALUE's low bits


class StepRecorder:
    """Follows the emitted code with an expression per stack slot and records its steps.

    Example:
        >>> recorder = StepRecorder()
        >>> recorder.push(Name("x")); recorder.store("y")
        >>> recorder.steps[0].kind, recorder.steps[0].target
        ('assign', Name(id='y'))
    """

    def __init__(self):
        self.steps: list = []
        self.phase = "graph"
        self.failure: str | None = None  # why recording stopped (the view then says so), if it did
        self.stack: list = []
        self._block = self.steps  # where the next step goes (inside a branch: its taken side)
        self._pending_branches: dict = {}  # Label -> (branch step, the stack at the jump)
        self._keywords: tuple = ()  # KW_NAMES waiting for its CALL
        self._unpacked = 0

    # -- the stack ---------------------------------------------------------------------------
    def push(self, expression) -> None:
        self.stack.append(expression)

    def pop(self):
        return self.stack.pop()

    def pop_many(self, count: int) -> tuple:
        items = tuple(self.stack[len(self.stack) - count:]) if count else ()
        del self.stack[len(self.stack) - count:]
        return items

    def add(self, kind: str, **fields) -> Step:
        step = Step(kind, self.phase, **fields)
        self._block.append(step)
        return step

    # -- the builder's vocabulary ------------------------------------------------------------
    def store(self, name: str) -> None:
        self.add("assign", target=Name(name), value=self.pop())

    def call(self, fn, nargs: int) -> None:
        self.push(Call(Const(fn), self.pop_many(nargs)))

    def call_pushed(self, nargs: int) -> None:
        """A call of the value below its ``nargs`` arguments (a function made at run time)."""
        args = self.pop_many(nargs)
        self.push(Call(self.pop(), args))

    def label(self, label: Label) -> None:
        """The taken side of a branch starts here: its steps go into the branch."""
        step, stack = self._pending_branches.pop(label)
        self.stack = stack
        self._block = step.taken

    def instruction(self, name: str, arg) -> None:
        """An instruction emitted as such: a store or return of the builder, or an original
        instruction a graph break runs eagerly."""
        INSTRUCTIONS[name](self, arg)

    # -- original instructions ---------------------------------------------------------------
    def _call(self, nargs: int, keywords: tuple = ()) -> None:
        arguments = list(self.pop_many(nargs))
        upper, lower = self.pop(), self.pop()
        # [NULL, callable] (3.11, 3.12), [callable, NULL] (3.13), or [callable, self] (all)
        if upper is NULL or lower is NULL:
            callee = lower if upper is NULL else upper
        else:
            callee = lower
            arguments.insert(0, upper)
        split = len(arguments) - len(keywords)
        self.push(Call(callee, tuple(arguments[:split]), tuple(zip(keywords, arguments[split:]))))

    def _keep_keywords(self, names) -> None:
        self._keywords = tuple(names)

    def _call_instruction(self, nargs: int) -> None:
        keywords, self._keywords = self._keywords, ()
        self._call(nargs, keywords)

    def _call_kw(self, nargs: int) -> None:
        self._call(nargs, self.pop().value)

    def _call_function_ex(self, flags: int) -> None:
        double_star = self.pop() if flags & 1 else None
        star = self.pop()
        callee = [slot for slot in (self.pop(), self.pop()) if slot is not NULL][0]
        self.push(Call(callee, star=star, double_star=double_star))

    def _operation(self, template: str, count: int) -> None:
        self.push(Operation(template, self.pop_many(count)))

    def _binary_op(self, arg: int) -> None:
        symbol, function = compat.BINARY_OPERATORS[int(arg)]
        if symbol.endswith("="):  # an in-place operator is a statement in Python: call it
            self.push(Call(Const(function), self.pop_many(2)))
        else:
            self._operation("{} " + symbol + " {}", 2)

    def _format(self, arg: int) -> None:
        spec = (self.pop(),) if arg & 0x04 else ()
        value = self.pop()
        conversion = _CONVERSIONS[arg & 0x03]
        if conversion is not None:
            value = Call(Name(conversion), (value,))
        self.push(Call(Name("format"), (value, *spec)))

    def _unpack(self, count: int) -> None:
        names = tuple(Name(f"__dl_item{self._unpacked + i}") for i in range(count))
        self._unpacked += count
        self.add("assign", target=Build(tuple, names), value=self.pop())
        self.stack.extend(reversed(names))  # the first item on top

    def _jump(self, name: str, label: Label) -> None:
        mode, when = compat.CONDITIONAL_JUMPS[name]
        condition = self.stack[-1] if mode == "keep_if_jump" else self.pop()
        kept = list(self.stack)
        if mode == "keep_if_jump":
            self.pop()
        step = self.add("branch", value=condition, test=_JUMP_TESTS[when])
        self._pending_branches[label] = (step, kept)

    def _store_subscr(self, _arg) -> None:
        key, container, value = self.pop(), self.pop(), self.pop()
        self.add("assign", target=Item(container, key), value=value)

    def _store_attr(self, attr: str) -> None:
        owner, value = self.pop(), self.pop()
        self.add("assign", target=Attr(owner, attr), value=value)

    def _delete_subscr(self, _arg) -> None:
        key, container = self.pop(), self.pop()
        self.add("delete", target=Item(container, key))

    def _before_with(self, _arg) -> None:
        manager = self.pop()
        self.push(Attr(manager, "__exit__"))
        self.push(Call(Attr(manager, "__enter__"), ()))

    def _pop_top(self, _arg) -> None:
        value = self.pop()
        if value is not NULL:
            self.add("evaluate", value=value)


#: Instructions emitted as such, by name -> what they do to the recorder's stack and steps.
INSTRUCTIONS = {
    "CALL": StepRecorder._call_instruction,
    "CALL_KW": StepRecorder._call_kw,
    "CALL_FUNCTION_EX": StepRecorder._call_function_ex,
    "KW_NAMES": StepRecorder._keep_keywords,
    "PRECALL": lambda recorder, arg: None,
    "TO_BOOL": lambda recorder, arg: None,
    "PUSH_NULL": lambda recorder, arg: recorder.push(NULL),
    "BINARY_OP": StepRecorder._binary_op,
    "BINARY_SUBSCR": lambda recorder, arg: recorder.push(Item(*recorder.pop_many(2))),
    "COMPARE_OP": lambda recorder, arg: recorder._operation(_COMPARISONS[Compare(arg).name.removesuffix("_CAST")], 2),
    "CONTAINS_OP": lambda recorder, arg: recorder._operation("{} not in {}" if arg else "{} in {}", 2),
    **{name: lambda recorder, arg, template=template: recorder._operation(template, 1)
       for name, template in _UNARY.items()},
    "FORMAT_SIMPLE": lambda recorder, arg: recorder._format(0),
    "FORMAT_WITH_SPEC": lambda recorder, arg: recorder._format(0x04),
    "FORMAT_VALUE": StepRecorder._format,
    "GET_ITER": lambda recorder, arg: recorder.push(Call(Name("iter"), (recorder.pop(),))),
    "UNPACK_SEQUENCE": StepRecorder._unpack,
    "BEFORE_WITH": StepRecorder._before_with,
    "BUILD_SET": lambda recorder, count: recorder.push(Build(set, recorder.pop_many(count))),
    "STORE_ATTR": StepRecorder._store_attr,
    "STORE_SUBSCR": StepRecorder._store_subscr,
    "STORE_GLOBAL": lambda recorder, name: recorder.add("assign_global", target=Name(name), value=recorder.pop()),
    "DELETE_ATTR": lambda recorder, attr: recorder.add("delete", target=Attr(recorder.pop(), attr)),
    "DELETE_SUBSCR": StepRecorder._delete_subscr,
    "POP_TOP": StepRecorder._pop_top,
    "RETURN_VALUE": lambda recorder, arg: recorder.add("return", value=recorder.pop()),
    **{name: lambda recorder, label, name=name: recorder._jump(name, label) for name in compat.CONDITIONAL_JUMPS},
}
