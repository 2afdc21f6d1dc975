"""Guards: checks on a call's inputs that decide whether a cache entry applies."""
from __future__ import annotations

import builtins
import types
from dataclasses import dataclass, field

from ..tensor.dtype import DEFAULT as DEFAULT_DTYPE
from .sources import Source

# Guard kinds, in the order a person reads them.
TYPE_MATCH = "TYPE_MATCH"
ID_MATCH = "ID_MATCH"
CONSTANT_MATCH = "CONSTANT_MATCH"
TENSOR_MATCH = "TENSOR_MATCH"
LENGTH_MATCH = "LENGTH_MATCH"
DICT_KEYS = "DICT_KEYS"
ID_MATCH_SOURCE = "ID_MATCH_SOURCE"  # two sources hold the same object (aliased inputs)


@dataclass(eq=False)
class Guard:
    """One check on one source: ``kind`` says what, ``expected`` what it must be."""

    source: Source
    kind: str
    expected: object

    def key(self) -> tuple:
        return (self.source.expr(), self.kind)

    def text(self) -> str:
        return _TEXT[self.kind](self.source.name(), self.expected)


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
    return f"<{type(obj).__name__} at {id(obj):#x}>"


_TEXT = {
    TYPE_MATCH: lambda name, t: f"type({name}) is {t.__qualname__}",
    ID_MATCH: lambda name, obj: f"{name} is {describe_object(obj)}",
    CONSTANT_MATCH: lambda name, v: f"{name} == {v!r}",
    TENSOR_MATCH: lambda name, k: (
        f"{name}: Tensor dtype={k[1].name} device={k[2]}{'' if k[3] is None else ':' + str(k[3])} "
        f"shape={list(k[4])} stride={list(k[5])}"
    ),
    LENGTH_MATCH: lambda name, n: f"len({name}) == {n}",
    DICT_KEYS: lambda name, keys: f"list({name}.keys()) == {list(keys)!r}",
    ID_MATCH_SOURCE: lambda name, other: f"{name} is {other.name()}",
}


class GuardSet:
    """The guards of one cache entry, deduplicated and in creation order."""

    def __init__(self):
        self._guards: dict = {}

    def add(self, source: Source, kind: str, expected) -> None:
        guard = Guard(source, kind, expected)
        self._guards.setdefault(guard.key(), guard)

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
    constants: dict = field(default_factory=dict)


def compile_guards(guards: GuardSet, names: tuple, f_globals: dict) -> CompiledGuards:
    """Compile every guard into one Python function ``check(values) -> bool``."""
    constants: dict = {}
    clauses = []
    for guard in guards:
        clauses.append(_clause(guard, constants))
        constants.update(guard.source.constants())
        if isinstance(guard.expected, Source):
            constants.update(guard.expected.constants())
    unpack = f"    {', '.join(names)}{',' if len(names) == 1 else ''} = __dl_values\n" if names else ""
    body = " and ".join(clauses) if clauses else "True"
    source = (
        "def check(__dl_values):\n"
        f"{unpack}"
        "    try:\n"
        f"        return {body}\n"
        "    except Exception:\n"
        "        return False\n"
    )
    namespace = {"__dl_G": f_globals, "__dl_B": builtins.__dict__, "__dl_DEFAULT_DTYPE": DEFAULT_DTYPE, **constants}
    exec(compile(source, "<dynamo_lite guards>", "exec"), namespace)
    check = namespace["check"]

    def describe_failure(values) -> str | None:
        local_ns = dict(zip(names, values))
        for guard in guards:
            try:
                actual = eval(guard.source.expr(), namespace, local_ns)
            except Exception as exc:
                return f"{guard.source.name()}: could not be read ({type(exc).__name__}: {exc})"
            if guard.kind == ID_MATCH_SOURCE:
                other = eval(guard.expected.expr(), namespace, local_ns)
                words = None if actual is other else (
                    f"{guard.source.name()}: expected the same object as {guard.expected.name()} (aliased when compiled)"
                )
            else:
                words = _explain(guard, actual)
            if words is not None:
                return words
        return None

    return CompiledGuards(check, describe_failure, source, constants)


def _constant_name(constants: dict, value) -> str:
    name = f"__dl_c{len(constants)}"
    constants[name] = value
    return name


def _clause(guard: Guard, constants: dict) -> str:
    e = guard.source.expr()
    kind, expected = guard.kind, guard.expected
    if kind == TYPE_MATCH:
        return f"type({e}) is {_constant_name(constants, expected)}"
    if kind == ID_MATCH:
        return f"{e} is {_constant_name(constants, expected)}"
    if kind == CONSTANT_MATCH:
        return f"(type({e}) is {_constant_name(constants, type(expected))} and {e} == {_constant_name(constants, expected)})"
    if kind == LENGTH_MATCH:
        return f"len({e}) == {expected}"
    if kind == ID_MATCH_SOURCE:
        return f"{e} is {expected.expr()}"
    if kind == DICT_KEYS:
        return f"list({e}) == {_constant_name(constants, list(expected))}"
    if kind == TENSOR_MATCH:
        t, dtype, dev_type, dev_index, sizes, strides = expected
        tname = _constant_name(constants, t)
        dname = _constant_name(constants, dtype)
        dev = f"{e}._storage.device.type == {dev_type!r}"
        if dev_index is not None:
            dev = f"({e}._storage.device.type, {e}._storage.device.index) == ({dev_type!r}, {dev_index})"
        return f"(type({e}) is {tname} and {e}._dtype is {dname} and {e}._sizes == {sizes!r} and {e}._strides == {strides!r} and {dev})"
    raise ValueError(f"unknown guard kind {kind}")


def _explain(guard: Guard, actual) -> str | None:
    """Words for a failing guard, or None if it holds for ``actual``."""
    name, kind, expected = guard.source.name(), guard.kind, guard.expected
    if kind == TYPE_MATCH:
        return None if type(actual) is expected else f"type({name}): expected {expected.__qualname__}, got {type(actual).__qualname__}"
    if kind == ID_MATCH:
        return None if actual is expected else f"{name}: expected the same object as when compiled ({type(expected).__name__} at {id(expected):#x}), got {type(actual).__name__} at {id(actual):#x}"
    if kind == CONSTANT_MATCH:
        same = type(actual) is type(expected) and actual == expected
        return None if same else f"{name}: expected {expected!r}, got {actual!r}"
    if kind == LENGTH_MATCH:
        return None if len(actual) == expected else f"len({name}): expected {expected}, got {len(actual)}"
    if kind == DICT_KEYS:
        return None if list(actual) == list(expected) else f"{name}.keys(): expected {list(expected)!r}, got {list(actual)!r}"
    if kind == TENSOR_MATCH:
        return _explain_tensor(name, actual, expected)
    return None


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
        if a != b:
            return f"{name}.shape[{i}]: expected {a}, got {b}"
    for i, (a, b) in enumerate(zip(strides, t._strides)):
        if a != b:
            return f"{name}.stride()[{i}]: expected {a}, got {b} (memory layout changed)"
    return None
