"""Programs that compile to one graph without a break (as TorchDynamo compiles them), and
still behave exactly like the plain function.

PYTEST_DONT_REWRITE: the programs here contain ``assert`` statements that are the user's,
not pytest's.
"""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def xfail(what: str):
    return pytest.mark.xfail(strict=True, reason=what)


def t(call: int, n: int = 4):
    return dl.arange(float(n)) + call


# -- the six extra breaks of the tensor-program corpus -------------------------------------
def test_try_except_around_tensor_code(backend):
    def f(x):
        try:
            y = x * 2
        except ValueError:
            y = x
        return y + 1

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


def test_raise_caught_in_the_frame(backend):
    def f(x, n):
        try:
            if n > 1:
                raise KeyError("n")
            y = x * 2
        except KeyError as exc:
            y = x - len(str(exc))
        return y + 1

    assert_transparent(f, lambda c: (t(c), c), backend, breaks=0)


def test_try_finally_around_tensor_code(backend):
    def f(x, log):
        try:
            y = x * 2
        finally:
            log.append("done")
        return y + 1

    assert_transparent(f, lambda c: (t(c), []), backend, graphs=1, breaks=0)


def test_dict_pop(backend):
    def f(x, d):
        scale = d.pop("scale")
        missing = d.pop("nothing", 3)
        return x * scale + missing, d

    assert_transparent(f, lambda c: (t(c), {"scale": 2.0 + c, "keep": 1}), backend, graphs=1, breaks=0)


def test_del_list_item(backend):
    def f(x, xs):
        del xs[0]
        return x + xs[0], xs

    assert_transparent(f, lambda c: (t(c), [t(c), t(c) * 2, 3]), backend, graphs=1, breaks=0)


def test_map(backend):
    def f(x, y):
        doubled = list(map(lambda v: v * 2, (x, y)))
        return doubled[0] + doubled[1]

    assert_transparent(f, lambda c: (t(c), t(c) + 1), backend, graphs=1, breaks=0)


# -- the while loop whose branch back hit an internal error --------------------------------
def test_while_loop_on_a_tensor_condition_has_no_internal_error(backend):
    def f(x):
        steps = 0
        y = x + 1
        while (y > 0).all():
            y = y - 1
            steps += 1
        return y, steps

    report = dl.explain(f, backend=backend)(t(0) + 1)
    internal = [r.reason for r in report.break_reasons if "internal" in r.reason]
    assert not internal, internal
    assert_transparent(f, lambda c: (t(c) + 1,), backend)


# -- try/except/finally, traced with the exception table ------------------------------------
def _lookup(table, key):
    return table[key]


def _try_nested(x, n):
    try:
        try:
            if n == 1:
                raise ValueError("inner")
            y = x + 1
        finally:
            x = x * 2
    except ValueError as exc:
        y = x - len(exc.args[0])
    return y


def _try_callee_raises(x, n):
    try:
        scale = _lookup({"a": 2.0}, "b" if n == 2 else "a")
    except KeyError:
        scale = -1.0
    return x * scale


def _try_uncaught(x, n):
    y = x * 3
    try:
        if n == 1:
            raise KeyError("missing")
    except ValueError:
        y = y - 1
    return y


def _try_break_inside(x, n):
    y = x + n
    try:
        print("inside", n)
        y = y * 2
    except RuntimeError:
        y = y - 1
    return y


def _try_assert(x, n):
    y = x + 1
    try:
        assert n != 1, "n is one"
    except AssertionError as exc:
        y = y * 0 + len(str(exc))
    return y


def _try_bare_reraise(x, n):
    y = x * 2
    try:
        if n == 2:
            raise IndexError("two")
    except IndexError:
        if n == 2:
            raise
    return y


@pytest.mark.parametrize("program", [_try_nested, _try_callee_raises, _try_uncaught, _try_break_inside,
                                     _try_assert, _try_bare_reraise], ids=lambda f: f.__name__)
def test_try_except_programs(program, backend):
    assert_transparent(program, lambda c: (t(c), c), backend)
