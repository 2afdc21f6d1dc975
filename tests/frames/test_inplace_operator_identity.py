"""In-place operators on globals, closure cells, attributes and items: compiled equals eager, identity included.

``g += [x]`` on a global list extends that very list (every alias sees it), ``g |= {...}`` on a
dict or set updates it, ``b += b"..."`` on a bytearray appends to it, and each happens exactly
once (NOTE: [in-place operators on objects]). Every case runs the same function eagerly on one
fresh state and compiled on another and compares the values, the identity of the object the
operator changed and the compile counters (a graph is captured around the operator: models
the translator knows are traced without a break; any other object breaks once and runs eagerly).
"""
from __future__ import annotations

import array
import collections

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_compiled


class Holder:
    """A plain object whose attribute holds the value (stores on it are traced)."""

    def __init__(self, value):
        self.value = value


class Counter:
    """A user object whose ``__iadd__`` changes itself and returns itself."""

    def __init__(self):
        self.n = 0

    def __iadd__(self, other):
        self.n += other
        return self

    def __eq__(self, other):
        return isinstance(other, Counter) and other.n == self.n


# name -> (initial value, right operand, operator, breaks): the operator applied in place.
FAMILY = {
    "list += list": (lambda: [1], lambda x: [x, 2], "+=", 0),
    "list += tuple": (lambda: [1], lambda x: (3,), "+=", 0),
    "list *= int": (lambda: [1, 2], lambda x: 2, "*=", 0),
    "dict |= dict": (lambda: {"a": 1}, lambda x: {"b": 2}, "|=", 0),
    "set |= set": (lambda: {1}, lambda x: {2}, "|=", 0),
    "set &= set": (lambda: {1, 2}, lambda x: {2}, "&=", 0),
    "set -= set": (lambda: {1, 2}, lambda x: {2}, "-=", 0),
    "set ^= set": (lambda: {1, 2}, lambda x: {2, 3}, "^=", 0),
    "bytearray += bytes": (lambda: bytearray(b"a"), lambda x: b"bc", "+=", 1),
    "bytearray *= int": (lambda: bytearray(b"ab"), lambda x: 2, "*=", 1),
    "numpy array += int": (lambda: np.zeros(2), lambda x: 1, "+=", 0),  # an array in the graph
    "array.array += array": (lambda: array.array("d", [1.0]), lambda x, r=array.array("d", [2.0]): r, "+=", 1),
    "deque += list": (lambda: collections.deque([1]), lambda x: [2], "+=", 1),
    "user __iadd__": (Counter, lambda x: 1, "+=", 0),  # the user's __iadd__ is inlined
    "tuple += tuple (rebinds)": (lambda: (1,), lambda x: (2,), "+=", 0),
    "int += int (rebinds)": (lambda: 1, lambda x: 2, "+=", 0),
}



def make_functions(symbol, right):
    """A function per target kind, each applying ``symbol`` once and computing on ``x``."""
    source = f"""
def on_global(x):
    global target
    target {symbol} right(x)
    return x * 2


def on_cell_factory(value):
    cell = value
    def on_cell(x):
        nonlocal cell
        cell {symbol} right(x)
        return x * 2
    return on_cell


def on_attribute(x):
    holder.value {symbol} right(x)
    return x * 2


def on_item(x):
    box["k"] {symbol} right(x)
    return x * 2
"""
    namespace = {"right": right}
    exec(compile(source, f"<in-place {symbol}>", "exec"), namespace)
    return namespace


def _state(kind, namespace, initial):
    """Install a fresh value as ``kind``'s target; returns (the function, a reader of the target)."""
    value = initial()
    if kind == "global":
        namespace["target"] = value
        return namespace["on_global"], lambda: namespace["target"], value
    if kind == "cell":
        fn = namespace["on_cell_factory"](value)
        return fn, lambda: fn.__closure__[0].cell_contents, value
    if kind == "attribute":
        namespace["holder"] = Holder(value)
        return namespace["on_attribute"], lambda: namespace["holder"].value, value
    namespace["box"] = {"k": value}
    return namespace["on_item"], lambda: namespace["box"]["k"], value


def _same_value(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.tolist() == b.tolist()
    if isinstance(a, list):
        return type(b) is list and len(a) == len(b) and all(
            (x.tolist() == y.tolist()) if isinstance(x, dl.Tensor) else x == y for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("kind", ["global", "cell", "attribute", "item"])
@pytest.mark.parametrize("case", sorted(FAMILY))
def test_in_place_operator_compiled_equals_eager(case, kind):
    initial, right, symbol, breaks = FAMILY[case]
    x = dl.ones(2)
    outcomes = []
    for mode in ("eager", "compiled"):
        dl.reset()
        fn, read, before = _state(kind, make_functions(symbol, right), initial)
        run = fn if mode == "eager" else dl.compile(fn)
        counters = dl.stats()
        result = run(x)
        after = read()
        outcomes.append((after, after is before, result.tolist()))
        if mode == "compiled":
            assert_compiled(counters, dl.stats(), expect_breaks=breaks)
    (eager_value, eager_same, eager_result), (value, same, result) = outcomes
    assert _same_value(value, eager_value), (value, eager_value)  # applied exactly once
    assert same == eager_same  # the object itself changed (or, for immutable values, rebound)
    assert result == eager_result


def test_a_global_list_keeps_its_aliases_across_calls_and_breaks():
    namespace = make_functions("+=", lambda x: [x])
    namespace["target"] = alias = []
    compiled = dl.compile(namespace["on_global"])
    before = dl.stats()
    for _ in range(3):
        compiled(dl.ones(1))
    assert namespace["target"] is alias and len(alias) == 3
    assert_compiled(before, dl.stats())
