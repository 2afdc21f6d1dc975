"""Dynamic shapes on the numpy backend: one generated function runs every size of a symbolic graph."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from benchmarks import models
from dynamo_lite.backends.numpy import NumpyBackend
from tests.helpers import assert_equal_values

SEQ_LENGTHS = [32, 31, 17, 8, 5, 3, 2, 24, 12, 9, 30, 29, 7]


@pytest.fixture(autouse=True)
def _fresh():
    dl.reset()
    yield
    dl.reset()


class RecordingNumpy(NumpyBackend):
    """The numpy backend, keeping the functions it returns."""

    symbolic_shapes = True

    def __init__(self, **options):
        super().__init__(**options)
        self.functions = []

    def __call__(self, gm, example_inputs):
        function = super().__call__(gm, example_inputs)
        self.functions.append(function)
        return function


def _specializations(function):
    return function.__globals__["_respecialize"].__self__


def test_gpt_sweep_runs_one_generated_function():
    backend = RecordingNumpy()
    model = models.make_gpt()
    base = models.gpt_inputs()[0]
    compiled = dl.compile(model, dynamic=True, backend=backend)
    with dl.no_grad():
        for length in SEQ_LENGTHS:
            idx = base[:, :length].contiguous()
            assert_equal_values(compiled(idx), model(idx), rtol=1e-4, atol=1e-5)
    assert dl.stats().frames_compiled == 1 and dl.stats().fallbacks == ()
    (function,) = backend.functions
    specializations = _specializations(function)
    assert len(specializations.variants) == 1 and specializations.variants[0].function is function
    assert len(function.shapes) == len(set(SEQ_LENGTHS))  # one pool set list per size, no new code
    assert "_shapes.get((" in function.source and "_sizes[1]" not in function.source.split("_shapes.get")[0]


def test_code_structure_change_gets_a_second_function_shared_by_its_sizes():
    backend = RecordingNumpy(block_bytes=4096, threads=1)

    def f(x, b):
        return ((x * 2 + b).relu() - 1).exp()

    compiled = dl.compile(f, dynamic=True, backend=backend)
    b = dl.randn(16)
    for n in [2, 3, 400, 4, 500, 5, 300]:  # small sizes: one pass; large: blocked loops
        x = dl.randn(n, 16)
        assert_equal_values(compiled(x, b), f(x, b))
    assert dl.stats().frames_compiled == 1
    specializations = _specializations(backend.functions[0])
    assert [len(p.function.shapes) for p in specializations.variants] == [4, 3]
    assert [p.function.structure for p in specializations.variants] == [(True,), (False,)]


def test_sizes_read_by_the_code_and_views_follow_each_call():
    backend = RecordingNumpy()

    def f(x):
        n = x.shape[0]
        y = x.view(n // 2, -1) * 2
        return y.transpose(0, 1) + 1, y.sum(0) / n, n * 3

    compiled = dl.compile(f, dynamic=True, backend=backend)
    for n in [4, 6, 10, 4, 8]:
        x = dl.randn(n, 3)
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 1
    (function,) = backend.functions
    assert len(_specializations(function).variants) == 1 and len(function.shapes) == 4


def test_a_direct_call_with_a_new_shape_is_planned_and_an_invalid_one_raises_like_eager():
    backend = RecordingNumpy()

    def f(x):
        return x.view(x.shape[0] // 2, -1) + 1

    compiled = dl.compile(f, dynamic=True, backend=backend)
    compiled(dl.randn(4, 3))
    (function,) = backend.functions
    gm = _specializations(function).gm
    x = dl.randn(8, 5)
    assert_equal_values(function(x), gm.forward(x))
    with pytest.raises(RuntimeError) as eager_error:
        gm.forward(dl.randn(5, 3))
    with pytest.raises(RuntimeError) as compiled_error:
        function(dl.randn(5, 3))
    assert str(compiled_error.value) == str(eager_error.value)
