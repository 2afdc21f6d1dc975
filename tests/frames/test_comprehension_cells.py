"""Comprehensions whose variable a closure captures (``[lambda v: v * i for i in ...]``):
3.12+ inlines them into the frame (PEP 709), saving the outer cell with
LOAD_FAST_AND_CLEAR and boxing the loop variable with MAKE_CELL inside the body. They
compile like 3.11's nested comprehension functions: one graph, no fallback, and a graph
break around them resumes."""
from __future__ import annotations

import sys

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def t(call: int):
    return dl.arange(3.0) + call


def test_closures_made_in_a_comprehension(backend):
    def f(x):
        fs = [lambda v: v * i for i in range(3)]
        return [g(x) for g in fs]

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


def test_closures_read_an_outer_cell_too(backend):
    def f(x):
        k = 2
        fs = [lambda v: v * i + k for i in range(3)]
        return sum(g(x) for g in fs)

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


def test_loop_variable_shadows_an_outer_local(backend):
    def f(x):
        i = 10
        fs = [lambda v: v + i for i in range(2)]
        return fs[0](x) + fs[1](x) + i

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


def test_closures_returned(backend):
    def f(x):
        fs = [lambda v: v * i for i in range(3)]
        return x + 1, [g(2) for g in fs]

    assert_transparent(f, lambda c: (t(c),), backend)


def test_graph_break_after_the_comprehension(backend):
    def f(x):
        fs = [lambda v: v * i for i in range(3)]
        y = fs[2](x)
        print("break")
        return y + fs[1](x)

    if sys.version_info < (3, 12):
        assert_transparent(f, lambda c: (t(c),), backend, breaks=1)
        return
    # 3.12+: a resume function cannot remake the comprehension's cells (its cell variables
    # become free variables), so the frame runs eagerly, saying why, never as a compiler error.
    compiled = dl.compile(f, backend=backend)
    x = t(0)
    assert compiled(x).tolist() == f(x).tolist()
    fallbacks = dl.stats().fallbacks
    assert len(fallbacks) == 1 and "comprehension makes cells as it runs" in fallbacks[0].reason, fallbacks
    assert "internal compiler error" not in fallbacks[0].reason


def test_graph_break_inside_the_comprehension(backend):
    def f(x):
        fs = [(print("made", i), lambda v: v * i)[1] for i in range(2)]
        return fs[0](x) + fs[1](x)

    if sys.version_info < (3, 12):
        assert_transparent(f, lambda c: (t(c),), backend)
        return
    compiled = dl.compile(f, backend=backend)  # 3.12+: eager, saying why (see above)
    x = t(0)
    assert compiled(x).tolist() == f(x).tolist()
    fallbacks = dl.stats().fallbacks
    assert len(fallbacks) == 1 and "comprehension makes cells as it runs" in fallbacks[0].reason, fallbacks
