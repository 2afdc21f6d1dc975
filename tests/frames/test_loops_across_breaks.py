"""A loop over a list with a graph break inside stays live: code after the break that
mutates the list changes the rest of the loop as in eager Python, and the rest of the
loop still compiles (the resume function gets the real iterator, not a snapshot)."""
from __future__ import annotations

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def t(call: int):
    return dl.arange(3.0) + call


def test_appending_after_a_break_is_seen_by_the_loop(backend):
    def f(x, xs):
        y = x + 1
        for v in xs:
            y = y + v
            print("len", len(xs))
            if len(xs) < 4:
                xs.append(v * 2)
        return y, xs

    assert_transparent(f, lambda c: (t(c), [t(c), t(c) + 1]), backend)
    assert dl.stats().fallbacks == (), "every resume function compiles"


def test_enumerate_and_deleting_after_a_break(backend):
    def f(x, xs):
        y = x * 1
        for i, v in enumerate(xs, 1):
            y = y + v * i
            print("i", i)
            if xs:
                del xs[0]
        return y, i, xs

    assert_transparent(f, lambda c: (t(c), [t(c), t(c) + 1, t(c) + 2]), backend)
    assert dl.stats().fallbacks == ()


def test_a_list_made_in_the_frame(backend):
    def f(x):
        ys = [x, x + 1]
        total = x * 0
        for v in ys:
            total = total + v
            print("step")
            if len(ys) < 3:
                ys.insert(0, v * 3)
        return total, ys

    assert_transparent(f, lambda c: (t(c),), backend)
    assert dl.stats().fallbacks == ()
