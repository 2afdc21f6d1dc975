"""dl.cuda, dl.backends flags, dl.compiler and dl.jit: torch's answers on a machine without CUDA.

The expected values were recorded once with PyTorch 2.13 (CPU build) in /work/venvs/torch:
``torch.cuda.is_available()`` -> False, ``device_count()`` -> 0, ``current_device()``,
``get_device_name()`` and ``synchronize()`` raise AssertionError, ``manual_seed(1)`` and
``manual_seed_all(1)`` return None; cudnn.enabled/benchmark/deterministic -> True/False/False,
cuda.matmul.allow_tf32 -> False, mps.is_available() -> False, compiler.is_compiling() and
jit.is_scripting() -> False eagerly.
"""
import pytest

import dynamo_lite as dl
from tests.helpers import assert_compiled, assert_same


@pytest.fixture
def no_cuda(monkeypatch):
    """A machine without a CUDA device, whatever this one has."""
    monkeypatch.setattr(dl.cuda, "_cupy_device_count", lambda: 0)


def test_cuda_queries_without_a_device(no_cuda):
    assert dl.cuda.is_available() is False
    assert dl.cuda.device_count() == 0
    for query in (dl.cuda.current_device, dl.cuda.get_device_name, dl.cuda.synchronize):
        with pytest.raises(AssertionError, match="no usable CUDA device"):
            query()


def test_cuda_seeds_are_accepted_silently_without_a_device(no_cuda):
    dl.manual_seed(3)
    expected = dl.rand(4)
    dl.manual_seed(3)
    assert dl.cuda.manual_seed(1) is None and dl.cuda.manual_seed_all(1) is None
    assert dl.rand(4).tolist() == expected.tolist()  # the CPU stream is untouched
    with pytest.raises(ValueError):
        dl.cuda.manual_seed("not a seed")


def test_cuda_is_available_matches_cupy():
    try:
        import cupy
        expected = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        expected = False
    assert dl.cuda.is_available() is expected


def test_backend_flags_have_torch_defaults_and_are_settable(monkeypatch):
    cudnn, matmul = dl.backends.cudnn, dl.backends.cuda.matmul
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, False)
    assert matmul.allow_tf32 is False and dl.backends.mps.is_available() is False
    monkeypatch.setattr(cudnn, "benchmark", True)
    monkeypatch.setattr(matmul, "allow_tf32", True)
    assert cudnn.benchmark is True and dl.backends.cuda.matmul.allow_tf32 is True
    assert "numpy" in dl.backends.list_backends()  # the backend registry is still there


def test_is_compiling_is_false_eagerly_and_true_compiled_without_a_break():
    def f(x):
        if dl.compiler.is_compiling():
            return x + 1
        return x - 1

    assert f(dl.ones(2)).tolist() == [0.0, 0.0]
    before = dl.stats()
    assert dl.compile(f)(dl.ones(2)).tolist() == [2.0, 2.0]
    assert_compiled(before, dl.stats(), expect_breaks=0)


def test_jit_is_scripting_is_false_compiled_too():
    def f(x):
        return x * 3 if not dl.jit.is_scripting() and not dl.jit.is_tracing() else x

    assert_same(f, dl.ones(3))


@pytest.mark.parametrize("available", [0, 1])
def test_branch_on_cuda_is_available_does_not_break_the_graph(monkeypatch, available):
    monkeypatch.setattr(dl.cuda, "_cupy_device_count", lambda: available)
    dl.reset()

    def f(x):
        if dl.cuda.is_available():
            return x * 2, dl.cuda.device_count()
        return x - 1, dl.cuda.device_count()

    assert_same(f, dl.arange(3.0))


def test_arguments_to_a_trace_time_constant_break_the_graph():
    def f(x):
        return x + dl.compiler.is_compiling(1)

    assert_same(f, dl.ones(2), expect_breaks=1, expect_graphs=False)
