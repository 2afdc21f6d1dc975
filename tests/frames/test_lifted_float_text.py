"""Text made from a lifted float (an optimizer's lr: NOTE: [lifted floats]) is computed when
the code runs, from the graph's value: ``f"{lr:.4f}"``, ``str(lr)``, ``repr``, ``format``
neither break the graph nor guard (recompile on) the float's value."""
from __future__ import annotations

import dynamo_lite as dl
from tests.helpers import assert_compiled, assert_equal_values


def _texts(x, opt):
    lr = opt.param_groups[0]["lr"]
    scaled = x * lr
    return scaled, f"lr={lr:.4f}", str(lr), repr(1 - lr), f"{lr * 2!r}|{lr:>10.3e}", format(lr / 3, ".6g")


def _message_in_a_list(x, opt):
    lr = opt.param_groups[0]["lr"]
    log = ["step", f"lr {lr}"]
    return x - lr, log


def _optimizer(lr: float):
    return dl.optim.SGD([dl.nn.Parameter(dl.ones(2))], lr=lr)


def _run(fn, lrs, **compile_kwargs):
    """Eager and compiled results agree for every lr; returns the counters' difference."""
    compiled = dl.compile(fn, backend="eager", **compile_kwargs)
    eager_opt, compiled_opt = _optimizer(lrs[0]), _optimizer(lrs[0])
    before = dl.stats()
    for lr in lrs:
        eager_opt.param_groups[0]["lr"] = compiled_opt.param_groups[0]["lr"] = lr
        x = dl.arange(2.0) + 1
        expected, actual = fn(x, eager_opt), compiled(x, compiled_opt)
        assert actual[1:] == expected[1:], f"lr={lr}"  # the texts, exactly
        assert_equal_values(actual[0], expected[0])
    return before, dl.stats()


LRS = [0.1, 0.25, 1e-3 / 7, 0.3]


def test_formatted_lifted_float_needs_no_break_and_no_value_guard():
    before, after = _run(_texts, LRS, dynamic=True)
    assert_compiled(before, after, expect_breaks=0)
    assert after.frames_compiled - before.frames_compiled == 1  # one translation for every lr
    assert not after.guard_failures[len(before.guard_failures):]


def test_formatted_text_inside_a_container():
    before, after = _run(_message_in_a_list, LRS, dynamic=True)
    assert_compiled(before, after, expect_breaks=0)
    assert after.frames_compiled - before.frames_compiled == 1


def test_automatic_dynamic_lifts_once_then_formats_at_run_time():
    # dynamic=None: the first compile guards the lr's value; the changed lr lifts it.
    before, after = _run(_texts, LRS)
    assert_compiled(before, after, expect_breaks=0)
    assert after.frames_compiled - before.frames_compiled == 2
