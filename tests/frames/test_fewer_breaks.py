"""Programs that compile to one graph without a break (as TorchDynamo compiles them), and
still behave exactly like the plain function."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def xfail(what: str):
    return pytest.mark.xfail(strict=True, reason=what)


def t(call: int, n: int = 4):
    return dl.arange(float(n)) + call


# -- the six extra breaks of the tensor-program corpus -------------------------------------
@xfail("try/except around tensor code breaks the graph")
def test_try_except_around_tensor_code(backend):
    def f(x):
        try:
            y = x * 2
        except ValueError:
            y = x
        return y + 1

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


@xfail("a raise caught inside the frame breaks the graph")
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


@xfail("try/finally around tensor code breaks the graph")
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
