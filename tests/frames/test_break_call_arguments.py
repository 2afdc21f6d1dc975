"""Values handed to the call a graph break runs eagerly: an iterator stays an iterator
(a 3.11 comprehension's function ran FOR_ITER over a tuple and crashed the interpreter),
and a custom autograd.Function's apply runs eagerly, rebuilt from its class."""
from __future__ import annotations

import dynamo_lite as dl
from tests.helpers import assert_same, run_capturing


def _no_fallback_with_breaks(fn, *args):
    """Compiled equals eager, frames compiled with at least one break and no fallback (how many
    breaks a comprehension makes differs between 3.11, where it is a function, and 3.12+)."""
    before = dl.stats()
    compiled = dl.compile(fn)
    for _ in range(2):
        expected, expected_exc = run_capturing(fn, *args)
        actual, actual_exc = run_capturing(compiled, *args)
        assert expected_exc is None and actual_exc is None, (expected_exc, actual_exc)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert dl.equal(a, e)
    after = dl.stats()
    assert not after.fallbacks[len(before.fallbacks):]
    assert after.graph_breaks > before.graph_breaks and after.graph_count > before.graph_count


def test_a_comprehension_that_breaks_inside_over_a_tuple(capsys):
    def fn(x):
        y = x + 1
        return [print("item") or v * 2 for v in (x, y)]

    _no_fallback_with_breaks(fn, dl.ones(3))
    assert capsys.readouterr().out == "item\n" * 8  # two rounds of eager and compiled


def test_a_generator_expression_that_breaks_inside_feeds_a_builtin(capsys):
    def fn(x):
        y = x * 3
        total = sum(print("term") or float(v.sum()) for v in (x, y))
        return [y + total]

    _no_fallback_with_breaks(fn, dl.ones(2))
    assert capsys.readouterr().out == "term\n" * 8


class Scale(dl.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


def test_a_custom_autograd_function_joins_the_graph():
    # (it used to run eagerly between two graphs: NOTE: [custom autograd.Function in the graph])
    weight = dl.randn(4, 4, requires_grad=True)

    def fn(x):
        hidden = (x @ weight).tanh()
        return Scale.apply(hidden, 3.0).sum()

    compiled = assert_same(fn, dl.randn(2, 4), expect_breaks=0)
    loss = compiled(dl.randn(2, 4))
    loss.backward()
    expected = dl.randn(2, 4)
    weight.grad = None
    fn(expected).backward()
    eager_grad = weight.grad.clone()
    weight.grad = None
    compiled(expected).backward()
    assert dl.allclose(weight.grad, eager_grad, rtol=1e-6, atol=1e-6)
