"""Guards: checks on a call's inputs that decide whether a cache entry applies."""
from __future__ import annotations

import builtins
import reprlib
import types
from dataclasses import dataclass

from ...nn.module import Module
from ...nn.versioning import REBINDS
from ...optim.optimizer import Optimizer
from ...tensor.tensor import Tensor
from . import guard_tree
from .shape_guards import FRAME_VALUES
from .sources import Source, local_identifier

# Guard kinds, in the order a person reads them.
TYPE_MATCH = "TYPE_MATCH"
ID_MATCH = "ID_MATCH"
CONSTANT_MATCH = "CONSTANT_MATCH"
TENSOR_MATCH = "TENSOR_MATCH"
LENGTH_MATCH = "LENGTH_MATCH"
DICT_KEYS = "DICT_KEYS"
ID_MATCH_SOURCE = "ID_MATCH_SOURCE"  # two sources hold the same object (aliased inputs)
DISTINCT_SOURCE = "DISTINCT_SOURCE"  # two sources hold different objects (identity the trace relied on)
REQUIRES_GRAD = "REQUIRES_GRAD"  # compiled training differentiates exactly these tensors
SHAPE_ENV = "SHAPE_ENV"  # symbolic sizes: see NOTE: [symbolic inputs] in shape_guards.py


@dataclass(eq=False)
class Guard:
    """One check on one source: ``kind`` says what, ``expected`` what it must be."""

    source: Source
    kind: str
    expected: object
    why: str = ""  # what made the trace depend on it, when that is not plain (shown in explain)

    def key(self) -> tuple:
        return (self.source.expr(), self.kind)

    def text(self) -> str:
        text = _KINDS[self.kind].text(self.source.name(), self.expected)
        return f"{text}  # {self.why}" if self.why else text


def tensor_key(t) -> tuple:
    """What a TENSOR_MATCH guard compares: type, dtype, device, sizes and strides."""
    dev = t._storage.device
    return (type(t), t._dtype, dev.type, dev.index, t._sizes, t._strides)


def describe_object(obj) -> str:
    """A short readable name for an object a guard compares by identity."""
    if isinstance(obj, type):
        return f"<class {obj.__qualname__}>"
    if isinstance(obj, types.ModuleType):
        return f"<module {obj.__name__}>"
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        return f"<function {obj.__qualname__}>"
    if type(obj).__module__ in ("dynamo_lite.tensor.dtype", "dynamo_lite.tensor.device"):
        return repr(obj)
    if isinstance(obj, Tensor):
        return f"<{_ShortRepr.tensor(obj)} at {id(obj):#x}>"
    return f"<{type(obj).__name__} at {id(obj):#x}>"


class _ShortRepr(reprlib.Repr):
    """Reprs for guard failures: tensors by type, dtype and shape, never by their data;
    containers and strings cut short."""

    def __init__(self):
        super().__init__()
        self.maxlevel, self.maxdict, self.maxlist, self.maxtuple, self.maxset = 2, 3, 4, 4, 4
        self.maxstring = self.maxother = self.maxlong = 40

    @staticmethod
    def tensor(t) -> str:
        return f"{type(t).__name__}(dtype={t.dtype.name}, shape={list(t.shape)})"

    def repr1(self, x, level):
        if isinstance(x, Tensor):
            return self.tensor(x)
        base = next((b for b in (dict, list, tuple, set) if isinstance(x, b)), None)
        if base is not None and type(x) is not base and not hasattr(x, "_fields"):  # (a subclass: its items too)
            return f"{type(x).__name__}({getattr(self, 'repr_' + base.__name__)(x, level)})"
        return super().repr1(x, level)


_SHORT_REPR = _ShortRepr()
SHORT_REPR_LIMIT = 80  # characters of one value in a guard failure


def short_repr(value) -> str:
    """One line of at most ``SHORT_REPR_LIMIT`` characters showing ``value`` in a guard failure."""
    text = " ".join(_SHORT_REPR.repr(value).split())
    return text if len(text) <= SHORT_REPR_LIMIT else text[:SHORT_REPR_LIMIT - 3] + "..."


class GuardSet:
    """The guards of one cache entry, deduplicated and in creation order.

    It also notes the version tag of each module when its identity is first guarded
    (before tracing reads any of its members) and the Parameter rebind count when the
    set was made: if they are unchanged when the guards are compiled, everything read
    below those modules is known to hold then (see NOTE: [guard tree]).
    """

    def __init__(self):
        self._guards: dict = {}
        self._module_tags: dict = {"rebinds": REBINDS.count}

    def add(self, source: Source, kind: str, expected, why: str = "") -> None:
        guard = Guard(source, kind, expected, why)
        self._guards.setdefault(guard.key(), guard)
        if kind == ID_MATCH and isinstance(expected, (Module, Optimizer)):
            self._module_tags.setdefault(id(expected), guard_tree.current_tag(expected))

    def validated_tags(self) -> dict:
        """``id(module) -> tag`` noted when first guarded, and ``"rebinds"``; empty if a rebind happened since."""
        return self._module_tags if self._module_tags["rebinds"] == REBINDS.count else {}

    def __iter__(self):
        return iter(self._guards.values())

    def __len__(self) -> int:
        return len(self._guards)

    def text(self) -> str:
        return "\n".join(g.text() for g in self)


