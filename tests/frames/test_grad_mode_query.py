"""``dl.is_grad_enabled()`` in compiled code answers the grad mode at that point of the program (blocks
of ``no_grad``/``set_grad_enabled`` included) without a graph break, in either mode at entry."""
from __future__ import annotations

import dynamo_lite as dl

from tests.frames.differential import assert_transparent


def _queries(x):
    a = dl.is_grad_enabled()
    with dl.no_grad():
        b = dl.is_grad_enabled()
        y = x * 2
    with dl.set_grad_enabled(True):
        c = dl.is_grad_enabled()
    return y, a, b, c, dl.is_grad_enabled()


def test_is_grad_enabled_is_the_traced_mode(backend):
    def make_args(call):
        dl.manual_seed(call)
        return (dl.randn(3),)

    assert_transparent(_queries, make_args, backend, graphs=1, breaks=0)


def test_is_grad_enabled_under_no_grad_at_entry(backend):
    compiled = dl.compile(_queries, backend=backend)
    x = dl.randn(3)
    with dl.no_grad():
        assert compiled(x)[1:] == _queries(x)[1:] == (False, False, True, False)
    assert compiled(x)[1:] == (True, False, True, True)
    assert not dl.stats().fallbacks and dl.stats().graph_breaks == 0
