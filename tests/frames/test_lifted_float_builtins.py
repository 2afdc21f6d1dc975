"""Builtins of a lifted float (an optimizer's lr: NOTE: [lifted floats]): ``float(lr)`` is
the same float and stays in the graph (one translation for every lr); ``round(lr, n)``
needs the value: it specializes without a graph break, and ``dl.explain`` says why next
to the value guard."""
from __future__ import annotations

import dynamo_lite as dl
from tests.helpers import assert_compiled, assert_equal_values

LRS = [0.1, 0.25, 1e-3 / 7, 0.3]


def _float_of_lr(x, opt):
    lr = float(opt.param_groups[0]["lr"])
    return x * lr, x - float(lr * 2)


def _round_of_lr(x, opt):
    lr = opt.param_groups[0]["lr"]
    return x * round(lr, 2), x + lr


def _optimizer(lr: float):
    return dl.optim.SGD([dl.nn.Parameter(dl.ones(2))], lr=lr)


def _run(fn, lrs):
    """Eager and compiled results agree for every lr; returns the counters' difference."""
    compiled = dl.compile(fn, backend="eager", dynamic=True)
    eager_opt, compiled_opt = _optimizer(lrs[0]), _optimizer(lrs[0])
    before = dl.stats()
    for lr in lrs:
        eager_opt.param_groups[0]["lr"] = compiled_opt.param_groups[0]["lr"] = lr
        x = dl.arange(2.0) + 1
        assert_equal_values(compiled(x, compiled_opt), fn(x, eager_opt), rtol=0, atol=0)
    return before, dl.stats()


def test_float_of_a_lifted_float_stays_lifted():
    before, after = _run(_float_of_lr, LRS)
    assert_compiled(before, after, expect_breaks=0)
    assert after.frames_compiled - before.frames_compiled == 1  # one translation for every lr
    assert not after.guard_failures[len(before.guard_failures):]


def test_round_of_a_lifted_float_specializes_and_says_why():
    before, after = _run(_round_of_lr, LRS)
    assert_compiled(before, after, expect_breaks=0)
    assert after.frames_compiled - before.frames_compiled == len(LRS)  # one per value: it is guarded
    report = dl.explain(_round_of_lr, dynamic=True)(dl.ones(2), _optimizer(0.25))
    assert "opt.param_groups[0]['lr'] == 0.25  # round() of a lifted float needs its value" in str(report), \
        str(report)