@dataclass
class CompiledGuards:
    """The guard function of an entry plus its slow path that explains a failure."""

    check: object
    describe_failure: object
    source_code: str


def compile_guards(guards: GuardSet, names: tuple, f_globals: dict, values: tuple | None = None) -> CompiledGuards:
    """Compile the guards into one function ``check(values) -> bool`` (see NOTE: [guard tree]).

    Args:
        guards: the entry's guards.
        names: the frame's argument and free-variable names (``check`` unpacks its
            ``values`` into locals of these names).
        f_globals: the frame's globals (``GlobalSource``).
        values: the values the guards were made for: with them, module members are read
            directly and module subtrees are guarded by version tags.
    """
    constants = {"__dl_G": f_globals, "__dl_B": builtins.__dict__}
    for guard in guards:
        constants.update(guard.source.constants())
        for other in _KINDS[guard.kind].sources(guard.expected):
            constants.update(other.constants())
    roots, nodes = guard_tree.build(guards, names, values, f_globals, _KINDS)
    program = guard_tree.generate(roots, nodes, list(guards), names, _KINDS, constants, guards.validated_tags())
    guard_tree.dismantle(nodes)  # parent/child links are a cycle holding the frame's values
    check = program.compile()

    def describe_failure(values) -> str | None:
        local_ns = dict(zip(map(local_identifier, names), values))
        local_ns[FRAME_VALUES] = dict(local_ns)  # what the SHAPE_ENV guard explains from
        for guard in guards:
            try:
                actual = eval(guard.source.expr(), constants, local_ns)
            except Exception as exc:
                return f"{guard.source.name()}: could not be read ({type(exc).__name__}: {exc})"
            expected = guard.expected
            if guard.kind in (ID_MATCH_SOURCE, DISTINCT_SOURCE):  # compared with another source's current value
                expected = eval(expected.expr(), constants, local_ns)
            words = _KINDS[guard.kind].explain(guard.source.name(), actual, expected, guard.expected)
            if words is not None:
                return words
        return None

    return CompiledGuards(check, describe_failure, program.source)


def _tensor_code(e: str, expected, const) -> str:
    t, dtype, dev_type, dev_index, sizes, strides = expected
    dev = f"{e}._storage.device.type == {dev_type!r}"
    if dev_index is not None:
        dev = f"({e}._storage.device.type, {e}._storage.device.index) == ({dev_type!r}, {dev_index})"
    return (f"(type({e}) is {const(t)} and {e}._dtype is {const(dtype)} and {_geometry_code(e, '_sizes', sizes)} "
            f"and {_geometry_code(e, '_strides', strides)} and {dev})")


def _geometry_code(e: str, attr: str, values: tuple) -> str:
    """Sizes or strides compared whole, or per static entry when some are symbolic (str)."""
    if not any(isinstance(v, str) for v in values):
        return f"{e}.{attr} == {values!r}"
    checks = [f"len({e}.{attr}) == {len(values)}"]
    checks += [f"{e}.{attr}[{i}] == {v}" for i, v in enumerate(values) if not isinstance(v, str)]
    return " and ".join(checks)


def _shown(values: tuple) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _unless(holds: bool, words: str) -> str | None:
    return None if holds else words


def _no_sources(expected) -> tuple:
    return ()


@dataclass(frozen=True)
class GuardKind:
    """How one kind of guard is checked, shown and explained; one entry of ``_KINDS``.

    Attributes:
        code: ``code(e, expected, name)``: a Python expression that is true when the
            guard holds, over ``e`` (the local holding the source's value); ``name(value)``
            names a constant, ``name.load(source)`` the local of another source.
        text: ``text(name, expected)``: the guard for people.
        explain: ``explain(name, actual, expected, recorded)``: None when it holds, else
            why not, in words.
        coverage: whether a module's version tag can vouch for it (NOTE: [guard tree]):
            ``"value"`` (identity, type, constant value of a module member), ``"structure"``
            (length/keys of a module container or table) or None (checked on every call).
        sources: ``sources(expected)``: other sources the check reads.
    """

    code: object
    text: object
    explain: object
    coverage: str | None = None
    sources: object = _no_sources


