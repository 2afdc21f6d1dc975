"""Dynamic shapes: one graph for every size, specialization that stays correct, shape guards in words."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dynamo_lite as dl
from benchmarks import models
from dynamo_lite.tensor.symint import SymInt, sym_size
from tests.helpers import assert_equal_values, compiled_backends, run_capturing

SEQ_LENGTHS = [32, 31, 17, 8, 5, 3, 2, 24, 12, 9, 30, 29, 7]
BATCH_SIZES = [64, 1, 7, 128, 33, 2]


@pytest.fixture(autouse=True)
def _fresh():
    dl.reset()
    yield
    dl.reset()


def _graph_entries(fn) -> list:
    cache = dl.frames.api.default_hook.cache_for(fn)
    return [e for e in cache.entries if e.report.graphs]


@pytest.mark.parametrize("backend", compiled_backends())
def test_gpt_sequence_sweep_compiles_twice(backend):
    model = models.make_gpt()
    base = models.gpt_inputs()[0]
    compiled = dl.compile(model, backend=backend)
    for length in SEQ_LENGTHS:
        idx = base[:, :length].contiguous()
        assert_equal_values(compiled(idx), model(idx), rtol=1e-4, atol=1e-5)
    stats = dl.stats()
    assert stats.frames_compiled == 2 and stats.fallbacks == ()
    assert [str(g) for g in stats.guard_failures] == ["GPT.forward: idx.shape[1]: expected 32, got 31"]
    dynamic_entry = _graph_entries(model.forward)[0]
    assert "s0 = idx.size(1)" in dynamic_entry.report.guards
    assert "i64[4, s0]" in dynamic_entry.report.graphs[0].print_readable(print_output=False)


@pytest.mark.parametrize("mode, mark, compiles", [
    (None, False, 3),   # static 64, specialized 1, then symbolic from the third size on
    (True, False, 2),   # symbolic from the start, plus the size-1 specialization
    (False, False, 6),  # one per size
    (None, True, 2),    # mark_dynamic before the first call: symbolic plus size 1
])
@pytest.mark.parametrize("backend", compiled_backends())
def test_mlp_batch_sweep_compile_counts(mode, mark, compiles, backend):
    model = models.make_mlp()
    compiled = dl.compile(model, dynamic=mode, backend=backend)
    rng = np.random.default_rng(0)
    for batch in BATCH_SIZES:
        x = dl.from_numpy(rng.standard_normal((batch, models.MLP_IN)).astype(np.float32))
        if mark:
            dl.mark_dynamic(x, 0)
        assert_equal_values(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    assert dl.stats().frames_compiled == compiles
    assert dl.stats().fallbacks == ()


def test_branch_on_a_size_is_guarded_on_both_sides():
    def f(x):
        if x.shape[0] > 4:
            return x * 2
        return x - 1

    compiled = dl.compile(f, dynamic=True)
    for n in [2, 3, 7, 9, 4, 5, 3, 6]:
        x = dl.randn(n, 3)
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 2  # one entry per side of 4


@pytest.mark.parametrize("backend", compiled_backends())
def test_view_that_must_divide_matches_eager_at_every_size(backend):
    def f(x):
        return x.view(x.shape[0] // 2, -1) + 1

    compiled = dl.compile(f, dynamic=True, backend=backend)
    outcomes = set()
    for n in [6, 8, 5, 12, 7, 2, 3, 10, 9, 4, 11, 0, 1]:
        x = dl.randn(n, 3)
        expected, expected_exc = run_capturing(f, x)
        actual, actual_exc = run_capturing(compiled, x)
        if expected_exc is not None:
            assert type(actual_exc) is type(expected_exc) and str(actual_exc) == str(expected_exc), n
            outcomes.add("raises")
        else:
            assert actual_exc is None, (n, actual_exc)
            assert_equal_values(actual, expected)
            outcomes.add("ok")
    assert outcomes == {"ok", "raises"}
    assert dl.stats().fallbacks == ()


def test_zero_and_one_sizes_are_specialized_like_eager():
    def f(x):
        return x.sum(0) + x.shape[0], x.reshape(-1)

    compiled = dl.compile(f, dynamic=True)
    for n in [2, 5, 0, 1, 0, 1, 3]:
        x = dl.randn(n, 4)
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 3  # every size >= 2, size 0, size 1
    assert dl.stats().guard_failures[0].reason == "x.size(0) = s0 = 0 but the graph assumes s0 >= 2"


def test_guard_failure_names_the_size_and_the_assumption():
    compiled = dl.compile(lambda x: x + 1, dynamic=True)
    compiled(dl.randn(3, 5))
    compiled(dl.randn(3, 1))
    assert [g.reason for g in dl.stats().guard_failures] == ["x.size(1) = s1 = 1 but the graph assumes s1 >= 2"]


def test_size_used_as_python_int_stays_symbolic():
    def f(x):
        n = x.shape[0]
        return dl.zeros(n * 2, 3) + x.sum(), n, x.shape

    compiled = dl.compile(f, dynamic=True)
    for n in [3, 8, 5]:
        x = dl.randn(n, 3)
        result = compiled(x)
        assert_equal_values(result[:2], f(x)[:2])
        assert type(result[1]) is int and result[2] == dl.Size([n, 3]) and type(result[2]) is dl.Size
    assert dl.stats().frames_compiled == 1


def test_int_of_a_size_specializes():
    def f(x):
        return x * len(range(x.shape[0]))

    compiled = dl.compile(f, dynamic=True)
    for n in [3, 4, 3]:
        x = dl.randn(n)
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 2
    assert "the graph assumes s0 == 3" in str(dl.stats().guard_failures[0])


def test_mark_static_wins_over_dynamic_true():
    compiled = dl.compile(lambda x: x * 2, dynamic=True)
    for n in [3, 4]:
        x = dl.randn(n, 5)
        dl.mark_static(x, 0)
        compiled(x)
    assert dl.stats().frames_compiled == 2
    assert dl.stats().guard_failures[0].reason == "x.shape[0]: expected 3, got 4"


def test_marks_leave_eager_alone_and_check_dims():
    x = dl.randn(3, 4)
    dl.mark_dynamic(x, [0, -1])
    assert (x * 2).shape == (3, 4)
    with pytest.raises(IndexError):
        dl.mark_dynamic(x, 2)


def test_transposed_input_gets_symbolic_strides():
    def f(x):
        return x.relu() + 1

    compiled = dl.compile(f, dynamic=True)
    for n in [3, 6]:
        x = dl.randn(5, n).t()
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 1
    guards = _graph_entries(f)[0].report.guards
    assert "stride=[1, s0]" in guards and "x.stride(1) == s0" in guards


def test_explain_shows_symbols_and_shape_guards():
    report = dl.explain(lambda x: x.view(x.shape[0] // 2, -1), dynamic=True)(dl.randn(6, 4))
    text = str(report)
    assert "s0 = x.size(0)" in text and "s0 >= 2" in text


# -- random programs with dynamic=True --------------------------------------------------
STEPS = {
    "linear": lambda t, w: t @ w + 1.0,
    "gelu": lambda t, w: dl.nn.functional.gelu(t),
    "softmax": lambda t, w: dl.softmax(t, dim=-1),
    "layer_norm": lambda t, w: dl.nn.functional.layer_norm(t, (t.shape[-1],)),
    "flatten_back": lambda t, w: t.reshape(-1).view(t.shape[0], -1),
    "row_sum": lambda t, w: t - t.sum(dim=1, keepdim=True) / t.shape[1],
    "halve_rows": lambda t, w: t[: max(t.shape[0] // 2, 1)].repeat(2, 1)[: t.shape[0]],
    "transpose_twice": lambda t, w: t.t().contiguous().t() * 0.5,
    "cat": lambda t, w: dl.cat([t, t], dim=0)[t.shape[0]:],
}


@settings(max_examples=25, deadline=None)
@given(
    steps=st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=5),
    shapes=st.lists(st.tuples(st.integers(0, 9), st.integers(1, 6)), min_size=2, max_size=4),
    backend=st.sampled_from(compiled_backends()),
)
def test_random_programs_with_dynamic_true_match_eager(steps, shapes, backend):
    dl.reset()

    def program(x, w):
        t = x
        for name in steps:
            t = STEPS[name](t, w)
        return t, t.shape[0]

    compiled = dl.compile(program, dynamic=True, backend=backend)
    rng = np.random.default_rng(len(steps))
    for rows, cols in shapes:
        x = dl.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
        w = dl.from_numpy(rng.standard_normal((cols, cols)).astype(np.float32))
        expected, expected_exc = run_capturing(program, x, w)
        actual, actual_exc = run_capturing(compiled, x, w)
        assert type(actual_exc) is type(expected_exc), (actual_exc, expected_exc)
        if expected_exc is None:
            assert_equal_values(actual, expected, rtol=1e-4, atol=1e-4)
    assert dl.stats().fallbacks == ()


# -- backends that compile for static shapes ----------------------------------------------
def test_static_backend_gets_one_static_graph_per_shape():
    seen = []

    def static_backend(gm, example_inputs):
        placeholder = next(n for n in gm.graph.nodes if n.op == "placeholder")
        seen.append(tuple(placeholder.meta["val"].shape))
        assert not any(n.target is sym_size for n in gm.graph.nodes)
        return gm.forward

    def f(x):
        return x.view(x.shape[0] // 2, -1) * 2, x.shape[0]

    compiled = dl.compile(f, dynamic=True, backend=static_backend)
    for n in [4, 6, 4, 8]:
        x = dl.randn(n, 3)
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 1
    assert seen == [(4, 3), (6, 3), (8, 3)]


def test_cupy_kernels_run_a_symbolic_graph_per_shape():
    from dynamo_lite.backends import registry
    from dynamo_lite.backends.cupy import CupyBackend
    from dynamo_lite.backends.cupy.emulation import HostEmulationRuntime, compiler

    if compiler() is None:
        pytest.skip("no host C++ compiler to emulate CUDA kernels")
    backend = CupyBackend(HostEmulationRuntime, device_type="cpu")

    def f(x, y):
        return (x * y + 1).relu().sum(-1)

    compiled = dl.compile(f, dynamic=True, backend=backend)
    for n in [3, 5, 3]:
        x, y = dl.randn(n, 4), dl.randn(4)
        assert_equal_values(compiled(x, y), f(x, y), rtol=1e-5, atol=1e-5)
    assert dl.stats().frames_compiled == 1


def test_numpy_backend_runs_a_dynamic_graph_past_its_signature_limit():
    from dynamo_lite.backends.numpy import MAX_SIGNATURES

    def f(x):
        return (x * 2 + 1).sum(-1)

    compiled = dl.compile(f, dynamic=True, backend="numpy")
    sizes = list(range(2, MAX_SIGNATURES + 6)) + [2, 3]
    for n in sizes:
        x = dl.randn(n, 5)
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 1
    gm = _graph_entries(f)[0].report.graphs[0]
    assert gm.backend_code.startswith("# numpy backend: 1 pointwise groups")


def test_cupy_pointwise_kernel_takes_sizes_as_arguments():
    from dynamo_lite.backends.cupy import CupyBackend
    from dynamo_lite.backends.cupy.emulation import HostEmulationRuntime, compiler

    if compiler() is None:
        pytest.skip("no host C++ compiler to emulate CUDA kernels")
    backend = CupyBackend(HostEmulationRuntime, device_type="cpu")

    def f(x, y):
        return (x * y + 1).relu()

    compiled = dl.compile(f, dynamic=True, backend=backend)
    kernels_loaded = []
    for n in [3, 5, 9]:
        x, y = dl.randn(n, 4), dl.randn(4)
        assert_equal_values(compiled(x, y), f(x, y))
        kernels_loaded.append(len(backend.runtime._functions))
    assert kernels_loaded == [1, 1, 1]  # one compiled kernel, new size arguments per shape
    assert dl.stats().frames_compiled == 1


@pytest.mark.parametrize("backend", compiled_backends())
def test_int_passed_to_a_resume_function_stays_symbolic(backend, capsys):
    model = models.make_gpt()
    base = models.gpt_inputs()[0]

    def f(idx):
        x = model(idx)[0]
        n = idx.shape[1]
        print("length", n)  # a graph break: the resume function receives x and the int n
        return x * 2 + n, x.view(n, -1, x.shape[-1]).sum(0) / n

    compiled = dl.compile(f, backend=backend)
    with dl.no_grad():
        for length in SEQ_LENGTHS:
            idx = base[:, :length].contiguous()
            actual = compiled(idx)
            assert capsys.readouterr().out == f"length {length}\n"
            assert_equal_values(actual, f(idx), rtol=1e-4, atol=1e-5)
            capsys.readouterr()
    stats = dl.stats()
    assert stats.frames_compiled == 4 and stats.fallbacks == ()  # f and its resume function, twice each
    failures = [str(g) for g in stats.guard_failures]
    assert len(failures) == 2 and all(g.endswith(".shape[1]: expected 32, got 31") for g in failures), failures
    resume_code = _graph_entries(f)[0].report.resume_codes[0][0]
    dynamic_resume = _graph_entries(resume_code)[0]
    gm = dynamic_resume.report.graphs[0]
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    assert [n.name for n in placeholders] == ["x"]  # n is x.size(1): read from x, not passed
    guards = dynamic_resume.report.guards
    assert "type(n) is int" in guards and "s1 == s0" in guards and "n ==" not in guards, guards
    if backend == "numpy":
        assert "runs eagerly" not in gm.backend_code


@pytest.mark.parametrize("backend", compiled_backends())
def test_int_argument_becomes_a_symbolic_graph_input_once_it_changes(backend):
    def f(x, k):
        return (x * k + k // 2).view(k, -1).sum(0)

    compiled = dl.compile(f, backend=backend)
    for k in [4, 6, 8, 2, 12, 6]:
        x = dl.randn(24)
        assert_equal_values(compiled(x, k), f(x, k))
    stats = dl.stats()
    assert stats.frames_compiled == 2 and stats.fallbacks == ()
    assert [str(g).split(".")[-1] for g in stats.guard_failures] == ["f: k: expected 4, got 6"]
    gm = _graph_entries(f)[0].report.graphs[0]
    ints = [n.name for n in gm.graph.nodes if n.op == "placeholder" and type(n.meta["val"]) is SymInt]
    assert ints == ["k"]
    if backend == "numpy":
        assert "runs eagerly" not in gm.backend_code
    assert compiled(dl.randn(24), 1).shape == (24,)  # 1 is specialized: a third entry
    assert dl.stats().frames_compiled == 3


def test_dynamic_false_keeps_ints_static():
    def f(x, k):
        return x * k

    compiled = dl.compile(f, dynamic=False, backend="eager")
    for k in [2, 3, 4]:
        compiled(dl.ones(2), k)
    assert dl.stats().frames_compiled == 3


def test_batch_equal_to_sequence_length_needs_no_recompile():
    model = models.make_gpt()
    base = models.gpt_inputs()[0]
    compiled = dl.compile(model, dynamic=True, backend="eager")
    with dl.no_grad():
        for batch, length in [(4, 32), (3, 3), (5, 5), (2, 9)]:
            idx = base[:1, :length].contiguous().expand(batch, length).contiguous()
            assert_equal_values(compiled(idx), model(idx), rtol=1e-4, atol=1e-5)
    assert dl.stats().frames_compiled == 1 and dl.stats().guard_failures == ()
    guards = _graph_entries(model.forward)[0].report.guards
    assert "!=" not in guards.splitlines()[-1]
