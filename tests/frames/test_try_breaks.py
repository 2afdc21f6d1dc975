"""Graph breaks inside try blocks, with blocks and except clauses: an exception the
eager instruction raises meets the program's handlers, and the code after the break
compiles (NOTE: [breaks inside try/except])."""
from __future__ import annotations

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def t(call: int, n: int = 3):
    return dl.arange(float(n)) + call


def _index_in_a_grad_mode_block_inside_try(x, xs):
    # Fuzz seed 2230: list.index compares tensors (RuntimeError, ambiguous truth value).
    y = x + 1
    try:
        with dl.no_grad():
            n = xs.index(xs[-1])
    except RuntimeError:
        n = -1
    return y * 2, n


def test_an_exception_inside_a_grad_mode_block_inside_try_is_caught(backend):
    assert_transparent(_index_in_a_grad_mode_block_inside_try, lambda c: (t(c), [t(c), t(c) + 1]), backend)
    assert dl.is_grad_enabled()  # the block's __exit__ ran
    stats = dl.stats()
    assert stats.graph_count == 1 and stats.graph_breaks == 1, stats


def test_the_same_with_grad_mode_already_off(backend):
    """Entering ``no_grad`` changes nothing then: the break's instruction used to run
    outside the with block and outside the try around it."""
    with dl.no_grad():
        assert_transparent(_index_in_a_grad_mode_block_inside_try, lambda c: (t(c), [t(c), t(c) + 1]), backend)
        assert not dl.is_grad_enabled()
    assert dl.is_grad_enabled()
