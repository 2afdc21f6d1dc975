"""Run one parity program compiled and eager: equal always, and how many graphs and breaks it took.

A ``Case`` is a small program of a kind TorchDynamo's own tests exercise (test_functions.py,
test_modules.py, test_misc.py), written here from scratch, with the number of graphs TorchDynamo
compiles for that kind of code: ``dynamo`` is the ``expected_frame_count`` (or the
``CompileCounter.frame_count``) its test asserts for the same kind of case (``make_test``'s default
is 1: one graph for the whole function), counted over the same calls.
"""
from __future__ import annotations

from dataclasses import dataclass

import dynamo_lite as dl

from tests.frames.differential import assert_canonical_equal, observe


@dataclass
class Case:
    """One program: ``fn(*make_args(call))``; ``dynamo`` graphs TorchDynamo makes over ``calls`` calls."""

    name: str
    fn: object
    make_args: object
    dynamo: int = 1
    calls: int = 2
    setup: object = None  # setup(call): restores global state before each run
    state: object = None  # state() -> the global state compared after each run
    dynamo_breaks: int | None = None  # TorchDynamo's breaks, when not one fewer than its graphs

    @property
    def expected_breaks(self) -> int:
        return max(self.dynamo - 1, 0) if self.dynamo_breaks is None else self.dynamo_breaks


@dataclass
class Measured:
    """What compiling a case took."""

    graphs: int
    breaks: int
    fallbacks: tuple
    internal_errors: tuple

    def over(self, case: Case) -> bool:
        """More graphs or breaks than TorchDynamo makes (its breaks: one fewer than its graphs, for the
        kinds of code here), or the program fell back to eager."""
        return self.graphs > case.dynamo or self.breaks > case.expected_breaks or bool(self.fallbacks)


def run_case(case: Case, backend: str) -> Measured:
    """Compare compiled and eager call by call (results, printed output, mutations, errors) and
    return the compile counts; fails on any difference."""
    dl.reset()
    compiled = dl.compile(case.fn, backend=backend)
    for call in range(case.calls):
        runs = []
        for runner in (case.fn, compiled):
            if case.setup is not None:
                case.setup(call)
            runs.append(observe(runner, case.make_args(call), case.state))
        expected, actual = runs
        assert actual["error"] == expected["error"], f"{case.name} call {call}: compiled raised " \
                                                      f"{actual['error']}, eager {expected['error']}"
        assert actual["stdout"] == expected["stdout"], f"{case.name} call {call}: printed output differs"
        assert_canonical_equal(actual["after"], expected["after"], f"{case.name} call {call}")
    stats = dl.stats()
    name = getattr(case.fn, "__code__", None)
    own = tuple(r for r in stats.fallbacks if name is not None and r.function == name.co_qualname)
    internal = tuple(r for r in stats.fallbacks if "internal compiler error" in r.reason)
    return Measured(stats.graph_count, stats.graph_breaks, own, internal)


def tensors(*shapes, grad=False):
    """``make_args`` giving fresh tensors of ``shapes`` (values differ per call, so a baked-in value shows)."""

    def make(call):
        dl.manual_seed(100 + call)
        return tuple(dl.randn(*shape, requires_grad=grad) for shape in shapes)
    return make


def with_values(*values, shapes=((4,),)):
    """``make_args``: fresh tensors of ``shapes``, then the Python ``values`` as they are."""
    make = tensors(*shapes)
    return lambda call: make(call) + tuple(values)


def cases_of(namespace: dict, make_args, dynamo: int = 1) -> list:
    """A Case per function of ``namespace`` whose name starts with ``p_`` (all with ``make_args``)."""
    return [Case(name[2:], fn, make_args, dynamo) for name, fn in namespace.items()
            if name.startswith("p_") and callable(fn)]
