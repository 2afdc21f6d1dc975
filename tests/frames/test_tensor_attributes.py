"""Custom attributes on tensors (``t.tag = 3``): read inside a compiled function when set before
the call, and set inside it on a tensor that escapes, with eager's results and no graph break."""
from __future__ import annotations

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def t(call: int):
    return dl.arange(4.0) + call


def tagged(call: int):
    x = t(call)
    x.scale = 2.0 + call
    x.name = "x"
    return x


def test_attribute_set_before_the_call_is_read(backend):
    def f(x):
        return x * x.scale, x.name

    assert_transparent(f, lambda c: (tagged(c),), backend, graphs=1, breaks=0)


def test_changed_attribute_is_seen(backend):
    def f(x):
        return x * x.scale

    compiled = dl.compile(f, backend=backend)
    x = tagged(0)
    assert dl.equal(compiled(x), f(x))
    x.scale = 7.0
    assert dl.equal(compiled(x), x * 7.0)


def test_attribute_set_inside_on_an_escaping_tensor(backend):
    def f(x):
        y = x * 2
        y.origin = "double"
        y.step = 3
        return y, y.step + 1

    compiled = assert_transparent(f, lambda c: (t(c),), backend, graphs=1, breaks=0)
    y, _ = compiled(t(0))
    assert y.origin == "double" and y.step == 3


def test_attribute_set_on_an_argument(backend):
    def f(x):
        x.seen = True
        x.count = getattr(x, "count", 0) + 1
        return x + 1

    def fresh(call):
        x = t(call)
        x.count = call
        return (x,)

    compiled = assert_transparent(f, fresh, backend, graphs=1, breaks=0)
    x = fresh(5)[0]
    compiled(x)
    assert x.seen is True and x.count == 6


def test_missing_attribute_raises_as_eagerly(backend):
    def f(x):
        y = x + 1
        return y * x.not_there

    assert_transparent(f, lambda c: (t(c),), backend)


def test_hasattr_on_a_tensor(backend):
    def f(x):
        return x * 2 if hasattr(x, "scale") else x - 1

    assert_transparent(f, lambda c: (tagged(c) if c % 2 else t(c),), backend, calls=4)


class Tagged(dl.nn.Parameter):
    kind = "special"


def test_parameter_flags_and_subclass_attributes_in_a_module(backend):
    """Optimizer-style flags (``p.no_decay = True``) and a Tensor subclass's class attribute."""
    lin = dl.nn.Linear(2, 2)
    lin.weight.__class__ = Tagged
    lin.weight.no_decay = True

    def f(x):
        w = lin.weight
        return x @ w.T, w.kind, hasattr(w, "no_decay"), getattr(lin.bias, "no_decay", False)

    with dl.no_grad():
        assert_transparent(f, lambda c: (dl.ones(1, 2) + c,), backend, graphs=1, breaks=0)
