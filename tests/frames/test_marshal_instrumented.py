"""An instrumented code object stays marshal-able (NOTE: [dispatch prologue], NOTE: [code tokens]).

cloudpickle-style tools marshal ``f.__code__``; after ``dl.compile(f)`` and a call it is the
code with the dispatch prologue, whose ``co_consts`` must hold only marshal-able constants.
"""
from __future__ import annotations

import marshal
import os
import subprocess
import sys
import textwrap
import types

import dynamo_lite as dl
from dynamo_lite.frames.runtime.cache import cache_of
from tests.helpers import assert_compiled

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def scaled(x, y=2.0):
    z = x * y
    return z + 1


def counter():
    count = 0

    def bump(x):
        nonlocal count
        count += 1
        return x * count
    return bump


def test_the_code_marshals_after_compile_and_a_call():
    before = dl.stats()
    compiled = dl.compile(scaled)
    assert compiled(dl.ones(2)).tolist() == [3.0, 3.0]
    assert_compiled(before, dl.stats())
    assert cache_of(scaled.__code__) is not None  # instrumented: its prologue is in place
    data = marshal.dumps(scaled.__code__)
    copy = types.FunctionType(marshal.loads(data), scaled.__globals__, "copy", (2.0,))
    assert copy(dl.ones(2)).tolist() == [3.0, 3.0]  # outside dl.compile: the original body
    assert compiled(dl.ones(2)).tolist() == [3.0, 3.0]


def test_a_closure_with_cells_marshals():
    bump = counter()
    compiled = dl.compile(bump)
    assert compiled(dl.ones(1)).tolist() == [1.0] and compiled(dl.ones(1)).tolist() == [2.0]
    marshal.dumps(bump.__code__)


def test_a_marshalled_code_runs_its_original_body_in_another_process():
    # There the token names no cache: the prologue runs the body, and dl.compile leaves the
    # code as it is rather than stacking a second prologue on the first.
    dl.compile(scaled)(dl.ones(2))
    data = marshal.dumps(scaled.__code__)
    script = textwrap.dedent(f"""
        import marshal, sys, types
        sys.path.insert(0, {ROOT!r})
        import dynamo_lite as dl
        code = marshal.loads({data!r})
        f = types.FunctionType(code, {{"dl": dl}}, "f", (2.0,))
        print(f(dl.ones(2)).tolist())
        print(dl.compile(f)(dl.ones(2)).tolist(), dl.stats().fallbacks == ())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["[3.0, 3.0]", "[3.0, 3.0] True"], done.stdout
