"""dynamic=True and image ops. A batch of one: the size-1 dim's stride is the extent of the dims inside
it, symbolic like them, so a new image size reuses the translation (it recompiled on every size). An int
window size is specialized with a guard instead of breaking the graph."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.helpers import assert_equal_values


def _images(x):
    return (x.relu() + 1).sum(-1)


@pytest.mark.parametrize("channels_last", [False, True])
def test_a_batch_of_one_with_new_image_sizes_compiles_once(channels_last):
    compiled = dl.compile(_images, dynamic=True)
    before = dl.stats()
    for n in (4, 6, 9):
        x = dl.randn(1, 3, n, n + 1)
        if channels_last:
            x = x.contiguous(memory_format=dl.channels_last)
        assert_equal_values(compiled(x), _images(x))
    after = dl.stats()
    assert after.graph_count - before.graph_count == 1
    assert after.recompiles == before.recompiles
    assert not after.fallbacks[len(before.fallbacks):]


def test_a_size_one_dim_with_an_unusual_stride_is_still_guarded():
    """A batch of one cut from a padded buffer has another stride there: a guard tells them apart."""
    compiled = dl.compile(_images, dynamic=True)
    x = dl.randn(1, 2, 4, 4)
    assert_equal_values(compiled(x), _images(x))
    odd = dl.randn(1, 2, 4, 4).as_strided((1, 2, 4, 4), (1000, 16, 4, 1))
    before = dl.stats()
    assert_equal_values(compiled(odd), _images(odd))
    assert dl.stats().recompiles == before.recompiles + 1


def _pooled(y, k):
    return dl.nn.functional.max_pool2d(y.relu(), k) + 1


def test_a_symbolic_int_kernel_size_is_specialized_not_a_graph_break():
    """With dynamic=True an int argument is symbolic; as a window size it is specialized (guarded), so
    the call stays in the graph and another size recompiles with the right windows."""
    compiled = dl.compile(_pooled, dynamic=True)
    before = dl.stats()
    for k, n in ((2, 8), (2, 6), (3, 9)):
        y = dl.randn(2, 3, n, n)
        assert_equal_values(compiled(y, k), _pooled(y, k))
    after = dl.stats()
    assert after.graph_breaks == before.graph_breaks
    assert not after.fallbacks[len(before.fallbacks):]
    assert after.graph_count - before.graph_count == 2  # one per kernel size
