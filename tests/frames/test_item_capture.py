"""``.item()``/``.tolist()`` in compiled code: a value used only in tensor arithmetic or returned
is captured as a graph value (no break); one that Python control flow needs breaks there, and the
code after the break takes it as a graph input, so a new value never recompiles
(NOTE: [scalars read from tensors])."""
from __future__ import annotations

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def t(call: int, n: int = 4):
    """Quarters: sums and products of these are exact in float32, whatever order a kernel adds them in."""
    return dl.arange(float(n)) * 0.25 + call


def test_item_in_tensor_arithmetic_is_one_graph(backend):
    def f(x):
        return x * x.sum().item() - x.max().item()

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


def test_loss_item_returned(backend):
    def f(x, y):
        loss = ((x - y) ** 2).mean()
        return loss, loss.item()

    assert_transparent(f, lambda c: (t(c), t(2 * c)), backend, graphs=1, breaks=0)


def test_int_item_scales_a_tensor(backend):
    def f(x, n):
        return x * n.sum().item(), n.argmax().item()

    assert_transparent(f, lambda c: (t(c), dl.arange(3) + c), backend, graphs=1, breaks=0)


def test_item_arithmetic_between_scalars(backend):
    def f(x):
        a, b = x[0].item(), x[1].item()
        return x * (a + b) / 2, a * 2.0

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


def test_item_in_a_branch_breaks_and_does_not_recompile_per_value(backend):
    def f(x):
        s = x.sum().item()
        if s > 3:
            return x * s
        return x - s

    compiled = assert_transparent(f, lambda c: (t(c),), backend, calls=4)
    dl.reset()
    compiled = dl.compile(f, backend=backend)
    for call in range(6):
        x = t(call * 0.01)
        assert dl.equal(compiled(x), f(x))
    assert dl.stats().frames_compiled <= 3, dl.stats()  # the frame, its resume: never one per value


def test_item_printed_is_the_value(backend):
    def f(x):
        v = (x * 2).sum().item()
        print(f"loss {v:.3f}")
        return x + 1

    assert_transparent(f, lambda c: (t(c),), backend, calls=3)


def test_tolist_returned(backend):
    def f(x):
        y = x * 2
        return y, y.tolist()

    assert_transparent(f, lambda c: (t(c),), backend)


def test_no_recompile_per_value_after_item_break(backend):
    def f(x):
        v = x.mean().item()
        return x + round(v, 2)

    compiled = dl.compile(f, backend=backend)
    for call in range(5):
        x = t(call * 0.37)
        assert dl.allclose(compiled(x), f(x))
    assert dl.stats().frames_compiled <= 3, dl.stats()


def test_negated_item_and_bool_item(backend):
    def f(x):
        s = x.sum().item()
        flag = (x > 100).any().item()
        return x * -s, -flag, s > 2, flag == False  # noqa: E712

    assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)


def test_number_returned_after_a_branch_does_not_recompile(backend):
    def f(x):
        s = x.sum().item()
        if s > 1000:
            x = x * 0
        return x + s, s

    compiled = assert_transparent(f, lambda c: (t(c),), backend, calls=4)
    dl.reset()
    compiled = dl.compile(f, backend=backend)
    for call in range(5):
        x = t(call * 0.5)
        out, s = compiled(x)
        assert s == f(x)[1]
    assert dl.stats().frames_compiled == 2, dl.stats()  # the frame and one resume function
