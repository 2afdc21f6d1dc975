"""Graph-break reasons speak of what the user's code did, at its file:line, never of the
translator's own classes (``UserObjectVariable(...)``, ``NoOpContextVariable()``)."""
from __future__ import annotations

import re

import numpy as np

import dynamo_lite as dl
from dynamo_lite.frames.tracing.variables.base import describe_value

INTERNAL = re.compile(r"\b\w+Variable\b|\bVariableTracker\b")


def _reasons(fn, *args) -> list:
    report = dl.explain(fn)(*args)
    return [str(reason) for reason in report.break_reasons]


def test_numpy_function_named_by_its_dotted_name():
    def f(x):
        return np.median(x.numpy()) + x

    reasons = _reasons(f, dl.ones(2))
    assert reasons and not any(INTERNAL.search(r) for r in reasons), reasons
    assert any("numpy.median()" in r for r in reasons), reasons
    assert all(__file__ in r or "test_break_reason_words.py" in r for r in reasons), reasons


class Opaque:
    """An object whose calls the compiler cannot follow (a C-level __call__)."""

    __call__ = staticmethod(np.negative)


def test_user_object_named_by_its_class():
    def f(x, obj):
        y = x + 1
        return obj(y.numpy()), y

    reasons = _reasons(f, dl.ones(2), Opaque())
    assert not any(INTERNAL.search(r) for r in reasons), reasons
    assert any(f"calling an object of class {__name__}.Opaque" in r for r in reasons), reasons


def test_subscript_of_a_grad_mode_block():
    def f(x):
        block = dl.no_grad()
        try:
            return block[0]
        except TypeError:
            return x + 1

    reasons = _reasons(f, dl.ones(2))
    assert not any(INTERNAL.search(r) for r in reasons), reasons


def test_describe_value_words():
    assert describe_value(np.sum) == "numpy.sum()"
    assert describe_value(len) == "len()"
    assert describe_value(np) == "module numpy"
    assert describe_value(Opaque) == f"class {__name__}.Opaque"
    assert describe_value(dl.no_grad()) == "an object of class dynamo_lite.autograd.grad_mode.no_grad"
    assert describe_value({1}) == "an object of class set"
