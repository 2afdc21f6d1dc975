"""A function decorated with ``@dl.no_grad()`` compiles: the decorator's fresh block per call traces."""
from __future__ import annotations

import dynamo_lite as dl
from tests.helpers import assert_equal_values


@dl.no_grad()
def _scaled(x):
    return x * 2 + 1


def test_no_grad_decorated_function_is_one_graph(backend):
    x = dl.ones(3, requires_grad=True)
    compiled = dl.compile(lambda t: _scaled(t) * 3, backend=backend, fullgraph=True)
    out, expected = compiled(x), _scaled(x) * 3
    assert_equal_values(out, expected)
    assert out.requires_grad is expected.requires_grad is False
    assert dl.stats().graph_count == 1 and not dl.stats().fallbacks
