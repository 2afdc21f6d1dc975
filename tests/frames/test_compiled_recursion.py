"""Recursion under dl.compile: what runs eagerly within the recursion limit runs compiled too (NOTE: [compiled recursion])."""
from __future__ import annotations

import logging
import subprocess
import sys
import textwrap

import pytest

import dynamo_lite as dl
from dynamo_lite.frames.api import default_hook
from dynamo_lite.frames.runtime import hook as hook_module
from tests.helpers import assert_compiled


def countdown(x, n):
    if n == 0:
        return x
    return countdown(x + 1, n - 1)


def ping(x, n):
    return x if n == 0 else pong(x * 2, n - 1)


def pong(x, n):
    return x if n == 0 else ping(x - 1, n - 1)


def _eager_and_compiled(fn, *args):
    try:
        expected = fn(*args)
    except RecursionError:
        expected = RecursionError
    before = dl.stats()
    try:
        got = dl.compile(fn)(*args)
    except RecursionError:
        got = RecursionError
    return expected, got, before, dl.stats()


@pytest.mark.parametrize("depth", [3, 400, 700, 900])
def test_a_recursion_that_runs_eagerly_runs_compiled(depth):
    expected, got, before, after = _eager_and_compiled(countdown, dl.zeros(2), depth)
    assert expected is not RecursionError, "the eager run itself overflowed: the test's stack is too deep"
    assert got is not RecursionError and got.tolist() == expected.tolist() == [float(depth)] * 2
    assert_compiled(before, after, expect_breaks=after.graph_breaks - before.graph_breaks)


@pytest.mark.parametrize("depth", [5, 600])
def test_mutual_recursion_runs_compiled(depth):
    expected, got, before, after = _eager_and_compiled(ping, dl.ones(3), depth)
    assert expected is not RecursionError and got is not RecursionError
    assert got.tolist() == expected.tolist()
    assert not after.fallbacks[len(before.fallbacks):]


def test_near_the_limit_in_a_fresh_process():
    """900 levels, then the deepest recursion the plain function survives less the compiled run's constant
    cost (the wrapper's frames and two more for each of the first RECURSIVE_COMPILED_LEVELS levels)."""
    script = textwrap.dedent("""
        import sys
        import dynamo_lite as dl
        from dynamo_lite.frames.runtime.hook import RECURSIVE_COMPILED_LEVELS
        from tests.frames.test_compiled_recursion import countdown
        deepest = 0
        for n in range(850, 1000):
            try:
                countdown(dl.zeros(1), n)
                deepest = n
            except RecursionError:
                break
        compiled = dl.compile(countdown)
        for n in (900, deepest - 2 - 2 * RECURSIVE_COMPILED_LEVELS):
            print(n, compiled(dl.zeros(1), n).tolist(), dl.stats().graph_count > 0)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=hook_module.__file__.rsplit("/dynamo_lite/", 1)[0])
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.split("\n")
    assert lines[0] == "900 [900.0] True" and lines[1].endswith("] True"), done.stdout


def test_a_recursion_error_inside_the_translator_runs_that_call_eagerly(monkeypatch, caplog):
    def exhausted(request):
        raise RecursionError("maximum recursion depth exceeded")

    translate = default_hook._translate
    monkeypatch.setattr(default_hook, "_translate", exhausted)
    compiled = dl.compile(lambda x: x * 2)
    with caplog.at_level(logging.WARNING, logger="dynamo_lite"):
        assert compiled(dl.ones(2)).tolist() == [2.0, 2.0]
    assert any("ran out of stack" in r.getMessage() for r in caplog.records)
    assert not any("internal compiler error" in r.getMessage() for r in caplog.records)
    monkeypatch.setattr(default_hook, "_translate", translate)
    before = dl.stats()
    assert compiled(dl.ones(2)).tolist() == [2.0, 2.0]  # not cached as eager: compiles on the next call
    assert_compiled(before, dl.stats())


def test_a_memory_error_inside_the_translator_runs_that_call_eagerly(monkeypatch):
    def exhausted(request):
        raise MemoryError

    monkeypatch.setattr(default_hook, "_translate", exhausted)
    assert dl.compile(lambda x: x + 1)(dl.ones(1)).tolist() == [2.0]


def test_fullgraph_still_raises_the_recursion_error(monkeypatch):
    def exhausted(request):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(default_hook, "_translate", exhausted)
    with pytest.raises(RecursionError):
        dl.compile(lambda x: x * 2, fullgraph=True)(dl.ones(2))