_KINDS = {
    TYPE_MATCH: GuardKind(
        lambda e, t, const: f"type({e}) is {const(t)}",
        lambda name, t: f"type({name}) is {t.__qualname__}",
        lambda name, actual, t, _: _unless(
            type(actual) is t, f"type({name}): expected {t.__qualname__}, got {type(actual).__qualname__}"),
        coverage="value",
    ),
    ID_MATCH: GuardKind(
        lambda e, obj, const: f"{e} is {const(obj)}",
        lambda name, obj: f"{name} is {describe_object(obj)}",
        lambda name, actual, obj, _: _unless(actual is obj, (
            f"{name}: expected the same object as when compiled, {describe_object(obj)}, "
            f"got {describe_object(actual)}")),
        coverage="value",
    ),
    CONSTANT_MATCH: GuardKind(
        lambda e, v, const: f"(type({e}) is {const(type(v))} and {e} == {const(v)})",
        lambda name, v: f"{name} == {v!r}",
        lambda name, actual, v, _: _unless(
            type(actual) is type(v) and actual == v, f"{name}: expected {short_repr(v)}, got {short_repr(actual)}"),
        coverage="value",
    ),
    TENSOR_MATCH: GuardKind(
        _tensor_code,
        lambda name, k: (
            f"{name}: Tensor dtype={k[1].name} device={k[2]}{'' if k[3] is None else ':' + str(k[3])} "
            f"shape={_shown(k[4])} stride={_shown(k[5])}"),
        lambda name, actual, key, _: _explain_tensor(name, actual, key),
        coverage="value",  # a module member's geometry changes only by a counted rebind
    ),
    LENGTH_MATCH: GuardKind(
        lambda e, n, const: f"len({e}) == {n}",
        lambda name, n: f"len({name}) == {n}",
        lambda name, actual, n, _: _unless(len(actual) == n, f"len({name}): expected {n}, got {len(actual)}"),
        coverage="structure",
    ),
    DICT_KEYS: GuardKind(
        lambda e, keys, const: f"list({e}) == {const(list(keys))}",
        lambda name, keys: f"list({name}.keys()) == {list(keys)!r}",
        lambda name, actual, keys, _: _unless(list(actual) == list(keys), _explain_keys(name, list(actual), list(keys))),
        coverage="structure",
    ),
    SHAPE_ENV: GuardKind(  # expected: a ShapeGuard (frames/tracing/shape_guards.py)
        lambda e, shape_guard, const: shape_guard.code(),
        lambda name, shape_guard: shape_guard.text(),
        lambda name, frame_values, shape_guard, _: shape_guard.explain(frame_values),
    ),
    REQUIRES_GRAD: GuardKind(
        lambda e, flag, const: f"{e}._requires_grad is {flag}",
        lambda name, flag: f"{name}.requires_grad == {flag}",
        lambda name, actual, flag, _: _unless(
            actual._requires_grad is flag, f"{name}.requires_grad: expected {flag}, got {actual._requires_grad}"),
        coverage="value",  # a flip is counted as a rebind (tensor/rebinds.py)
    ),
    ID_MATCH_SOURCE: GuardKind(
        lambda e, other, name: f"{e} is {name.load(other)}",
        lambda name, other: f"{name} is {other.name()}",
        lambda name, actual, other_value, other: _unless(
            actual is other_value, f"{name}: expected the same object as {other.name()} (aliased when compiled)"),
        coverage="value",
        sources=lambda other: (other,),
    ),
    DISTINCT_SOURCE: GuardKind(
        lambda e, other, name: f"{e} is not {name.load(other)}",
        lambda name, other: f"{name} is not {other.name()}",
        lambda name, actual, other_value, other: _unless(
            actual is not other_value, f"{name}: expected a different object from {other.name()} (distinct when "
                                       "compiled)"),
        sources=lambda other: (other,),
    ),
}


def _explain_keys(name: str, actual: list, expected: list) -> str:
    """The first key that differs, or the keys one list has beyond the other: never both lists."""
    for i, (a, e) in enumerate(zip(actual, expected)):
        if a != e:
            return f"{name}.keys()[{i}]: expected {short_repr(e)}, got {short_repr(a)}"
    common = min(len(actual), len(expected))
    which, extra = ("more", actual[common:]) if len(actual) > common else ("missing", expected[common:])
    return f"{name}.keys(): expected {len(expected)} keys, got {len(actual)} ({which}: {short_repr(extra)})"


def _explain_tensor(name: str, t, expected) -> str | None:
    exp_type, dtype, dev_type, dev_index, sizes, strides = expected
    if type(t) is not exp_type:
        return f"type({name}): expected {exp_type.__qualname__}, got {type(t).__qualname__}"
    if t._dtype is not dtype:
        return f"{name}.dtype: expected {dtype.name}, got {t._dtype.name}"
    dev = t._storage.device
    if (dev.type, dev.index) != (dev_type, dev_index):
        want = dev_type if dev_index is None else f"{dev_type}:{dev_index}"
        return f"{name}.device: expected {want}, got {dev}"
    if len(t._sizes) != len(sizes):
        return f"{name}.ndim: expected {len(sizes)}, got {len(t._sizes)}"
    for i, (a, b) in enumerate(zip(sizes, t._sizes)):
        if a != b and not isinstance(a, str):  # a symbolic size (str) is the shape guard's
            return f"{name}.shape[{i}]: expected {a}, got {b}"
    for i, (a, b) in enumerate(zip(strides, t._strides)):
        if a != b and not isinstance(a, str):
            return f"{name}.stride()[{i}]: expected {a}, got {b} (memory layout changed)"
    return None
