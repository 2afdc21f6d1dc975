"""Breaks that used to end in a whole-frame fallback resume instead: a data-dependent
value (``.item()``, ``min()``/``max()`` of tensors) inside a comprehension or with a
``key=lambda``, in a loop inside ``try``, in a loop over a generator with side effects;
and what a caught exception says is read when the code runs (no break, no guard)."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.frames.differential import assert_transparent

LOG: list = []


def reset_state(call: int = 0) -> None:
    LOG.clear()


def state():
    return list(LOG)


def t(call: int, n: int = 3):
    return dl.arange(float(n)) - 1 + call


def ts(call: int):
    return [t(call), -t(call), t(call) * 2]


def logged(items):
    for v in items:
        LOG.append(len(LOG))
        yield v


def _item_in_a_comprehension(x, xs):
    y = x * 2
    kept = [v for v in xs if v.sum().item() > 0]
    return y + len(kept), kept


def _min_with_a_key_lambda(x, xs):
    y = x + 1
    smallest = min(xs, key=lambda v: float(v.sum()))
    return y * smallest


def _max_of_tensors(x, xs):
    y = x - 1
    return y + max(xs[0].sum(), xs[1].sum())


def _item_in_a_loop_inside_try(x, xs):
    y = x * 3
    try:
        for v in xs:
            if v.sum().item() > 0:
                y = y + v
    except RuntimeError:
        y = y - 1
    return y


def _loop_over_a_generator_with_side_effects(x, xs):
    y = x + 2
    for v in logged(xs[:2]):
        print("got", len(LOG))
        y = y + v
    return y


def _comprehension_then_more_work(x, xs):
    y = x * 2
    sizes = [int(v.sum().item()) for v in xs]
    z = y + sum(sizes)
    return z * 2


PROGRAMS = [
    _item_in_a_comprehension,
    _min_with_a_key_lambda,
    _max_of_tensors,
    _item_in_a_loop_inside_try,
    _loop_over_a_generator_with_side_effects,
    _comprehension_then_more_work,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_the_break_resumes_instead_of_falling_back(program, backend):
    assert_transparent(program, lambda c: (t(c), ts(c)), backend, setup=reset_state, state=state)
    assert not dl.stats().fallbacks, dl.stats().fallbacks
    # (a loop with a break inside runs eagerly from its head; the graph before it compiles)
    report = dl.explain(program, backend=backend)(t(0), ts(0))
    assert report.graph_break_count >= 1 and report.graph_count >= 1, str(report)


CALLS = [0]


@dl.disable
def _opaque_raise():
    CALLS[0] += 1
    raise ValueError(f"call {CALLS[0]}", CALLS[0])


def _message_of_a_caught_exception(x, xs):
    y = x + 1
    try:
        y = y * _opaque_raise()  # raised at run time: the caught exception is real
    except ValueError as e:
        LOG.append(str(e))
        LOG.append(f"{e!r} / {e}")
        xs.append(e.args[1])
        y = y - len(e.args)
    return y


def _new_messages(call: int) -> None:
    reset_state()
    CALLS[0] = 10 * call  # the same message for the eager and the compiled run, another each call


def test_the_message_of_a_caught_exception_is_read_when_the_code_runs(backend):
    assert_transparent(_message_of_a_caught_exception, lambda c: (t(c), []), backend, calls=4,
                       setup=_new_messages, state=state)
    assert LOG == ["('call 31', 31)", "ValueError('call 31', 31) / ('call 31', 31)"]
    stats = dl.stats()
    assert not stats.fallbacks, stats
    # One break (the opaque call); the except clause compiles once, for every message.
    assert stats.graph_breaks == 1 and stats.recompiles == 0, stats


def _break_inside_the_arguments_of_a_method_call(x, xs):
    y = x * 2
    # The resume function receives the bound ``xs.append`` (and the same float every call:
    # a float a resume function receives is a constant to it).
    xs.append((y * 0).sum().item())
    return y + 1


def test_a_bound_builtin_method_passed_to_a_resume_function_does_not_recompile(backend):
    assert_transparent(_break_inside_the_arguments_of_a_method_call, lambda c: (t(c), [c]), backend, calls=4)
    stats = dl.stats()
    assert not stats.fallbacks and stats.recompiles == 0, stats
