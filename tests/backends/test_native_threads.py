"""dl.set_num_threads / dl.get_num_threads: kernel and BLAS counts, saved and restored together."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.backends.native.blas_threads import blas_threads, set_blas_threads
from dynamo_lite.backends.native.threads import THREADS
from tests.backends.native_cases import Recording, needs_compiler


@pytest.fixture
def pinned_blas():
    """The BLAS pinned to 1 thread and the kernels at 2 (as OPENBLAS_NUM_THREADS=1 on 2 CPUs)."""
    if blas_threads() is None:
        pytest.skip("this NumPy's BLAS has no known thread-count entry point")
    kernels, blas = THREADS.value, blas_threads()
    THREADS.value = 2
    set_blas_threads(1)
    yield
    THREADS.value = kernels
    set_blas_threads(blas)


def test_restoring_a_saved_count_restores_the_blas_count_too(pinned_blas):
    previous = dl.get_num_threads()
    assert previous == 2 and previous.blas == 1 and isinstance(previous, int)
    dl.set_num_threads(3)
    assert (dl.get_num_threads(), blas_threads()) == (3, 3)
    dl.set_num_threads(previous)
    assert (dl.get_num_threads(), blas_threads()) == (2, 1)
    dl.set_num_threads(dl.get_num_threads())  # changes nothing
    assert (dl.get_num_threads(), blas_threads()) == (2, 1)
    dl.set_num_threads(2)  # a plain int sets both
    assert (dl.get_num_threads(), blas_threads()) == (2, 2)


@pytest.mark.parametrize("bad", [0, -1, 1.0, True, "2"])
def test_a_bad_count_is_refused_with_its_value(bad):
    with pytest.raises(ValueError, match=f"positive int, got {bad!r}"):
        dl.set_num_threads(bad)


@needs_compiler
def test_kernels_give_the_same_bits_on_one_and_two_threads():
    """Large enough to start a team (chunks handed out dynamically): the split never changes a value."""
    def fn(x, y):
        return ((x * y + 1).sigmoid() * x.tanh() - y).relu(), dl.softmax(x, -1), x.sum(-1)

    dl.manual_seed(0)
    x, y = dl.randn(300, 1000), dl.randn(300, 1000)
    saved = dl.get_num_threads()
    results = []
    try:
        for threads in (1, 2):
            dl.set_num_threads(threads)
            recording = Recording()
            results.append([r.numpy().copy() for r in dl.compile(fn, backend=recording)(x, y)])
            assert (recording.count("group"), recording.count("row")) == (1, 2)
            dl.reset()
    finally:
        dl.set_num_threads(saved)
    for one, two, eager in zip(*results, fn(x, y)):
        np.testing.assert_array_equal(one, two)
        np.testing.assert_allclose(one, eager.numpy(), rtol=1e-5, atol=1e-6)
